variable "project_id" {
  description = "The project to deploy into. Needs the Cloud Functions, Cloud Build, Cloud Run, Artifact Registry and Secret Manager APIs enabled."
  type        = string
}

variable "region" {
  description = "Region of the function and its source bucket."
  type        = string
}

variable "name" {
  description = "Name of the function (and of its Cloud Run service) and prefix of the other resources."
  type        = string
  default     = "fngate"
}

variable "source_zip" {
  description = "Path to the upload built by `make package-gcf` (build/gcf-source.zip)."
  type        = string
}

variable "source_bucket" {
  description = "An existing bucket for the source upload; null creates <project_id>-<name>-source."
  type        = string
  default     = null
}

variable "public" {
  description = "Let allUsers invoke the function. The gateway then refuses to start without client keys or `auth: none` in the config."
  type        = bool
  default     = false
}

variable "invoker_members" {
  description = "IAM members allowed to invoke a non-public function (roles/run.invoker), e.g. serviceAccount:app@p.iam.gserviceaccount.com."
  type        = list(string)
  default     = []
}

variable "config_yaml" {
  description = "The gateway config as YAML. Stored as a Secret Manager secret and mounted at /etc/fngate/fngate.yaml; each change adds a version and rolls out a new revision. Null: the embedded default catalog."
  type        = string
  default     = null
}

variable "secret_ids" {
  description = "Secret Manager secret ids (in project_id) the config references as gcp-sm://...; the function's service account may access these."
  type        = list(string)
  default     = []
}

variable "secret_env" {
  description = "Environment variables filled from Secret Manager at start-up, for ${ENV} references in the config: NAME => secret id (latest version)."
  type        = map(string)
  default     = {}
}

variable "environment" {
  description = "Extra plain environment variables (never secret values)."
  type        = map(string)
  default     = {}
}

variable "max_instance_request_concurrency" {
  description = "Requests one instance serves at once (gen2 allows up to 1000). Streams mostly wait on the upstream, so dozens per vCPU is reasonable."
  type        = number
  default     = 80

  validation {
    condition     = var.max_instance_request_concurrency >= 1 && var.max_instance_request_concurrency <= 1000
    error_message = "max_instance_request_concurrency must be between 1 and 1000."
  }
}

variable "available_cpu" {
  description = "vCPUs per instance; concurrency above 1 needs at least 1."
  type        = string
  default     = "1"
}

variable "available_memory" {
  description = "Memory per instance."
  type        = string
  default     = "512Mi"
}

variable "min_instance_count" {
  description = "Instances kept warm (0 scales to zero)."
  type        = number
  default     = 0
}

variable "max_instance_count" {
  description = "Upper bound on instances."
  type        = number
  default     = 100
}

variable "timeout_seconds" {
  description = "Request time limit in seconds (HTTP functions allow up to 3600); a longer stream is cut."
  type        = number
  default     = 900

  validation {
    condition     = var.timeout_seconds >= 1 && var.timeout_seconds <= 3600
    error_message = "timeout_seconds must be between 1 and 3600."
  }
}

variable "build_service_account" {
  description = "Service account Cloud Build uses to build the function (full resource name); null for the project default."
  type        = string
  default     = null
}

variable "labels" {
  description = "Labels for the function and the buckets and secrets created here."
  type        = map(string)
  default     = {}
}

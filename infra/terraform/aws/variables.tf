variable "name" {
  description = "Name of the function, its role and its log group (/aws/lambda/<name>)."
  type        = string
  default     = "fngate"
}

variable "package_zip" {
  description = "Path to the deployment package built by `make package` (build/gateway.zip): bootstrap at the root, and fngate.yaml when built with CONFIG=."
  type        = string
}

variable "url_auth_type" {
  description = "Function URL auth: AWS_IAM (callers sign with SigV4; leave client keys out of the config) or NONE (public; the gateway refuses to start without client keys or `auth: none`)."
  type        = string
  default     = "AWS_IAM"

  validation {
    condition     = contains(["AWS_IAM", "NONE"], var.url_auth_type)
    error_message = "url_auth_type must be AWS_IAM or NONE."
  }
}

variable "config_yaml" {
  description = "The gateway config as YAML, passed in FNGATE_CONFIG_YAML (Lambda allows 4 KB of environment in all). Null: the config in the package, else the embedded default. Secrets go in as aws-sm:// references."
  type        = string
  default     = null
}

variable "config_path" {
  description = "A config file inside the package (FNGATE_CONFIG), relative to its root. Null: fngate.yaml when packaged."
  type        = string
  default     = null
}

variable "secret_arns" {
  description = "ARNs of the Secrets Manager secrets the config references; the function may read these and nothing else."
  type        = list(string)
  default     = []
}

variable "secrets_kms_key_arn" {
  description = "Customer managed KMS key encrypting those secrets, if any."
  type        = string
  default     = null
}

variable "memory_size" {
  description = "Memory in MB; CPU share grows with it."
  type        = number
  default     = 512
}

variable "timeout" {
  description = "Invoke time limit in seconds (at most 900). A stream is ended in-band a second before it."
  type        = number
  default     = 900

  validation {
    condition     = var.timeout >= 10 && var.timeout <= 900
    error_message = "timeout must be between 10 and 900 seconds."
  }
}

variable "reserved_concurrency" {
  description = "Reserved concurrent executions (a cap on simultaneous streams); null for the account pool."
  type        = number
  default     = null
}

variable "log_retention_days" {
  description = "How long CloudWatch keeps the request and attempt logs."
  type        = number
  default     = 30
}

variable "environment" {
  description = "Extra environment variables, for ${ENV} references in the config (never secret values)."
  type        = map(string)
  default     = {}
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}

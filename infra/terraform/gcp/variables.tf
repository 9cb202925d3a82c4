variable "project_id" {
  description = "The project to deploy into. Needs the Cloud Functions, Cloud Build, Cloud Run, Artifact Registry and Secret Manager APIs enabled."
  type        = string
}

variable "region" {
  description = "Region of the function and its source bucket."
  type        = string
}

variable "name" {
  description = "Name of the function (and of its Cloud Run service) and prefix of the other resources. 6 to 20 characters: service account ids (<name>-remediate, <name>-eventarc) are limited to 30."
  type        = string
  default     = "fngate"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{5,19}$", var.name))
    error_message = "name must be 6 to 20 lowercase letters, digits or hyphens, starting with a letter."
  }
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
  description = "Environment variables filled from Secret Manager at start-up, for $${ENV} references in the config: NAME => secret id (latest version)."
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
  description = "vCPUs per instance; concurrency above 1 needs at least 1. At the default concurrency, 1 is the size measured (docs/cost.md); with max_instance_request_concurrency = 1, 0.333 is the cheapest within 10% of 1 vCPU's added latency."
  type        = string
  default     = "1"
}

variable "available_memory" {
  description = "Memory per instance. 250 open streams peaked at 73 MB and 1,000 at about 100 MB (docs/cost.md), so 512Mi leaves room at any concurrency the module allows."
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

variable "remediation_source_zip" {
  description = "Path to the remediation function's upload built by `make package-gcf-remediation` (build/gcf-remediation-source.zip)."
  type        = string
}

variable "remediation_mode" {
  description = "Self-repair mode (REMEDIATION_MODE): dry_run logs and counts what it would change and writes no route state; apply changes routes. Switch to apply after reading the dry-run plans; back to dry_run to stop all changes."
  type        = string
  default     = "dry_run"

  validation {
    condition     = contains(["dry_run", "apply"], var.remediation_mode)
    error_message = "remediation_mode must be dry_run or apply."
  }
}

variable "remediation_burst_errors" {
  description = "Transient errors on one route within remediation_burst_window that cool it (REMEDIATION_BURST_ERRORS)."
  type        = number
  default     = 5

  validation {
    condition     = var.remediation_burst_errors >= 1 && floor(var.remediation_burst_errors) == var.remediation_burst_errors
    error_message = "remediation_burst_errors must be a whole number, at least 1."
  }
}

variable "remediation_burst_window" {
  description = "The burst's window as a Go duration (REMEDIATION_BURST_WINDOW)."
  type        = string
  default     = "1m"
}

variable "remediation_cooldown" {
  description = "How long a burst cools a route, as a Go duration (REMEDIATION_COOLDOWN)."
  type        = string
  default     = "5m"
}

variable "remediation_max_instances" {
  description = "Upper bound on remediation function instances; beyond it Pub/Sub backs off and redelivers."
  type        = number
  default     = 10
}

variable "firestore_database" {
  description = "An existing Firestore database (native mode) for route state. Null creates <name>-routestate."
  type        = string
  default     = null
}

variable "firestore_location" {
  description = "Location of the Firestore database the module creates; null means region."
  type        = string
  default     = null
}

variable "responses_database" {
  description = "An existing Firestore database (native mode) for stored responses. Null creates <name>-responses. The gateway may read and write all of it: do not name the route-state database."
  type        = string
  default     = null
}

variable "responses_collection" {
  description = "The collection of stored responses (RESPONSES_COLLECTION)."
  type        = string
  default     = "fngate_responses"

  validation {
    condition     = can(regex("^[^/]+$", var.responses_collection))
    error_message = "responses_collection must be a collection id, without '/'."
  }
}

variable "cache_database" {
  description = "An existing Firestore database (native mode) for the response cache. Null creates <name>-cache. The gateway may read and write all of it: do not name the route-state database."
  type        = string
  default     = null
}

variable "cache_collection" {
  description = "The response cache's collection (CACHE_COLLECTION)."
  type        = string
  default     = "fngate_cache"

  validation {
    condition     = can(regex("^[^/]+$", var.cache_collection))
    error_message = "cache_collection must be a collection id, without '/'."
  }
}

variable "route_state_prefix" {
  description = "Prefix of the route-state collections (ROUTE_STATE_PREFIX): <prefix>routes, windows, claims, actions."
  type        = string
  default     = "fngate_"
}

variable "remediation_incident_cooldown" {
  description = "How long an open Service Health incident for Vertex AI cools the routes in its location, renewed by the incident's updates and ended by its resolution (REMEDIATION_INCIDENT_COOLDOWN, a Go duration)."
  type        = string
  default     = "1h"
}

variable "remediation_burst_alarm_threshold" {
  description = "The unexplained-bursts alert fires when more than this many error bursts that no open provider incident explains happen within 5 minutes."
  type        = number
  default     = 0
}

variable "incident_notification_channels" {
  description = "Cloud Monitoring notification channel ids notified when bursts come with an open provider incident (the provider's to fix; for awareness)."
  type        = list(string)
  default     = []
}

variable "remediation_alarm_threshold" {
  description = "The alert fires when more than this many remediation actions (in the current mode) happen within 5 minutes."
  type        = number
  default     = 10
}

variable "alert_notification_channels" {
  description = "Cloud Monitoring notification channel ids notified by the actions alert and the unexplained-bursts alert (what on-call fixes)."
  type        = list(string)
  default     = []
}

variable "counters_database" {
  description = "An existing Firestore database (native mode) for the keys' rate-limit and budget counters. Null creates <name>-counters."
  type        = string
  default     = null
}

variable "counters_prefix" {
  description = "Prefix of the counters collection (COUNTERS_PREFIX): <prefix>counters."
  type        = string
  default     = "fngate_"
}

variable "keys_database" {
  description = "An existing Firestore database (native mode) for the key store. Null creates <name>-keys. The control plane may read and write all of it and the gateway read it: do not name the route-state database."
  type        = string
  default     = null
}

variable "keys_collection" {
  description = "The key store's collection (KEYS_COLLECTION); its hash and name claims and its audit log live in <collection>_hashes, _names and _audit."
  type        = string
  default     = "fngate_keys"

  validation {
    condition     = can(regex("^[^/]+$", var.keys_collection))
    error_message = "keys_collection must be a collection id, without '/'."
  }
}

variable "keys_deletion_protection" {
  description = "Firestore delete protection on the keys database the module creates: deleting it revokes every stored key and loses the audit log."
  type        = bool
  default     = true
}

variable "control_plane" {
  description = "Deploy the control plane (the admin API and the console) as a function of its own; it needs control_plane_source_zip. false leaves it out: the key store stays, and the gateway serves its keys either way."
  type        = bool
  default     = true
}

variable "control_plane_source_zip" {
  description = "Path to the control plane's upload built by `make package-gcf-controlplane` (build/gcf-controlplane-source.zip). Required when control_plane is true."
  type        = string
  default     = null
}

variable "control_plane_secret_ids" {
  description = "Secret Manager secret ids (in project_id) only the control plane reads: the admin section's gcp-sm:// references (session_key, oidc.client_secret). It also reads the gateway's secrets, since it loads the same config."
  type        = list(string)
  default     = []
}

variable "control_plane_invoker_members" {
  description = "Who may invoke the control plane (roles/run.invoker). allUsers by default: the console is for browsers and the admin API authenticates every call itself; narrow it where an organisation policy forbids allUsers."
  type        = list(string)
  default     = ["allUsers"]
}

variable "control_plane_max_instances" {
  description = "Upper bound on control-plane instances."
  type        = number
  default     = 10
}

variable "stored_keys" {
  description = "Let the gateway serve the keys the control plane issues (KEYS_PROJECT, _DATABASE, _COLLECTION, and read on the keys database). With them every request needs a key: a private function's callers then send their ID token in X-Serverless-Authorization and the key in Authorization. Null: when public."
  type        = bool
  default     = null
}

variable "model_armor" {
  description = "The config has kind: model-armor guardrails: enable modelarmor.googleapis.com and let the gateway sanitize with and read the project's Model Armor templates (roles/modelarmor.user, roles/modelarmor.viewer). A template in another project needs the same two roles granted there."
  type        = bool
  default     = false
}

variable "mcp_secret_ids" {
  description = "Secret Manager secret ids (in project_id) the config's mcp_servers reference (gcp-sm:// in an upstream's headers, bearer_token or oauth.client_secret); the gateway may read these. Only the gateway: the control plane never calls an MCP server. A secret in another project needs roles/secretmanager.secretAccessor granted there."
  type        = list(string)
  default     = []

  validation {
    # An id, not projects/P/secrets/S: the grant is made in project_id.
    condition     = alltrue([for id in var.mcp_secret_ids : can(regex("^[A-Za-z0-9_-]{1,255}$", id))])
    error_message = "mcp_secret_ids must be secret ids (letters, digits, _ and -), not resource names."
  }
}

variable "mcp_sessions" {
  description = "Keep MCP sessions (the MCP protocol versions before 2026-07-28 open one with initialize) in the fngate_mcp_sessions collection of the responses database, with a TTL policy on expires_at, so that any instance continues a session another one opened (FNGATE_MCP_SESSIONS_PROJECT, _DATABASE, _COLLECTION). false: no TTL policy and no environment, for a config whose mcp_sessions names a store of its own."
  type        = bool
  default     = true
}

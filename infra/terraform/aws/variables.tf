variable "name" {
  description = "Name of the function, its role and its log group (/aws/lambda/<name>)."
  type        = string
  default     = "fngate"
}

variable "package_zip" {
  description = "Path to the deployment package built by `make package` (build/gateway.zip): bootstrap at the root, and fngate.yaml when built with CONFIG= (which also builds in the optional features that config names: Vertex, OpenTelemetry export, MCP, Bedrock guardrails; a config_yaml needs them named, make package LAMBDA_TAGS=lambda.norpc,otel)."
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

variable "guardrail_arns" {
  description = "ARNs of the Amazon Bedrock guardrails the config's kind: bedrock guardrails use (arn:aws:bedrock:REGION:ACCOUNT:guardrail/ID); the gateway may call ApplyGuardrail on these, any version, and nothing else. A guardrail with cross-Region inference also needs its profile's ARN in each destination Region (arn:aws:bedrock:REGION:ACCOUNT:guardrail-profile/PROFILE_ID)."
  type        = list(string)
  default     = []

  validation {
    # The shapes are Bedrock's own (GuardrailCrossRegionDetails and ApplyGuardrail's
    # guardrailIdentifier in the Bedrock API Reference); a bare id grants nothing.
    condition     = alltrue([for arn in var.guardrail_arns : can(regex("^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]+:[0-9]{12}:(guardrail/[a-z0-9]+|guardrail-profile/[a-z0-9-]+[.]guardrail[.]v[0-9:]+)$", arn))])
    error_message = "guardrail_arns must be guardrail ARNs (arn:aws:bedrock:REGION:ACCOUNT:guardrail/ID) or guardrail profile ARNs (arn:aws:bedrock:REGION:ACCOUNT:guardrail-profile/PROFILE_ID), not ids."
  }
}

variable "memory_size" {
  description = "The gateway function's memory in MB, which sets its CPU share (memory / 1,769 MB of a vCPU) and its price per millisecond. The default is the cheapest size whose added latency stays within 10% of 1,024 MB's in the measured table (docs/cost.md)."
  type        = number
  default     = 256

  validation {
    condition     = var.memory_size >= 128 && var.memory_size <= 10240
    error_message = "memory_size must be between 128 and 10240 MB."
  }
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
  description = "Extra environment variables, for $${ENV} references in the config (never secret values)."
  type        = map(string)
  default     = {}
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}

variable "remediation_package_zip" {
  description = "Path to the remediation function's package built by `make package-remediation` (build/remediation.zip): bootstrap at the root."
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

variable "error_delivery" {
  description = "How provider errors reach the remediation function: eventbridge (the gateway publishes them to a bus of this module; fast, best effort) or cloudwatch_logs (a subscription filter on the gateway's log group; every logged error, seconds later). Exactly one path is wired."
  type        = string
  default     = "eventbridge"

  validation {
    condition     = contains(["eventbridge", "cloudwatch_logs"], var.error_delivery)
    error_message = "error_delivery must be eventbridge or cloudwatch_logs."
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

variable "remediation_incident_cooldown" {
  description = "How long an open AWS Health incident for Bedrock cools the routes in its region, renewed by the incident's updates and ended by its resolution (REMEDIATION_INCIDENT_COOLDOWN, a Go duration)."
  type        = string
  default     = "1h"
}

variable "remediation_burst_alarm_threshold" {
  description = "The unexplained-bursts alarm fires when more than this many error bursts that no open provider incident explains happen within 5 minutes."
  type        = number
  default     = 0
}

variable "incident_alarm_actions" {
  description = "ARNs notified when bursts come with an open provider incident (the provider's to fix; for awareness)."
  type        = list(string)
  default     = []
}

variable "remediation_alarm_threshold" {
  description = "The alarm fires when more than this many remediation actions (in the current mode) happen within 5 minutes."
  type        = number
  default     = 10
}

variable "alarm_actions" {
  description = "ARNs (SNS topics) notified when the actions alarm or the unexplained-bursts alarm fires (what on-call fixes)."
  type        = list(string)
  default     = []
}

variable "control_plane" {
  description = "Deploy the control plane (the admin API and the console) as a function of its own with a public URL; it needs control_plane_package_zip. false leaves it out: the key store stays, and the gateway serves its keys either way."
  type        = bool
  default     = true
}

variable "control_plane_package_zip" {
  description = "Path to the control plane's package built by `make package-controlplane` (build/controlplane.zip): bootstrap at the root, and fngate.yaml when built with CONFIG= (the gateway's config). Required when control_plane is true."
  type        = string
  default     = null
}

variable "control_plane_secret_arns" {
  description = "ARNs of the Secrets Manager secrets only the control plane reads: the admin section's aws-sm:// references (session_key, oidc.client_secret). It also reads secret_arns, since it loads the gateway's config; the gateway never reads these."
  type        = list(string)
  default     = []
}

variable "keys_deletion_protection" {
  description = "DynamoDB deletion protection on the key store: deleting the table revokes every stored key and loses the audit log. Set false before a destroy that should take it."
  type        = bool
  default     = true
}

variable "mcp_secret_arns" {
  description = "ARNs of the Secrets Manager secrets the config's mcp_servers reference (aws-sm:// in an upstream's headers, bearer_token or oauth.client_secret). Only the gateway may read these: the control plane never calls an MCP server. A trailing -?????? wildcard matches the ARN's random suffix."
  type        = list(string)
  default     = []

  validation {
    # A name (what an aws-sm:// reference holds) grants nothing: IAM matches ARNs.
    condition     = alltrue([for arn in var.mcp_secret_arns : can(regex("^arn:aws(-[a-z]+)*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@?*-]+$", arn))])
    error_message = "mcp_secret_arns must be Secrets Manager secret ARNs (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME-??????), not names."
  }
}

variable "mcp_sessions" {
  description = "Create the table of MCP sessions (FNGATE_MCP_SESSIONS_TABLE), which the MCP protocol versions before 2026-07-28 open with initialize, so that any instance continues a session another one opened. false: no table, no grant and no FNGATE_MCP_SESSIONS_TABLE, for a config whose mcp_sessions names a store of its own."
  type        = bool
  default     = true
}

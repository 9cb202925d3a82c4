locals {
  bucket      = var.source_bucket != null ? var.source_bucket : google_storage_bucket.source[0].name
  has_config  = var.config_yaml != null
  config_path = "/etc/fngate/fngate.yaml"
  # Spelled out rather than read from the secret resource, so for_each below is known at plan.
  config_secret = "${var.name}-config"
  # Every secret the function reads: the config and what the config and environment use.
  readable_secrets = toset(concat(
    var.secret_ids,
    values(var.secret_env),
    local.has_config ? [local.config_secret] : [],
  ))
  # The gateway's alone: the control plane reads readable_secrets, and never calls an MCP
  # server. One set, so a secret listed in both variables is bound once (a second identical
  # binding would remove the first's when destroyed).
  gateway_secrets = setunion(local.readable_secrets, toset(var.mcp_secret_ids))
  environment = merge(
    var.environment,
    { FNGATE_INVOKER_AUTH = var.public ? "PUBLIC" : "IAM" },
    local.has_config ? { FNGATE_CONFIG = local.config_path } : {},
    local.route_state_env,
    local.counters_env,
    local.responses_env,
    local.cache_env,
    local.gateway_stored_keys ? local.keys_env : {},
    local.mcp_sessions_env,
    # Where this function runs, in a deployment across regions (regions.tf).
    local.multi_region ? local.region_environment[var.region] : {},
  )
}

resource "google_service_account" "gateway" {
  project      = var.project_id
  account_id   = var.name
  display_name = "fngate gateway function"
}

resource "google_storage_bucket" "source" {
  count                       = var.source_bucket == null ? 1 : 0
  project                     = var.project_id
  name                        = "${var.project_id}-${var.name}-source"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  labels                      = var.labels
}

# The object name carries the content hash, so a new upload changes the function's source
# and Terraform rolls out a new build.
resource "google_storage_bucket_object" "source" {
  bucket = local.bucket
  name   = "${var.name}/source-${filemd5(var.source_zip)}.zip"
  source = var.source_zip
}

resource "google_secret_manager_secret" "config" {
  count     = local.has_config ? 1 : 0
  project   = var.project_id
  secret_id = local.config_secret
  labels    = var.labels

  replication {
    auto {}
  }
}

resource "google_secret_manager_secret_version" "config" {
  count       = local.has_config ? 1 : 0
  secret      = google_secret_manager_secret.config[0].id
  secret_data = var.config_yaml
}

resource "google_secret_manager_secret_iam_member" "gateway" {
  for_each  = local.gateway_secrets
  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.gateway.member

  depends_on = [google_secret_manager_secret.config]
}

resource "google_cloudfunctions2_function" "gateway" {
  project     = var.project_id
  location    = var.region
  name        = var.name
  description = "fngate OpenAI-compatible gateway"
  labels      = var.labels

  build_config {
    runtime = "go125"
    # The upload's root package imports functions/gcf, whose init registers Gateway. The Go
    # buildpack ignores GOOGLE_FUNCTION_SOURCE, so the upload is built to need none.
    entry_point     = "Gateway"
    service_account = var.build_service_account

    source {
      storage_source {
        bucket = local.bucket
        object = google_storage_bucket_object.source.name
      }
    }
  }

  service_config {
    available_memory                 = var.available_memory
    available_cpu                    = var.available_cpu
    max_instance_request_concurrency = var.max_instance_request_concurrency
    min_instance_count               = var.min_instance_count
    max_instance_count               = var.max_instance_count
    timeout_seconds                  = var.timeout_seconds
    service_account_email            = google_service_account.gateway.email
    ingress_settings                 = "ALLOW_ALL"
    all_traffic_on_latest_revision   = true
    environment_variables            = local.environment

    dynamic "secret_environment_variables" {
      for_each = var.secret_env
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }

    # The config is a file from Secret Manager, pinned to the version this apply wrote.
    dynamic "secret_volumes" {
      for_each = local.has_config ? [1] : []
      content {
        mount_path = dirname(local.config_path)
        project_id = var.project_id
        secret     = google_secret_manager_secret.config[0].secret_id
        versions {
          version = google_secret_manager_secret_version.config[0].version
          path    = basename(local.config_path)
        }
      }
    }
  }

  # Cloud Run checks secret access when the revision deploys; the route-state cache and the
  # counters use Firestore from the first request on, stored responses are written from the
  # first response with store: true, the cache from the first request that opts in, and a
  # Model Armor guardrail from the first request it covers.
  depends_on = [google_secret_manager_secret_iam_member.gateway, google_project_iam_member.gateway_route_state, google_project_iam_member.gateway_counters, google_project_iam_member.gateway_responses, google_project_iam_member.gateway_cache, google_project_iam_member.gateway_keys,
  google_project_iam_member.gateway_model_armor_user, google_project_iam_member.gateway_model_armor_viewer, google_project_service.model_armor]
}

# Gen2 functions are Cloud Run services: invoking one takes roles/run.invoker on the service.
resource "google_cloud_run_service_iam_member" "invoker" {
  for_each = toset(var.public ? ["allUsers"] : var.invoker_members)
  project  = var.project_id
  location = google_cloudfunctions2_function.gateway.location
  service  = google_cloudfunctions2_function.gateway.name
  role     = "roles/run.invoker"
  member   = each.value
}

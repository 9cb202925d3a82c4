# The control plane (docs/deploy.md, "Key store and control plane"): the admin API under
# /admin/v1/ and the console at /console, in a function of its own, invoked by anyone (the
# admin API authenticates every call itself), so the gateway's upload and cold start carry
# none of it and /admin/v1/ is never reachable on the gateway's URL. control_plane = false
# leaves it all out; the key store stays, and the gateway serves its keys either way.

locals {
  control_plane      = var.control_plane ? 1 : 0
  control_plane_name = "${var.name}-controlplane"
  # The gateway's config (its admin section is the control plane's) and the stores: keys
  # read and written, usage read, route state read and written (cool, restore).
  control_plane_env = merge(local.inventory_env, local.keys_env, local.counters_env, local.route_state_env)
  # It loads the gateway's config, so it reads the same secrets, and the admin section's
  # own (session key, OIDC client secret), which the gateway never reads.
  control_plane_secrets = var.control_plane ? setunion(local.readable_secrets, var.control_plane_secret_ids) : toset([])
}

resource "google_service_account" "control_plane" {
  count        = local.control_plane
  project      = var.project_id
  account_id   = "${var.name}-admin"
  display_name = "fngate control plane"
}

resource "google_project_iam_member" "control_plane_keys" {
  count   = local.control_plane
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.control_plane[0].member

  condition {
    title      = "${var.name} keys (read and write)"
    expression = local.keys_condition
  }
}

# Usage: the counters' current windows and the per-day history beside them, read only.
resource "google_project_iam_member" "control_plane_counters" {
  count   = local.control_plane
  project = var.project_id
  role    = "roles/datastore.viewer"
  member  = google_service_account.control_plane[0].member

  condition {
    title      = "${var.name} counters (read)"
    expression = "resource.name == \"projects/${var.project_id}/databases/${local.counters_database}\""
  }
}

# Routes cooled and restored by hand, written as the remediation function writes them.
resource "google_project_iam_member" "control_plane_route_state" {
  count   = local.control_plane
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.control_plane[0].member

  condition {
    title      = "${var.name} route state (read and write)"
    expression = local.database_condition
  }
}

resource "google_secret_manager_secret_iam_member" "control_plane" {
  for_each  = local.control_plane_secrets
  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.control_plane[0].member

  depends_on = [google_secret_manager_secret.config]
}

resource "google_storage_bucket_object" "control_plane_source" {
  count  = local.control_plane
  bucket = local.bucket
  name   = "${var.name}/controlplane-source-${filemd5(var.control_plane_source_zip)}.zip"
  source = var.control_plane_source_zip

  lifecycle {
    precondition {
      condition     = var.control_plane_source_zip != null
      error_message = "control_plane is true: build the control plane's upload with `make package-gcf-controlplane` and set control_plane_source_zip (build/gcf-controlplane-source.zip), or set control_plane = false."
    }
  }
}

resource "google_cloudfunctions2_function" "control_plane" {
  count       = local.control_plane
  project     = var.project_id
  location    = var.region
  name        = local.control_plane_name
  description = "fngate control plane (admin API and console)"
  labels      = var.labels

  build_config {
    runtime = "go125"
    # The upload's root package imports functions/controlplane/gcf, whose init registers
    # the function (make package-gcf-controlplane).
    entry_point     = "ControlPlane"
    service_account = var.build_service_account

    source {
      storage_source {
        bucket = local.bucket
        object = google_storage_bucket_object.control_plane_source[0].name
      }
    }
  }

  service_config {
    available_memory                 = "512Mi"
    available_cpu                    = "1"
    max_instance_request_concurrency = 80
    min_instance_count               = 0
    max_instance_count               = var.control_plane_max_instances
    # An admin call is a few store calls and a page render.
    timeout_seconds                = 60
    service_account_email          = google_service_account.control_plane[0].email
    ingress_settings               = "ALLOW_ALL"
    all_traffic_on_latest_revision = true
    environment_variables          = local.control_plane_env

    dynamic "secret_environment_variables" {
      for_each = var.secret_env
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }

    # The gateway's config file, as the gateway mounts it.
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

  depends_on = [google_secret_manager_secret_iam_member.control_plane, google_project_iam_member.control_plane_keys,
  google_project_iam_member.control_plane_counters, google_project_iam_member.control_plane_route_state]
}

# Gen2 functions are Cloud Run services: invoking one takes roles/run.invoker. allUsers by
# default: the console is for browsers, and the admin API authenticates every call itself.
resource "google_cloud_run_service_iam_member" "control_plane_invoker" {
  for_each = toset(var.control_plane ? var.control_plane_invoker_members : [])
  project  = var.project_id
  location = google_cloudfunctions2_function.control_plane[0].location
  service  = google_cloudfunctions2_function.control_plane[0].name
  role     = "roles/run.invoker"
  member   = each.value
}

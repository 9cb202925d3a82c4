# Self-repair (docs/remediation.md): route state in Firestore, the gateway's provider_error
# log lines routed through a log sink and Pub/Sub to the remediation function (an Eventarc
# trigger), a sweep every minute, and a log-based metric with an alert on it.

locals {
  remediation_name = "${var.name}-remediate"
  create_database  = var.firestore_database == null
  database         = local.create_database ? google_firestore_database.route_state[0].name : var.firestore_database
  # The environment both functions read to find route state (functions/gcf, events/eventarc).
  route_state_env = {
    ROUTE_STATE_PROJECT  = var.project_id
    ROUTE_STATE_DATABASE = local.database
    ROUTE_STATE_PREFIX   = var.route_state_prefix
  }
  # The classes remediation acts on (publish.RulePattern on AWS; an infra test keeps them
  # equal). Other lines would only be delivered to be ignored.
  provider_error_filter = join(" AND ", [
    "resource.type=\"cloud_run_revision\"",
    "resource.labels.service_name=\"${google_cloudfunctions2_function.gateway.name}\"",
    "jsonPayload.error_class=(\"rate_limited\" OR \"overloaded\" OR \"unavailable\" OR \"auth\" OR \"not_found\" OR \"unsupported\")",
  ])
  # Personalized Service Health's incidents about Vertex AI (eventarc decodes them;
  # remediation.ServiceHealthLog and ServiceHealthLogFilter, kept equal by an infra test).
  service_health_filter = join(" AND ", [
    "logName=\"projects/${var.project_id}/logs/servicehealth.googleapis.com%2Factivity\"",
    "jsonPayload.category=\"INCIDENT\"",
    "jsonPayload.impactedProducts:\"Vertex\"",
  ])
  # The gateway's config and its plain ${ENV} values, read by the remediation function only
  # for which routes run where (a Vertex AI incident in a location cools the routes there).
  inventory_env = merge(
    var.environment,
    local.has_config ? { FNGATE_CONFIG = local.config_path } : {},
  )
  # Firestore IAM conditions name the database: neither function can touch another one.
  database_condition = "resource.name == \"projects/${var.project_id}/databases/${local.database}\""
}

data "google_project" "this" {
  project_id = var.project_id
}

# ---- Route state ----

resource "google_firestore_database" "route_state" {
  count       = local.create_database ? 1 : 0
  project     = var.project_id
  name        = "${var.name}-routestate"
  location_id = var.firestore_location != null ? var.firestore_location : var.region
  type        = "FIRESTORE_NATIVE"
}

# Delivery claims are remembered for a day, then Firestore deletes them.
resource "google_firestore_field" "claims_ttl" {
  project    = var.project_id
  database   = local.database
  collection = "${var.route_state_prefix}claims"
  field      = "expires"

  ttl_config {}

  # A TTL timestamp grows with time; indexing it would only create a write hotspot.
  index_config {}
}

resource "google_project_iam_member" "gateway_route_state" {
  project = var.project_id
  role    = "roles/datastore.viewer"
  member  = google_service_account.gateway.member

  condition {
    title      = "${var.name} route state (read)"
    expression = local.database_condition
  }
}

# ---- Delivery: log sink -> Pub/Sub -> Eventarc ----

resource "google_pubsub_topic" "provider_errors" {
  project = var.project_id
  name    = "${var.name}-provider-errors"
  labels  = var.labels
}

resource "google_pubsub_topic" "dead_letter" {
  project = var.project_id
  name    = "${var.name}-provider-errors-dead-letter"
  labels  = var.labels
}

# A topic keeps nothing by itself: dead letters wait here to be read or replayed.
resource "google_pubsub_subscription" "dead_letter" {
  project                    = var.project_id
  name                       = "${var.name}-provider-errors-dead-letter"
  topic                      = google_pubsub_topic.dead_letter.id
  message_retention_duration = "604800s"
  ack_deadline_seconds       = 60
  labels                     = var.labels

  expiration_policy {
    ttl = ""
  }
}

# Pub/Sub forwards undeliverable messages with its own service agent.
resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  project = var.project_id
  topic   = google_pubsub_topic.dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}

resource "google_logging_project_sink" "provider_errors" {
  project                = var.project_id
  name                   = "${var.name}-provider-errors"
  destination            = "pubsub.googleapis.com/${google_pubsub_topic.provider_errors.id}"
  filter                 = local.provider_error_filter
  unique_writer_identity = true
}

resource "google_pubsub_topic_iam_member" "sink_publisher" {
  project = var.project_id
  topic   = google_pubsub_topic.provider_errors.name
  role    = "roles/pubsub.publisher"
  member  = google_logging_project_sink.provider_errors.writer_identity
}

# Service Health news about Vertex AI, to the same topic and trigger. Service Health logs
# only where its API is enabled (servicehealth.googleapis.com; docs/remediation.md).
resource "google_logging_project_sink" "service_health" {
  project                = var.project_id
  name                   = "${var.name}-service-health"
  destination            = "pubsub.googleapis.com/${google_pubsub_topic.provider_errors.id}"
  filter                 = local.service_health_filter
  unique_writer_identity = true
}

resource "google_pubsub_topic_iam_member" "service_health_publisher" {
  project = var.project_id
  topic   = google_pubsub_topic.provider_errors.name
  role    = "roles/pubsub.publisher"
  member  = google_logging_project_sink.service_health.writer_identity
}

# ---- The remediation function ----

resource "google_service_account" "remediation" {
  project      = var.project_id
  account_id   = local.remediation_name
  display_name = "fngate remediation function"
}

resource "google_project_iam_member" "remediation_route_state" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.remediation.member

  condition {
    title      = "${var.name} route state (read and write)"
    expression = local.database_condition
  }
}

# The identity Eventarc pushes events with.
resource "google_service_account" "trigger" {
  project      = var.project_id
  account_id   = "${var.name}-eventarc"
  display_name = "fngate remediation trigger"
}

resource "google_project_iam_member" "trigger_event_receiver" {
  project = var.project_id
  role    = "roles/eventarc.eventReceiver"
  member  = google_service_account.trigger.member
}

resource "google_cloud_run_service_iam_member" "trigger_invoker" {
  project  = var.project_id
  location = google_cloudfunctions2_function.remediation.location
  service  = google_cloudfunctions2_function.remediation.name
  role     = "roles/run.invoker"
  member   = google_service_account.trigger.member
}

# The remediation function reads the gateway's config file (its route inventory) and no
# other secret.
resource "google_secret_manager_secret_iam_member" "remediation_config" {
  count     = local.has_config ? 1 : 0
  project   = var.project_id
  secret_id = local.config_secret
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.remediation.member

  depends_on = [google_secret_manager_secret.config]
}

resource "google_storage_bucket_object" "remediation_source" {
  bucket = local.bucket
  name   = "${var.name}/remediation-source-${filemd5(var.remediation_source_zip)}.zip"
  source = var.remediation_source_zip
}

resource "google_cloudfunctions2_function" "remediation" {
  project     = var.project_id
  location    = var.region
  name        = local.remediation_name
  description = "fngate self-repair (route state from provider errors)"
  labels      = var.labels

  build_config {
    runtime = "go125"
    # The upload's root package imports events/eventarc, whose init registers the function
    # (make package-gcf-remediation).
    entry_point     = "FngateRemediate"
    service_account = var.build_service_account

    source {
      storage_source {
        bucket = local.bucket
        object = google_storage_bucket_object.remediation_source.name
      }
    }
  }

  service_config {
    available_memory   = "256Mi"
    timeout_seconds    = 60
    max_instance_count = var.remediation_max_instances
    # Only Eventarc (through Pub/Sub) calls it.
    ingress_settings               = "ALLOW_INTERNAL_ONLY"
    all_traffic_on_latest_revision = true
    service_account_email          = google_service_account.remediation.email
    environment_variables = merge(local.inventory_env, local.route_state_env, {
      REMEDIATION_MODE              = var.remediation_mode
      REMEDIATION_BURST_ERRORS      = tostring(var.remediation_burst_errors)
      REMEDIATION_BURST_WINDOW      = var.remediation_burst_window
      REMEDIATION_COOLDOWN          = var.remediation_cooldown
      REMEDIATION_INCIDENT_COOLDOWN = var.remediation_incident_cooldown
    })

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

  # A store failure returns an error and Pub/Sub redelivers (claims make redelivery safe).
  event_trigger {
    trigger_region        = var.region
    event_type            = "google.cloud.pubsub.topic.v1.messagePublished"
    pubsub_topic          = google_pubsub_topic.provider_errors.id
    retry_policy          = "RETRY_POLICY_RETRY"
    service_account_email = google_service_account.trigger.email
  }

  depends_on = [google_project_iam_member.remediation_route_state, google_project_iam_member.trigger_event_receiver,
  google_secret_manager_secret_iam_member.remediation_config]
}

# ---- The sweep ----

# Re-enables routes whose cooldown ended, through the same topic and trigger.
resource "google_cloud_scheduler_job" "sweep" {
  project   = var.project_id
  region    = var.region
  name      = "${var.name}-sweep"
  schedule  = "* * * * *"
  time_zone = "Etc/UTC"

  pubsub_target {
    topic_name = google_pubsub_topic.provider_errors.id
    data       = base64encode(jsonencode({ fngate = "sweep" }))
  }
}

# ---- Metric and alert ----

resource "google_logging_metric" "remediation_actions" {
  project = var.project_id
  name    = "${var.name}_remediation_actions"
  filter = join(" AND ", [
    "resource.type=\"cloud_run_revision\"",
    "resource.labels.service_name=\"${google_cloudfunctions2_function.remediation.name}\"",
    "jsonPayload.metric=\"RemediationActions\"",
  ])

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "fngate remediation actions"

    labels {
      key         = "action"
      value_type  = "STRING"
      description = "cool, disable, chat_only, enable, clear or rollback"
    }

    labels {
      key         = "mode"
      value_type  = "STRING"
      description = "dry_run or apply"
    }
  }

  label_extractors = {
    action = "EXTRACT(jsonPayload.action)"
    mode   = "EXTRACT(jsonPayload.mode)"
  }
}

# A spike of actions is a provider outage or a threshold cooling everything; the alert
# counts actions in the mode this deployment runs, a provider incident's own left out (the
# incident alert below covers them).
resource "google_monitoring_alert_policy" "remediation_actions" {
  project               = var.project_id
  display_name          = "${var.name}: remediation actions spike"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "more than ${var.remediation_alarm_threshold} remediation actions (${var.remediation_mode}) in 5 minutes"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.remediation_actions.name}\" AND metric.label.mode = \"${var.remediation_mode}\" AND metric.label.action != \"incident_cool\" AND metric.label.action != \"incident_enable\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.remediation_alarm_threshold
      duration        = "0s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "fngate self-repair cooled, disabled or re-enabled many routes at once. Read the remediation function's `remediation` log lines; roll back with `fngate-remediate` (docs/remediation.md)."
  }
}

# Bursts of provider errors, told apart by whether an open provider incident explains them
# (the engine's RemediationBursts line, label correlation): with none, a configuration or
# quota problem is likelier and on-call is paged; with one, the provider is on it.
resource "google_logging_metric" "remediation_bursts" {
  project = var.project_id
  name    = "${var.name}_remediation_bursts"
  filter = join(" AND ", [
    "resource.type=\"cloud_run_revision\"",
    "resource.labels.service_name=\"${google_cloudfunctions2_function.remediation.name}\"",
    "jsonPayload.metric=\"RemediationBursts\"",
  ])

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "fngate error bursts"

    labels {
      key         = "correlation"
      value_type  = "STRING"
      description = "provider_incident (an open provider incident covers the route) or none"
    }

    labels {
      key         = "mode"
      value_type  = "STRING"
      description = "dry_run or apply"
    }
  }

  label_extractors = {
    correlation = "EXTRACT(jsonPayload.correlation)"
    mode        = "EXTRACT(jsonPayload.mode)"
  }
}

locals {
  burst_alerts = {
    unexplained = {
      correlation = "none"
      threshold   = var.remediation_burst_alarm_threshold
      channels    = var.alert_notification_channels
      title       = "error bursts no provider incident explains"
      content     = "Bursts of provider errors with no open provider incident to explain them: likelier a configuration or quota problem (a rotated or revoked key, a quota below the traffic). Yours to fix: read the remediation function's `remediation` lines with `correlation` none (docs/remediation.md)."
    }
    provider-incident = {
      correlation = "provider_incident"
      threshold   = 0
      channels    = var.incident_notification_channels
      title       = "error bursts during a provider incident"
      content     = "Bursts of provider errors during an open Google Cloud Service Health incident. The provider's to fix; the `remediation` lines with `correlation` provider_incident name the incident."
    }
  }
}

resource "google_monitoring_alert_policy" "remediation_bursts" {
  for_each              = local.burst_alerts
  project               = var.project_id
  display_name          = "${var.name}: ${each.value.title}"
  combiner              = "OR"
  notification_channels = each.value.channels

  conditions {
    display_name = "more than ${each.value.threshold} ${each.value.title} (${var.remediation_mode}) in 5 minutes"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.remediation_bursts.name}\" AND metric.label.mode = \"${var.remediation_mode}\" AND metric.label.correlation = \"${each.value.correlation}\""
      comparison      = "COMPARISON_GT"
      threshold_value = each.value.threshold
      duration        = "0s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = each.value.content
  }
}

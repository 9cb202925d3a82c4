# Rate limits and budgets (docs/limits.md): the Firestore database every gateway
# instance counts in, its TTL policy, exactly the access the gateway needs to it, and a
# log-based metric of failed counter calls.

locals {
  create_counters_database = var.counters_database == null
  counters_database        = local.create_counters_database ? google_firestore_database.counters[0].name : var.counters_database
  counters_collection      = "${var.counters_prefix}counters"
  usage_collection         = "${var.counters_prefix}usage"
  # What functions/gcf reads to find the counters (a config without a counters section
  # counts here).
  counters_env = {
    COUNTERS_PROJECT  = var.project_id
    COUNTERS_DATABASE = local.counters_database
    COUNTERS_PREFIX   = var.counters_prefix
  }
}

# A database of its own: the gateway writes here, and only reads route state.
resource "google_firestore_database" "counters" {
  count       = local.create_counters_database ? 1 : 0
  project     = var.project_id
  name        = "${var.name}-counters"
  location_id = var.firestore_location != null ? var.firestore_location : var.region
  type        = "FIRESTORE_NATIVE"
}

# Each key's shards carry the end of their month window; Firestore deletes idle keys after it.
resource "google_firestore_field" "counters_ttl" {
  project    = var.project_id
  database   = local.counters_database
  collection = local.counters_collection
  field      = "expires"

  ttl_config {}

  # A TTL timestamp grows with time; indexing it would only create a write hotspot.
  index_config {}
}

# The counts (c) and windows (w) are only ever read by document id: indexing them would
# write index entries for every counter on every request, and each new minute's field names.
resource "google_firestore_field" "counters_unindexed" {
  for_each   = toset(["c", "w"])
  project    = var.project_id
  database   = local.counters_database
  collection = local.counters_collection
  field      = each.value

  index_config {}
}

# Usage history (counters.History): per key and UTC day, kept 400 days, then deleted by
# Firestore after its expires, in <prefix>usage beside the counters.
resource "google_firestore_field" "usage_ttl" {
  project    = var.project_id
  database   = local.counters_database
  collection = local.usage_collection
  field      = "expires"

  ttl_config {}

  # A TTL timestamp grows with time; indexing it would only create a write hotspot.
  index_config {}
}

# The per-model counts (m) are read by document id only; indexing them would write an index
# entry per model on every request.
resource "google_firestore_field" "usage_unindexed" {
  project    = var.project_id
  database   = local.counters_database
  collection = local.usage_collection
  field      = "m"

  index_config {}

  # Field operations on one collection run one at a time.
  depends_on = [google_firestore_field.usage_ttl]
}

# Read and write documents, in the counters database only.
resource "google_project_iam_member" "gateway_counters" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.gateway.member

  condition {
    title      = "${var.name} counters (read and write)"
    expression = "resource.name == \"projects/${var.project_id}/databases/${local.counters_database}\""
  }
}

# counter_store_error lines (on_store_error: open serves the request uncounted, closed
# refuses it): the Cloud Logging side of the CounterStoreErrors EMF metric on AWS.
resource "google_logging_metric" "counter_store_errors" {
  project = var.project_id
  name    = "${var.name}_counter_store_errors"
  filter = join(" AND ", [
    "resource.type=\"cloud_run_revision\"",
    "resource.labels.service_name=\"${google_cloudfunctions2_function.gateway.name}\"",
    "jsonPayload.message=\"counter_store_error\"",
  ])

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "fngate counter store errors"

    labels {
      key         = "on_store_error"
      value_type  = "STRING"
      description = "open (served uncounted) or closed (refused)"
    }
  }

  label_extractors = {
    on_store_error = "EXTRACT(jsonPayload.on_store_error)"
  }
}

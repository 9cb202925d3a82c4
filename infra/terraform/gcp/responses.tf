# Stored responses (docs/stored-responses.md): POST /v1/responses with store: true keeps
# the response here, so previous_response_id, GET and DELETE /v1/responses/{id} find it.

locals {
  create_responses_database = var.responses_database == null
  responses_database        = local.create_responses_database ? google_firestore_database.responses[0].name : var.responses_database
  # What functions/gcf reads to open the store; the config's responses settings win.
  responses_env = {
    RESPONSES_PROJECT    = var.project_id
    RESPONSES_DATABASE   = local.responses_database
    RESPONSES_COLLECTION = var.responses_collection
  }
}

# A database of its own: Firestore roles stop at a database, so the gateway can write its
# responses here while it only reads route state.
resource "google_firestore_database" "responses" {
  count       = local.create_responses_database ? 1 : 0
  project     = var.project_id
  name        = "${var.name}-responses"
  location_id = var.firestore_location != null ? var.firestore_location : var.region
  type        = "FIRESTORE_NATIVE"
}

# Firestore deletes a stored response after its expires (the config's responses.ttl, 30
# days by default), up to a day or so late; the gateway stops serving it on time itself.
resource "google_firestore_field" "responses_ttl" {
  project    = var.project_id
  database   = local.responses_database
  collection = var.responses_collection
  field      = "expires"

  ttl_config {}

  # A TTL timestamp grows with time; indexing it would only create a write hotspot.
  index_config {}
}

# The compressed body is never queried; indexing it would only cost every write.
resource "google_firestore_field" "responses_body" {
  project    = var.project_id
  database   = local.responses_database
  collection = var.responses_collection
  field      = "body"

  index_config {}

  # Field operations on one collection run one at a time.
  depends_on = [google_firestore_field.responses_ttl]
}

# Read, write and delete documents, in the responses database only.
resource "google_project_iam_member" "gateway_responses" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.gateway.member

  condition {
    title      = "${var.name} stored responses"
    expression = "resource.name == \"projects/${var.project_id}/databases/${local.responses_database}\""
  }
}

# The key store (docs/runtime-keys.md): keys issued at runtime, their hash and name claims
# and the audit log of every admin change, in a Firestore database of their own: Firestore
# roles stop at a database, so the gateway only reads it and only the control plane writes.

locals {
  # Whether the gateway serves stored keys. With a key store every request needs a key, so a
  # private gateway (IAM alone authenticates its callers) serves none unless told to.
  gateway_stored_keys  = var.stored_keys == null ? var.public : var.stored_keys
  create_keys_database = var.keys_database == null
  keys_database        = local.create_keys_database ? google_firestore_database.keys[0].name : var.keys_database
  # What both functions read to open the store (core/keystore/firestorestore); the
  # config's key_store settings win.
  keys_env = {
    KEYS_PROJECT    = var.project_id
    KEYS_DATABASE   = local.keys_database
    KEYS_COLLECTION = var.keys_collection
  }
  keys_condition = "resource.name == \"projects/${var.project_id}/databases/${local.keys_database}\""
}

# Losing it revokes every stored key and loses the audit log: point-in-time recovery on,
# deletion protected, and left in place by terraform destroy (the provider's ABANDON).
resource "google_firestore_database" "keys" {
  count                             = local.create_keys_database ? 1 : 0
  project                           = var.project_id
  name                              = "${var.name}-keys"
  location_id                       = var.firestore_location != null ? var.firestore_location : var.region
  type                              = "FIRESTORE_NATIVE"
  point_in_time_recovery_enablement = "POINT_IN_TIME_RECOVERY_ENABLED"
  delete_protection_state           = var.keys_deletion_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
}

# One key's or route's audit entries, newest first (the admin API's audit?target=). The
# other queries are served by the automatic single-field indexes.
resource "google_firestore_index" "keys_audit" {
  project     = var.project_id
  database    = local.keys_database
  collection  = "${var.keys_collection}_audit"
  query_scope = "COLLECTION"

  fields {
    field_path = "target"
    order      = "ASCENDING"
  }

  fields {
    field_path = "t"
    order      = "DESCENDING"
  }

  fields {
    field_path = "__name__"
    order      = "DESCENDING"
  }
}

# The key and the audit entry as JSON (doc) are never queried: indexing them would only cost
# every write.
resource "google_firestore_field" "keys_doc" {
  for_each   = toset([var.keys_collection, "${var.keys_collection}_audit"])
  project    = var.project_id
  database   = local.keys_database
  collection = each.value
  field      = "doc"

  index_config {}

  # Index operations on one collection run one at a time.
  depends_on = [google_firestore_index.keys_audit]
}

# Read-only, in the keys database only.
resource "google_project_iam_member" "gateway_keys" {
  count   = local.gateway_stored_keys ? 1 : 0
  project = var.project_id
  role    = "roles/datastore.viewer"
  member  = google_service_account.gateway.member

  condition {
    title      = "${var.name} keys (read)"
    expression = local.keys_condition
  }
}

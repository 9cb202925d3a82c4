# The response cache (cache: {ttl: ...} on a model or key): answers the gateway serves
# again to an identical request, shared by every instance.

locals {
  create_cache_database = var.cache_database == null
  cache_database        = local.create_cache_database ? google_firestore_database.cache[0].name : var.cache_database
  # What functions/gcf reads to open the store; the config's response_cache settings win.
  # Harmless when nothing opts in: the gateway opens the store only when a model or key has
  # a cache setting.
  cache_env = {
    CACHE_PROJECT    = var.project_id
    CACHE_DATABASE   = local.cache_database
    CACHE_COLLECTION = var.cache_collection
  }
}

# A database of its own: Firestore roles stop at a database, so the gateway writes its cache
# here while it only reads route state, and the cache can be dropped or moved without
# touching stored responses. No point-in-time recovery: every entry can be asked of the
# provider again, so a lost database costs misses, not data.
resource "google_firestore_database" "cache" {
  count       = local.create_cache_database ? 1 : 0
  project     = var.project_id
  name        = "${var.name}-cache"
  location_id = var.firestore_location != null ? var.firestore_location : var.region
  type        = "FIRESTORE_NATIVE"
}

# Firestore deletes a cached answer after its expires (the model's or key's cache.ttl), up
# to a day or so late; the gateway stops serving it on time itself, so TTL only reclaims the
# space. Entries are read by document id alone: no composite index.
resource "google_firestore_field" "cache_ttl" {
  project    = var.project_id
  database   = local.cache_database
  collection = var.cache_collection
  field      = "expires"

  ttl_config {}

  # A TTL timestamp grows with time; indexing it would only create a write hotspot.
  index_config {}
}

# The recorded answer (up to a document's 1 MiB) is only ever read by document id; indexing
# it would only cost every write.
resource "google_firestore_field" "cache_body" {
  project    = var.project_id
  database   = local.cache_database
  collection = var.cache_collection
  field      = "body"

  index_config {}

  # Field operations on one collection run one at a time.
  depends_on = [google_firestore_field.cache_ttl]
}

# Read and write documents, in the cache database only.
resource "google_project_iam_member" "gateway_cache" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.gateway.member

  condition {
    title      = "${var.name} response cache"
    expression = "resource.name == \"projects/${var.project_id}/databases/${local.cache_database}\""
  }
}

# The MCP gateway (/mcp, mcp_servers: in the config): where the sessions of the protocol
# versions that open one are kept. The upstream servers' secrets are granted with the
# gateway's others (local.gateway_secrets, main.tf).

locals {
  mcp_sessions_collection = "fngate_mcp_sessions"
  # In the responses database: the gateway already reads and writes all of it, so sessions
  # need neither a database nor a role of their own. The config's mcp_sessions settings win
  # (a collection of its own gets no TTL policy from here).
  mcp_sessions_env = var.mcp_sessions ? {
    FNGATE_MCP_SESSIONS_PROJECT    = var.project_id
    FNGATE_MCP_SESSIONS_DATABASE   = local.responses_database
    FNGATE_MCP_SESSIONS_COLLECTION = local.mcp_sessions_collection
  } : {}
}

# Firestore deletes a session after its expires_at (the config's mcp_sessions.ttl after its
# last message), up to a day or so late; the gateway stops honouring it on time itself, so TTL
# only reclaims the space. Sessions are read by document id alone: no composite index.
resource "google_firestore_field" "mcp_sessions_ttl" {
  count      = var.mcp_sessions ? 1 : 0
  project    = var.project_id
  database   = local.responses_database
  collection = local.mcp_sessions_collection
  field      = "expires_at"

  ttl_config {}

  # A TTL timestamp grows with time; indexing it would only create a write hotspot.
  index_config {}
}

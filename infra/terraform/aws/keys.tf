# The key store (docs/runtime-keys.md): keys issued at runtime, their hash and name claims
# and the audit log of every admin change, in one table the gateway reads and only the
# control plane writes.

# The schema of core/keystore/dynamostore (its CreateTable makes the same). The changes
# index serves the gateways' "what changed since" reads (one Query per hour bucket);
# audit_target one key's or route's audit entries. No TTL: tombstones and audit entries are
# kept for good.
resource "aws_dynamodb_table" "keys" {
  name         = "${var.name}-keys"
  billing_mode = "PAY_PER_REQUEST"

  # A global table when the gateway runs in several regions (regions.tf): a replica in each
  # further region, no content: every region. Replication needs the stream.
  stream_enabled   = length(local.shared_replicas) > 0
  stream_view_type = length(local.shared_replicas) > 0 ? "NEW_AND_OLD_IMAGES" : null
  dynamic "replica" {
    for_each = local.shared_replicas
    content {
      region_name = replica.value
    }
  }
  hash_key  = "pk"
  range_key = "sk"

  attribute {
    name = "pk"
    type = "S"
  }

  attribute {
    name = "sk"
    type = "S"
  }

  attribute {
    name = "chg_b"
    type = "S"
  }

  attribute {
    name = "chg_t"
    type = "S"
  }

  attribute {
    name = "target"
    type = "S"
  }

  global_secondary_index {
    name            = "changes"
    hash_key        = "chg_b"
    range_key       = "chg_t"
    projection_type = "ALL"
  }

  global_secondary_index {
    name            = "audit_target"
    hash_key        = "target"
    range_key       = "sk"
    projection_type = "ALL"
  }

  # Losing the table revokes every stored key and the audit log with it.
  point_in_time_recovery {
    enabled = true
  }

  server_side_encryption {
    enabled = true
  }

  deletion_protection_enabled = var.keys_deletion_protection

  tags = var.tags
}

# Read-only: a key found by its hash (GetItem) and the changes since the last read (Query on
# the changes index). Only the control plane issues, changes and revokes keys. Only with a
# public URL, where the gateway serves stored keys (KEYS_TABLE).
data "aws_iam_policy_document" "keys_read" {
  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:Query"]
    resources = [aws_dynamodb_table.keys.arn]
  }

  statement {
    actions   = ["dynamodb:Query"]
    resources = ["${aws_dynamodb_table.keys.arn}/index/*"]
  }
}

resource "aws_iam_role_policy" "keys" {
  count  = local.public ? 1 : 0
  name   = "keys"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.keys_read.json
}

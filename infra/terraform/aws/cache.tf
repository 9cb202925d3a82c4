# The response cache (cache: {ttl: ...} on a model or key): answers the gateway serves
# again to an identical request, shared by every instance.

# One item per cached answer under its partition and request digest
# (core/responsecache/dynamostore), deleted by TTL once expired (the gateway stops serving it
# on time itself; TTL only reclaims the space). No point-in-time recovery: every entry can be
# asked of the provider again, so a lost table costs misses, not data, and recovery would
# bill for backing up answers that expire within hours. Encrypted at rest with DynamoDB's
# default (AWS owned) key, like the other tables without server_side_encryption.
resource "aws_dynamodb_table" "cache" {
  name         = "${var.name}-cache"
  billing_mode = "PAY_PER_REQUEST"

  # A global table when the gateway runs in several regions (regions.tf): a replica in each
  # further region, content: only the regions of the primary's residency (regions.tf). Replication needs the stream.
  stream_enabled   = length(local.content_replicas) > 0
  stream_view_type = length(local.content_replicas) > 0 ? "NEW_AND_OLD_IMAGES" : null
  dynamic "replica" {
    for_each = local.content_replicas
    content {
      region_name = replica.value
    }
  }
  hash_key = "pk"

  attribute {
    name = "pk"
    type = "S"
  }

  ttl {
    attribute_name = "expires_at"
    enabled        = true
  }

  tags = var.tags
}

# A cached answer is one item, read (GetItem) and written whole (PutItem, which also
# replaces a refreshed one): no Query, Scan or DeleteItem, since TTL deletes it.
data "aws_iam_policy_document" "cache" {
  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem"]
    resources = [aws_dynamodb_table.cache.arn]
  }
}

resource "aws_iam_role_policy" "cache" {
  name   = "cache"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.cache.json
}

# Rate limits and budgets (docs/limits.md): the table every gateway instance
# counts in, and exactly the access the gateway needs to it.

# One item per gateway key: its counters in their windows (see dynamocounters.CreateTable).
# TTL deletes a key's item once its month has passed without a request. The usage history's
# per-key, per-day items live here too, expired by the same TTL 400 days after their day.
resource "aws_dynamodb_table" "counters" {
  name         = "${var.name}-counters"
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

# One conditional UpdateItem admits a request, one UpdateItem settles it; GetItem reads an
# item whose condition failed when DynamoDB does not return it.
data "aws_iam_policy_document" "counters" {
  statement {
    actions   = ["dynamodb:UpdateItem", "dynamodb:GetItem"]
    resources = [aws_dynamodb_table.counters.arn]
  }
}

resource "aws_iam_role_policy" "counters" {
  name   = "counters"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.counters.json
}

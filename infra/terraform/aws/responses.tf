# Stored responses (docs/stored-responses.md): POST /v1/responses with store: true keeps
# the response here, so previous_response_id, GET and DELETE /v1/responses/{id} find it.

# One item per stored response under its owner and id (core/responsestore/dynamostore,
# whose CreateTable has the same schema), deleted by TTL once expired (the config's
# responses.ttl, 30 days by default).
resource "aws_dynamodb_table" "responses" {
  name         = "${var.name}-responses"
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

# A stored response is a head item (and, when large, its parts), each written, read and
# deleted by its key: no Query, no Scan.
data "aws_iam_policy_document" "responses" {
  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"]
    resources = [aws_dynamodb_table.responses.arn]
  }
}

resource "aws_iam_role_policy" "responses" {
  name   = "responses"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.responses.json
}

# The MCP gateway (/mcp, mcp_servers: in the config): what it reads of the upstream servers'
# credentials, and where the sessions of the protocol versions that open one are kept.

# Apart from secret_arns, which the control plane reads too: an upstream MCP server's
# credentials are the gateway's alone.
data "aws_iam_policy_document" "mcp_secrets" {
  count = length(var.mcp_secret_arns) > 0 ? 1 : 0

  statement {
    actions   = ["secretsmanager:GetSecretValue"]
    resources = var.mcp_secret_arns
  }

  # The secrets policy grants this only when secret_arns is set; MCP secrets under the same
  # key must decrypt without it.
  dynamic "statement" {
    for_each = var.secrets_kms_key_arn == null ? [] : [var.secrets_kms_key_arn]
    content {
      actions   = ["kms:Decrypt"]
      resources = [statement.value]
      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["secretsmanager.${data.aws_region.current.region}.amazonaws.com"]
      }
    }
  }
}

resource "aws_iam_role_policy" "mcp_secrets" {
  count  = length(var.mcp_secret_arns) > 0 ? 1 : 0
  name   = "mcp-secrets"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.mcp_secrets[0].json
}

# One item per open session under its Mcp-Session-Id (core/mcpsessions/dynamostore), deleted
# by TTL after it expires (the config's mcp_sessions.ttl after its last message); the gateway
# stops honouring it on time itself, TTL only reclaims the space. /mcp is served stateless, one
# invoke per message, so a session must outlive the instance that opened it. No point-in-time
# recovery: a lost session costs the client one initialize.
resource "aws_dynamodb_table" "mcp_sessions" {
  count        = var.mcp_sessions ? 1 : 0
  name         = "${var.name}-mcp-sessions"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"

  attribute {
    name = "id"
    type = "S"
  }

  ttl {
    attribute_name = "expires_at"
    enabled        = true
  }

  tags = var.tags
}

# A session is read, written and forgotten by its id; nothing lists sessions, so no Query or
# Scan (which would let one caller's request read another's).
data "aws_iam_policy_document" "mcp_sessions" {
  count = var.mcp_sessions ? 1 : 0

  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"]
    resources = [aws_dynamodb_table.mcp_sessions[0].arn]
  }
}

resource "aws_iam_role_policy" "mcp_sessions" {
  count  = var.mcp_sessions ? 1 : 0
  name   = "mcp-sessions"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.mcp_sessions[0].json
}

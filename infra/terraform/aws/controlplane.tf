# The control plane (docs/deploy.md, "Key store and control plane"): the admin API under
# /admin/v1/ and the console at /console, in a function of its own with its own public URL
# (the admin API authenticates every call itself), so the gateway's binary and cold start
# carry none of it and /admin/v1/ is never reachable on the gateway's URL. control_plane =
# false leaves it all out; the key store stays, and the gateway serves its keys either way.

locals {
  control_plane      = var.control_plane ? 1 : 0
  control_plane_name = "${var.name}-controlplane"
  # The config as the gateway has it (its admin section is the control plane's), and the
  # stores: keys read and written, usage read, route state read and written.
  control_plane_environment = merge(local.inventory_environment, {
    KEYS_TABLE        = aws_dynamodb_table.keys.name
    COUNTERS_TABLE    = aws_dynamodb_table.counters.name
    ROUTE_STATE_TABLE = aws_dynamodb_table.route_state.name
  })
  # It loads the gateway's config, so it resolves the same references, and the admin
  # section's own (session key, OIDC client secret), which the gateway never reads.
  control_plane_secrets = concat(var.secret_arns, var.control_plane_secret_arns)
}

resource "aws_cloudwatch_log_group" "control_plane" {
  count             = local.control_plane
  name              = "/aws/lambda/${local.control_plane_name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_iam_role" "control_plane" {
  count              = local.control_plane
  name               = local.control_plane_name
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

data "aws_iam_policy_document" "control_plane" {
  count = local.control_plane

  statement {
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.control_plane[0].arn}:*"]
  }

  # A change is one TransactWriteItems (the key, its claims, its audit entry), authorized
  # item by item as these actions.
  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]
    resources = [aws_dynamodb_table.keys.arn]
  }

  statement {
    actions   = ["dynamodb:Query"]
    resources = ["${aws_dynamodb_table.keys.arn}/index/*"]
  }

  # Read-only: a key's current windows (GetItem) and its days of history (BatchGetItem).
  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem"]
    resources = [aws_dynamodb_table.counters.arn]
  }

  # Routes cooled and restored by hand, as the remediation function writes them.
  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query"]
    resources = [aws_dynamodb_table.route_state.arn]
  }

  dynamic "statement" {
    for_each = length(local.control_plane_secrets) > 0 ? [local.control_plane_secrets] : []
    content {
      actions   = ["secretsmanager:GetSecretValue"]
      resources = statement.value
    }
  }

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

resource "aws_iam_role_policy" "control_plane" {
  count  = local.control_plane
  name   = "control-plane"
  role   = aws_iam_role.control_plane[0].id
  policy = data.aws_iam_policy_document.control_plane[0].json
}

resource "aws_lambda_function" "control_plane" {
  count            = local.control_plane
  function_name    = local.control_plane_name
  description      = "fngate control plane (admin API and console)"
  role             = aws_iam_role.control_plane[0].arn
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = ["arm64"]
  filename         = var.control_plane_package_zip
  source_code_hash = filebase64sha256(var.control_plane_package_zip)
  # An admin call is a few store calls and a page render; 512 MB keeps the gateway's CPU
  # share, and so its cold start.
  memory_size = 512
  timeout     = 30

  environment {
    variables = local.control_plane_environment
  }

  tags = var.tags

  lifecycle {
    precondition {
      condition     = var.control_plane_package_zip != null
      error_message = "control_plane is true: build the control plane's package with `make package-controlplane` and set control_plane_package_zip (build/controlplane.zip), or set control_plane = false."
    }
  }

  depends_on = [aws_cloudwatch_log_group.control_plane, aws_iam_role_policy.control_plane]
}

# Public, as a browser needs it: the console cannot sign requests, and the admin API
# authenticates every call itself (admin keys, keys with a role, OIDC).
resource "aws_lambda_function_url" "control_plane" {
  count              = local.control_plane
  function_name      = aws_lambda_function.control_plane[0].function_name
  authorization_type = "NONE"
}

# Both statements a public URL needs since October 2025, as the gateway's.
resource "aws_lambda_permission" "control_plane_url" {
  count                  = local.control_plane
  statement_id           = "FngatePublicInvokeFunctionUrl"
  action                 = "lambda:InvokeFunctionUrl"
  function_name          = aws_lambda_function.control_plane[0].function_name
  principal              = "*"
  function_url_auth_type = "NONE"
}

resource "aws_lambda_permission" "control_plane_invoke" {
  count                    = local.control_plane
  statement_id             = "FngatePublicInvokeViaFunctionUrl"
  action                   = "lambda:InvokeFunction"
  function_name            = aws_lambda_function.control_plane[0].function_name
  principal                = "*"
  invoked_via_function_url = true
}

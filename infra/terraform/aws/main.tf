locals {
  public = var.url_auth_type == "NONE"
  environment = merge(
    var.environment,
    { FNGATE_URL_AUTH_TYPE = var.url_auth_type },
    var.config_yaml == null ? {} : { FNGATE_CONFIG_YAML = var.config_yaml },
    var.config_path == null ? {} : { FNGATE_CONFIG = var.config_path },
    { ROUTE_STATE_TABLE = aws_dynamodb_table.route_state.name },
    # The keys' rate limits and budgets (a config without a counters section counts here).
    { COUNTERS_TABLE = aws_dynamodb_table.counters.name },
    # The config's responses.table wins; responses: {store: none} turns them off.
    { RESPONSES_TABLE = aws_dynamodb_table.responses.name },
    # The response cache; the config's response_cache.table wins. Harmless when nothing opts
    # in: the gateway opens the store only when a model or key has a cache setting.
    { CACHE_TABLE = aws_dynamodb_table.cache.name },
    # Keys issued at runtime, served beside the config's; the config's key_store wins. Public
    # URLs only: behind AWS_IAM no gateway key can arrive (the signature takes Authorization).
    local.public ? { KEYS_TABLE = aws_dynamodb_table.keys.name } : {},
    # Without it the gateway publishes nothing: the log subscription needs no publisher.
    local.eventbridge ? { PROVIDER_ERROR_BUS = aws_cloudwatch_event_bus.provider_errors[0].name } : {},
    # The config's mcp_sessions.table wins.
    var.mcp_sessions ? { FNGATE_MCP_SESSIONS_TABLE = aws_dynamodb_table.mcp_sessions[0].name } : {},
    # Where this function runs, in a deployment across regions (regions.tf).
    local.multi_region ? local.region_environment[local.primary] : {},
  )
}

data "aws_region" "current" {}

resource "aws_cloudwatch_log_group" "gateway" {
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "gateway" {
  name               = var.name
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

# Only its own log group: the group exists before the function, so no logs:CreateLogGroup.
data "aws_iam_policy_document" "logs" {
  statement {
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.gateway.arn}:*"]
  }
}

resource "aws_iam_role_policy" "logs" {
  name   = "logs"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.logs.json
}

data "aws_iam_policy_document" "secrets" {
  count = length(var.secret_arns) > 0 ? 1 : 0

  statement {
    actions   = ["secretsmanager:GetSecretValue"]
    resources = var.secret_arns
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

resource "aws_iam_role_policy" "secrets" {
  count  = length(var.secret_arns) > 0 ? 1 : 0
  name   = "secrets"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.secrets[0].json
}

resource "aws_lambda_function" "gateway" {
  function_name    = var.name
  description      = "fngate OpenAI-compatible gateway (streaming function URL)"
  role             = aws_iam_role.gateway.arn
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = ["arm64"]
  filename         = var.package_zip
  source_code_hash = filebase64sha256(var.package_zip)
  memory_size      = var.memory_size
  timeout          = var.timeout

  reserved_concurrent_executions = var.reserved_concurrency == null ? -1 : var.reserved_concurrency

  environment {
    variables = local.environment
  }

  tags = var.tags

  # Lambda logs to /aws/lambda/<function_name>, created here first with its retention. The
  # secrets are read at cold start: the role must be able to read them first (and a guardrail
  # can be called, or an MCP session opened, on the first request).
  depends_on = [aws_cloudwatch_log_group.gateway, aws_iam_role_policy.logs, aws_iam_role_policy.secrets, aws_iam_role_policy.self_repair, aws_iam_role_policy.counters, aws_iam_role_policy.responses, aws_iam_role_policy.cache, aws_iam_role_policy.keys, aws_iam_role_policy.guardrails, aws_iam_role_policy.mcp_secrets, aws_iam_role_policy.mcp_sessions]
}

resource "aws_lambda_function_url" "gateway" {
  function_name      = aws_lambda_function.gateway.function_name
  authorization_type = var.url_auth_type
  invoke_mode        = "RESPONSE_STREAM"
}

# A public URL needs both statements since October 2025: lambda:InvokeFunctionUrl for
# AuthType NONE, and lambda:InvokeFunction limited to calls through the URL.
resource "aws_lambda_permission" "public_url" {
  count                  = local.public ? 1 : 0
  statement_id           = "FngatePublicInvokeFunctionUrl"
  action                 = "lambda:InvokeFunctionUrl"
  function_name          = aws_lambda_function.gateway.function_name
  principal              = "*"
  function_url_auth_type = "NONE"
}

resource "aws_lambda_permission" "public_invoke" {
  count                    = local.public ? 1 : 0
  statement_id             = "FngatePublicInvokeViaFunctionUrl"
  action                   = "lambda:InvokeFunction"
  function_name            = aws_lambda_function.gateway.function_name
  principal                = "*"
  invoked_via_function_url = true
}

# What an AWS_IAM caller's own policy must allow (both actions, like the public statements).
data "aws_iam_policy_document" "invoke" {
  statement {
    actions   = ["lambda:InvokeFunctionUrl"]
    resources = [aws_lambda_function.gateway.arn]
    condition {
      test     = "StringEquals"
      variable = "lambda:FunctionUrlAuthType"
      values   = ["AWS_IAM"]
    }
  }
  statement {
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.gateway.arn]
    condition {
      test     = "Bool"
      variable = "lambda:InvokedViaFunctionUrl"
      values   = ["true"]
    }
  }
}

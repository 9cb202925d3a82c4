# Self-repair (docs/remediation.md): the remediation function, the route-state table both
# functions share, one delivery path for provider errors, the sweep schedule and an alarm.

locals {
  # Exactly one delivery path: with both, every error would be counted twice.
  eventbridge      = var.error_delivery == "eventbridge"
  log_subscription = var.error_delivery == "cloudwatch_logs"
  remediation_name = "${var.name}-remediation"

  # publish.RulePattern in events/publish; an infra test keeps the two equal.
  provider_error_pattern = {
    source        = ["fngate"]
    "detail-type" = ["ProviderError"]
    detail = {
      error_class = ["rate_limited", "overloaded", "unavailable", "auth", "not_found", "unsupported"]
      # A connection failure has no status: an absent status matches too.
      status = [{ numeric = [">=", 400] }, { exists = false }]
    }
  }

  # remediation.AWSHealthRulePattern; an infra test keeps the two equal.
  provider_health_pattern = {
    source        = ["aws.health"]
    "detail-type" = ["AWS Health Event"]
    detail = {
      service           = ["BEDROCK"]
      eventTypeCategory = ["issue"]
    }
  }

  # 900 s = REMEDIATION_MAX_EVENT_AGE: an older error changes nothing, so nothing older is
  # worth delivering.
  max_event_age_seconds = 900

  # The gateway's config and its plain ${ENV} values, read only for which routes run where
  # (a Bedrock incident in a region cools the routes there).
  inventory_environment = merge(
    var.environment,
    var.config_yaml == null ? {} : { FNGATE_CONFIG_YAML = var.config_yaml },
    var.config_path == null ? {} : { FNGATE_CONFIG = var.config_path },
  )
}

data "aws_caller_identity" "current" {}

# Routes, burst windows, delivery claims (expiring through TTL) and the snapshots rollback
# restores (see dynamostore.CreateTable).
resource "aws_dynamodb_table" "route_state" {
  name         = "${var.name}-routestate"
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

  ttl {
    attribute_name = "expires_at"
    enabled        = true
  }

  tags = var.tags
}

# A bus of its own: a rule on the account's default bus would also receive the errors of
# every other fngate deployment in the account and count them against these routes.
resource "aws_cloudwatch_event_bus" "provider_errors" {
  count = local.eventbridge ? 1 : 0
  name  = "${var.name}-provider-errors"
  tags  = var.tags
}

# The gateway reads route state (Query on one partition) and publishes provider errors.
data "aws_iam_policy_document" "self_repair" {
  statement {
    actions   = ["dynamodb:Query"]
    resources = [aws_dynamodb_table.route_state.arn]
  }

  dynamic "statement" {
    for_each = local.eventbridge ? [aws_cloudwatch_event_bus.provider_errors[0].arn] : []
    content {
      actions   = ["events:PutEvents"]
      resources = [statement.value]
    }
  }
}

resource "aws_iam_role_policy" "self_repair" {
  name   = "self-repair"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.self_repair.json
}

# ---- The remediation function ----

resource "aws_cloudwatch_log_group" "remediation" {
  name              = "/aws/lambda/${local.remediation_name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_iam_role" "remediation" {
  name               = local.remediation_name
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

data "aws_iam_policy_document" "remediation" {
  statement {
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.remediation.arn}:*"]
  }

  # TransactWriteItems (a route and its snapshot together) is authorized as PutItem.
  statement {
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query"]
    resources = [aws_dynamodb_table.route_state.arn]
  }

  # The async invoke's on-failure destination is sent with the function's own role.
  statement {
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.remediation_dlq.arn]
  }
}

resource "aws_iam_role_policy" "remediation" {
  name   = "remediation"
  role   = aws_iam_role.remediation.id
  policy = data.aws_iam_policy_document.remediation.json
}

resource "aws_lambda_function" "remediation" {
  function_name    = local.remediation_name
  description      = "fngate self-repair (route state from provider errors)"
  role             = aws_iam_role.remediation.arn
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = ["arm64"]
  filename         = var.remediation_package_zip
  source_code_hash = filebase64sha256(var.remediation_package_zip)
  # A delivery is a few DynamoDB calls.
  memory_size = 256
  timeout     = 30

  environment {
    variables = merge(local.inventory_environment, {
      ROUTE_STATE_TABLE             = aws_dynamodb_table.route_state.name
      REMEDIATION_MODE              = var.remediation_mode
      REMEDIATION_BURST_ERRORS      = tostring(var.remediation_burst_errors)
      REMEDIATION_BURST_WINDOW      = var.remediation_burst_window
      REMEDIATION_COOLDOWN          = var.remediation_cooldown
      REMEDIATION_INCIDENT_COOLDOWN = var.remediation_incident_cooldown
    })
  }

  tags = var.tags

  depends_on = [aws_cloudwatch_log_group.remediation, aws_iam_role_policy.remediation]
}

# Events that failed every delivery attempt: from the rule's target (EventBridge could not
# invoke the function) and from the async invoke (the function failed every time). Redrive
# them by invoking the function with the message bodies.
resource "aws_sqs_queue" "remediation_dlq" {
  name                      = "${local.remediation_name}-dlq"
  message_retention_seconds = 1209600
  sqs_managed_sse_enabled   = true
  tags                      = var.tags
}

# A store failure returns an error; Lambda retries twice (claims make retries safe), then
# parks the event in the queue.
resource "aws_lambda_function_event_invoke_config" "remediation" {
  function_name                = aws_lambda_function.remediation.function_name
  maximum_retry_attempts       = 2
  maximum_event_age_in_seconds = local.max_event_age_seconds

  destination_config {
    on_failure {
      destination = aws_sqs_queue.remediation_dlq.arn
    }
  }
}

# ---- Path 1: EventBridge ----

resource "aws_cloudwatch_event_rule" "provider_errors" {
  count          = local.eventbridge ? 1 : 0
  name           = "${var.name}-provider-errors"
  description    = "fngate provider errors that remediation acts on"
  event_bus_name = aws_cloudwatch_event_bus.provider_errors[0].name
  event_pattern  = jsonencode(local.provider_error_pattern)
  tags           = var.tags
}

resource "aws_cloudwatch_event_target" "remediation" {
  count          = local.eventbridge ? 1 : 0
  rule           = aws_cloudwatch_event_rule.provider_errors[0].name
  event_bus_name = aws_cloudwatch_event_bus.provider_errors[0].name
  target_id      = "remediation"
  arn            = aws_lambda_function.remediation.arn

  # Covers EventBridge failing to hand the event to Lambda (throttling); the function's own
  # failures are retried by its async invoke config.
  retry_policy {
    maximum_retry_attempts       = 8
    maximum_event_age_in_seconds = local.max_event_age_seconds
  }

  dead_letter_config {
    arn = aws_sqs_queue.remediation_dlq.arn
  }
}

resource "aws_lambda_permission" "events" {
  count         = local.eventbridge ? 1 : 0
  statement_id  = "FngateProviderErrorRule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.remediation.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.provider_errors[0].arn
}

# ---- AWS Health: Bedrock incidents ----

# AWS Health sends issues to the default bus of the affected region: this rule hears about
# Bedrock in the deployment's region (routes in other regions need the rule there too).
resource "aws_cloudwatch_event_rule" "provider_health" {
  name          = "${var.name}-provider-health"
  description   = "AWS Health issues for Bedrock, which cool the gateway's routes in their region"
  event_pattern = jsonencode(local.provider_health_pattern)
  tags          = var.tags
}

resource "aws_cloudwatch_event_target" "provider_health" {
  rule      = aws_cloudwatch_event_rule.provider_health.name
  target_id = "remediation"
  arn       = aws_lambda_function.remediation.arn

  retry_policy {
    maximum_retry_attempts       = 8
    maximum_event_age_in_seconds = local.max_event_age_seconds
  }

  dead_letter_config {
    arn = aws_sqs_queue.remediation_dlq.arn
  }
}

resource "aws_lambda_permission" "provider_health" {
  statement_id  = "FngateProviderHealthRule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.remediation.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.provider_health.arn
}

# The rules' dead letters are sent by EventBridge itself, which needs the queue's consent,
# rule by rule.
data "aws_iam_policy_document" "remediation_dlq" {
  statement {
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.remediation_dlq.arn]
    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }
    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [aws_cloudwatch_event_rule.provider_health.arn]
    }
  }

  dynamic "statement" {
    for_each = local.eventbridge ? [aws_cloudwatch_event_rule.provider_errors[0].arn] : []
    content {
      actions   = ["sqs:SendMessage"]
      resources = [aws_sqs_queue.remediation_dlq.arn]
      principals {
        type        = "Service"
        identifiers = ["events.amazonaws.com"]
      }
      condition {
        test     = "ArnEquals"
        variable = "aws:SourceArn"
        values   = [statement.value]
      }
    }
  }
}

resource "aws_sqs_queue_policy" "remediation_dlq" {
  queue_url = aws_sqs_queue.remediation_dlq.id
  policy    = data.aws_iam_policy_document.remediation_dlq.json
}

# ---- Path 2: CloudWatch Logs subscription ----

resource "aws_lambda_permission" "logs" {
  count          = local.log_subscription ? 1 : 0
  statement_id   = "FngateProviderErrorSubscription"
  action         = "lambda:InvokeFunction"
  function_name  = aws_lambda_function.remediation.function_name
  principal      = "logs.amazonaws.com"
  source_arn     = "${aws_cloudwatch_log_group.gateway.arn}:*"
  source_account = data.aws_caller_identity.current.account_id
}

resource "aws_cloudwatch_log_subscription_filter" "provider_errors" {
  count           = local.log_subscription ? 1 : 0
  name            = "${var.name}-provider-errors"
  log_group_name  = aws_cloudwatch_log_group.gateway.name
  filter_pattern  = "{ $.msg = \"provider_error\" }"
  destination_arn = aws_lambda_function.remediation.arn

  # CloudWatch Logs test-invokes the destination when the filter is created.
  depends_on = [aws_lambda_permission.logs]
}

# ---- The sweep ----

data "aws_iam_policy_document" "scheduler_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["scheduler.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_iam_role" "sweep" {
  name               = "${var.name}-sweep"
  assume_role_policy = data.aws_iam_policy_document.scheduler_assume.json
  tags               = var.tags
}

data "aws_iam_policy_document" "sweep" {
  statement {
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.remediation.arn]
  }
}

resource "aws_iam_role_policy" "sweep" {
  name   = "invoke-remediation"
  role   = aws_iam_role.sweep.id
  policy = data.aws_iam_policy_document.sweep.json
}

# Re-enables routes whose cooldown ended. A missed sweep is replaced by the next one a
# minute later, so the schedule does not retry.
resource "aws_scheduler_schedule" "sweep" {
  name                = "${var.name}-sweep"
  description         = "fngate self-repair sweep (re-enable routes whose cooldown ended)"
  schedule_expression = "rate(1 minute)"
  state               = "ENABLED"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = aws_lambda_function.remediation.arn
    role_arn = aws_iam_role.sweep.arn
    input    = jsonencode({ fngate = "sweep" })

    retry_policy {
      maximum_retry_attempts       = 0
      maximum_event_age_in_seconds = 60
    }
  }
}

# ---- The alarms ----

# A spike of actions is a provider outage or a threshold cooling everything. The EMF metric
# has one series per Action and Mode and alarms cannot use SEARCH, so a Metrics Insights
# query sums the series, in the mode this deployment runs. A provider incident's own cools
# and re-enables are left out: the incident alarm below covers them.
resource "aws_cloudwatch_metric_alarm" "remediation_actions" {
  alarm_name          = "${var.name}-remediation-actions"
  alarm_description   = "fngate self-repair: more than ${var.remediation_alarm_threshold} remediation actions (mode ${var.remediation_mode}) within 5 minutes. Read the function's remediation log lines; roll back with fngate-remediate (docs/remediation.md)."
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.remediation_alarm_threshold
  evaluation_periods  = 1
  datapoints_to_alarm = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions

  metric_query {
    id          = "actions"
    expression  = "SELECT SUM(RemediationActions) FROM SCHEMA(fngate, Action, Mode) WHERE Mode = '${var.remediation_mode}' AND Action != 'incident_cool' AND Action != 'incident_enable'"
    period      = 300
    return_data = true
  }

  tags = var.tags
}

# Bursts of provider errors, told apart by whether an open provider incident explains them
# (RemediationBursts, dimension Correlation): with none, a configuration or quota problem is
# likelier and on-call is paged; with one, the provider is on it.
locals {
  burst_alarms = {
    unexplained = {
      correlation = "none"
      threshold   = var.remediation_burst_alarm_threshold
      actions     = var.alarm_actions
      description = "fngate self-repair: bursts of provider errors with no open provider incident to explain them (mode ${var.remediation_mode}): likelier a configuration or quota problem (a rotated or revoked key, a quota below the traffic). Yours to fix: read the remediation lines with correlation none."
    }
    provider-incident = {
      correlation = "provider_incident"
      threshold   = 0
      actions     = var.incident_alarm_actions
      description = "fngate self-repair: bursts of provider errors during an open provider incident (mode ${var.remediation_mode}). The provider's to fix; the remediation lines with correlation provider_incident link the incident."
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "remediation_bursts" {
  for_each            = local.burst_alarms
  alarm_name          = "${var.name}-remediation-bursts-${each.key}"
  alarm_description   = each.value.description
  comparison_operator = "GreaterThanThreshold"
  threshold           = each.value.threshold
  evaluation_periods  = 1
  datapoints_to_alarm = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = each.value.actions

  metric_query {
    id          = "bursts"
    expression  = "SELECT SUM(RemediationBursts) FROM SCHEMA(fngate, Correlation, Mode) WHERE Mode = '${var.remediation_mode}' AND Correlation = '${each.value.correlation}'"
    period      = 300
    return_data = true
  }

  tags = var.tags
}

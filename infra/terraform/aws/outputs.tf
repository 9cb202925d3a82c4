output "gateway_url" {
  description = "The function URL (ends in /)."
  value       = aws_lambda_function_url.gateway.function_url
}

output "openai_base_url" {
  description = "Base URL for OpenAI SDKs."
  value       = "${aws_lambda_function_url.gateway.function_url}v1"
}

output "function_name" {
  description = "The gateway function's name."
  value       = aws_lambda_function.gateway.function_name
}

output "function_arn" {
  description = "The gateway function's ARN."
  value       = aws_lambda_function.gateway.arn
}

output "role_arn" {
  description = "The function's execution role."
  value       = aws_iam_role.gateway.arn
}

output "responses_table_name" {
  description = "The table of stored responses (RESPONSES_TABLE of the gateway)."
  value       = aws_dynamodb_table.responses.name
}

output "mcp_sessions_table_name" {
  description = "The table of MCP sessions (FNGATE_MCP_SESSIONS_TABLE of the gateway); null with mcp_sessions = false."
  value       = var.mcp_sessions ? aws_dynamodb_table.mcp_sessions[0].name : null
}

output "cache_table_name" {
  description = "The response cache's table (CACHE_TABLE of the gateway)."
  value       = aws_dynamodb_table.cache.name
}

output "log_group_name" {
  description = "The log group holding one line per request and per provider attempt."
  value       = aws_cloudwatch_log_group.gateway.name
}

output "invoke_policy_json" {
  description = "An IAM policy allowing a caller to invoke the URL under AWS_IAM; attach it to the callers' roles."
  value       = data.aws_iam_policy_document.invoke.json
}

output "route_state_table_name" {
  description = "The route-state DynamoDB table (ROUTE_STATE_TABLE of both functions)."
  value       = aws_dynamodb_table.route_state.name
}

output "route_state_table_arn" {
  description = "The route-state table's ARN (operators running fngate-remediate need the remediation function's actions on it)."
  value       = aws_dynamodb_table.route_state.arn
}

output "route_store" {
  description = "The operator tool's store: export FNGATE_ROUTE_STORE=<this>."
  value       = "dynamodb:${aws_dynamodb_table.route_state.name}"
}

output "remediation_function_name" {
  description = "The remediation function's name."
  value       = aws_lambda_function.remediation.function_name
}

output "remediation_dead_letter_queue_url" {
  description = "Events the remediation function could not take after every retry."
  value       = aws_sqs_queue.remediation_dlq.id
}

output "remediation_dead_letter_queue_arn" {
  description = "The dead-letter queue's ARN."
  value       = aws_sqs_queue.remediation_dlq.arn
}

output "provider_error_bus_name" {
  description = "The bus the gateway publishes provider errors to (PROVIDER_ERROR_BUS); null with error_delivery = cloudwatch_logs."
  value       = local.eventbridge ? aws_cloudwatch_event_bus.provider_errors[0].name : null
}

output "remediation_alarm_name" {
  description = "The alarm on a spike of remediation actions."
  value       = aws_cloudwatch_metric_alarm.remediation_actions.alarm_name
}

output "remediation_burst_alarm_names" {
  description = "The burst alarms: unexplained (no open provider incident; pages alarm_actions) and provider-incident (notifies incident_alarm_actions)."
  value       = { for k, a in aws_cloudwatch_metric_alarm.remediation_bursts : k => a.alarm_name }
}

output "counters_table_name" {
  description = "The keys' counters (COUNTERS_TABLE); fngate-remediate usage -counters dynamodb:<this> reads them."
  value       = aws_dynamodb_table.counters.name
}

output "keys_table_name" {
  description = "The key store (KEYS_TABLE of the gateway and the control plane)."
  value       = aws_dynamodb_table.keys.name
}

output "control_plane_url" {
  description = "The control plane's function URL (ends in /): the admin API under admin/v1/, the console at console. Null with control_plane = false."
  value       = var.control_plane ? aws_lambda_function_url.control_plane[0].function_url : null
}

output "control_plane_function_name" {
  description = "The control-plane function's name; null with control_plane = false."
  value       = var.control_plane ? aws_lambda_function.control_plane[0].function_name : null
}

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

output "log_group_name" {
  description = "The log group holding one line per request and per provider attempt."
  value       = aws_cloudwatch_log_group.gateway.name
}

output "invoke_policy_json" {
  description = "An IAM policy allowing a caller to invoke the URL under AWS_IAM; attach it to the callers' roles."
  value       = data.aws_iam_policy_document.invoke.json
}

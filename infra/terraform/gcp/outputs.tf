output "gateway_url" {
  description = "The function's HTTPS URL (its Cloud Run service URL)."
  value       = google_cloudfunctions2_function.gateway.service_config[0].uri
}

output "openai_base_url" {
  description = "Base URL for OpenAI SDKs."
  value       = "${google_cloudfunctions2_function.gateway.service_config[0].uri}/v1"
}

output "function_name" {
  description = "The function's name."
  value       = google_cloudfunctions2_function.gateway.name
}

output "service_account_email" {
  description = "The identity the function runs as."
  value       = google_service_account.gateway.email
}

output "config_secret_id" {
  description = "The Secret Manager secret holding the config, when config_yaml is set."
  value       = local.has_config ? google_secret_manager_secret.config[0].secret_id : null
}

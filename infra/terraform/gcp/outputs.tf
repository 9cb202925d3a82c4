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

output "responses_database" {
  description = "The Firestore database of stored responses (RESPONSES_DATABASE of the gateway)."
  value       = local.responses_database
}

output "cache_database" {
  description = "The Firestore database of the response cache (CACHE_DATABASE of the gateway)."
  value       = local.cache_database
}

output "route_state_database" {
  description = "The Firestore database holding route state (ROUTE_STATE_DATABASE)."
  value       = local.database
}

output "route_store" {
  description = "The operator tool's flags: fngate-remediate -store <this> -firestore-database <route_state_database> -firestore-prefix <prefix>."
  value       = "firestore:${var.project_id}"
}

output "remediation_function_name" {
  description = "The remediation function's name."
  value       = google_cloudfunctions2_function.remediation.name
}

output "provider_error_topic" {
  description = "The topic the log sink and the sweep publish to."
  value       = google_pubsub_topic.provider_errors.id
}

output "dead_letter_topic" {
  description = "The dead-letter topic for the trigger's subscription (attached by the dead_letter_setup commands)."
  value       = google_pubsub_topic.dead_letter.id
}

output "dead_letter_subscription" {
  description = "Where dead-lettered events wait to be read or replayed."
  value       = google_pubsub_subscription.dead_letter.id
}

output "remediation_trigger" {
  description = "The Eventarc trigger the function's event_trigger created (its Pub/Sub subscription gets the dead-letter policy)."
  value       = google_cloudfunctions2_function.remediation.event_trigger[0].trigger
}

# Eventarc creates and owns the trigger's subscription, and neither its API nor the provider
# can set a dead-letter policy on it (hashicorp/terraform-provider-google#17697, #25069):
# these commands do it once after apply, and again whenever the trigger is recreated.
output "dead_letter_setup" {
  description = "Shell commands that give the trigger's Eventarc-managed subscription the dead-letter topic (run after each apply that recreates the trigger)."
  value       = <<-EOT
    SUB=$(gcloud eventarc triggers describe ${google_cloudfunctions2_function.remediation.event_trigger[0].trigger} --format='value(transport.pubsub.subscription)')
    gcloud pubsub subscriptions add-iam-policy-binding "$SUB" --member=serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com --role=roles/pubsub.subscriber
    gcloud pubsub subscriptions update "$SUB" --dead-letter-topic=${google_pubsub_topic.dead_letter.id} --max-delivery-attempts=10
  EOT
}

output "remediation_burst_alert_names" {
  description = "The burst alert policies: unexplained (no open provider incident; alert_notification_channels) and provider-incident (incident_notification_channels)."
  value       = { for k, a in google_monitoring_alert_policy.remediation_bursts : k => a.name }
}

output "counters_database" {
  description = "The Firestore database of the keys' counters (COUNTERS_DATABASE); fngate-remediate usage -counters firestore:<project> -counters-database <this> reads them."
  value       = local.counters_database
}

output "keys_database" {
  description = "The Firestore database of the key store (KEYS_DATABASE of the gateway and the control plane)."
  value       = local.keys_database
}

output "control_plane_url" {
  description = "The control plane's URL: the admin API under /admin/v1/, the console at /console. Null with control_plane = false."
  value       = var.control_plane ? google_cloudfunctions2_function.control_plane[0].service_config[0].uri : null
}

output "control_plane_service_account_email" {
  description = "The identity the control plane runs as; null with control_plane = false."
  value       = var.control_plane ? google_service_account.control_plane[0].email : null
}

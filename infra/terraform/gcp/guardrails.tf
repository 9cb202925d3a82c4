# Guardrails (guardrails: in the config; core/guardrail). kind: model-armor calls Google Cloud
# Model Armor's REST API from the gateway as its service account: templates/T:sanitizeUserPrompt,
# templates/T:sanitizeModelResponse, and GET templates/T once, for the template's de-identify
# template. kind: bedrock is Amazon's and kind: local needs no cloud. The config names the
# templates, so this module only enables the API and grants the calls.
#
# Both roles are on the project: Model Armor has no IAM policy on a template, so no grant can
# name one. Per https://cloud.google.com/iam/docs/roles-permissions/modelarmor,
# roles/modelarmor.user holds modelarmor.templates.useToSanitizeUserPrompt and
# useToSanitizeModelResponse (and the other sanitize permissions) but not
# modelarmor.templates.get; roles/modelarmor.viewer holds templates.get (and templates.list,
# topics.get and topics.list), nothing that changes a template.
#
# Masking (mode: mask) goes through the template's Sensitive Data Protection de-identify
# template, which Model Armor applies as its own service agent,
# service-PROJECT_NUMBER@gcp-sa-modelarmor.iam.gserviceaccount.com, not as the gateway: the
# gateway needs no DLP role. Google grants that agent roles/modelarmor.serviceAgent on its
# project (reading DLP templates, serviceusage.services.use), enough for SDP templates in the
# same project. For SDP templates in another project Model Armor's docs ask for roles/dlp.user
# and roles/dlp.reader there; the module does not grant them, since the agent exists only once
# Google creates it and a binding made before then fails the apply. Run once:
#   for role in roles/dlp.user roles/dlp.reader; do gcloud projects add-iam-policy-binding SDP_PROJECT \
#     --member="serviceAccount:service-$(gcloud projects describe PROJECT --format='value(projectNumber)')@gcp-sa-modelarmor.iam.gserviceaccount.com" \
#     --role=$role; done

resource "google_project_service" "model_armor" {
  count   = var.model_armor ? 1 : 0
  project = var.project_id
  service = "modelarmor.googleapis.com"
  # Other workloads in the project may use Model Armor: turning model_armor off takes the
  # gateway's grants away, never the API.
  disable_on_destroy = false
}

resource "google_project_iam_member" "gateway_model_armor_user" {
  count   = var.model_armor ? 1 : 0
  project = var.project_id
  role    = "roles/modelarmor.user"
  member  = google_service_account.gateway.member
}

resource "google_project_iam_member" "gateway_model_armor_viewer" {
  count   = var.model_armor ? 1 : 0
  project = var.project_id
  role    = "roles/modelarmor.viewer"
  member  = google_service_account.gateway.member
}

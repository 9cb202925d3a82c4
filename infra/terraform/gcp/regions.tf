# The gateway in several regions (docs/deploy.md, "Several regions"; docs/design.md, "Across
# regions"). var.region is the primary: the source bucket, the control plane, self-repair
# and the databases are created as before. Each further region in var.regions runs the same
# function from the same source object. With var.domain_name set, a global external
# Application Load Balancer sends each client to a nearby healthy region: a serverless NEG
# per region behind one backend service with outlier detection (a region answering 5xx is
# ejected and its traffic goes to the next nearest), plus a backend service per residency
# that the URL map picks by host (<residency>.<domain_name>) or by the x-fngate-residency
# header. Firestore in a multi-region location (firestore_location = nam5 or eur3) is strongly
# consistent, so the counters, keys and route state stay exact across regions at that
# location's write latency. With var.regions empty (the default) nothing here is created.

variable "regions" {
  description = "Every region the gateway runs in; empty (default) is var.region alone, which is added when missing."
  type        = list(string)
  default     = []
}

variable "region_residency" {
  description = "The residency label of each region (eu, us); a region not listed takes europe-* -> eu, us-*/northamerica-*/southamerica-* -> us, else the part of its name before the first '-'."
  type        = map(string)
  default     = {}
}

variable "residency_firestore_location" {
  description = "Where the stored responses and cache entries of each residency other than var.region's live: a Firestore location inside the residency (eu = eur3, a multi-region in Europe)."
  type        = map(string)
  default     = { eu = "eur3", us = "nam5" }
}

variable "domain_name" {
  description = "The one name clients call (gw.example.com) through the global load balancer; null (default) makes none. <residency>.<domain_name> serves each residency's regions alone. Point the names' A records at the load_balancer_ip output."
  type        = string
  default     = null
}

locals {
  regions       = distinct(concat([var.region], var.regions))
  multi_region  = length(local.regions) > 1
  extra_regions = toset([for r in local.regions : r if r != var.region])
  residency = { for r in local.regions : r => lookup(var.region_residency, r,
    startswith(r, "europe-") ? "eu" : (startswith(r, "us-") || startswith(r, "northamerica-") || startswith(r, "southamerica-") ? "us" : split("-", r)[0])
  ) }
  residencies       = distinct([for r in local.regions : local.residency[r]])
  residency_regions = { for res in local.residencies : res => [for r in local.regions : r if local.residency[r] == res] }
  other_residencies = toset([for res in local.residencies : res if res != local.residency[var.region]])

  # What tells each region's gateway where it is, and which content databases are its
  # residency's: the primary residency's are the module's own, the others' are made below.
  region_environment = {
    for r in local.regions : r => merge(
      { FNGATE_REGION = r, FNGATE_RESIDENCY = local.residency[r] },
      local.residency[r] == local.residency[var.region] ? {} : {
        RESPONSES_DATABASE = "${var.name}-responses-${local.residency[r]}"
        CACHE_DATABASE     = "${var.name}-cache-${local.residency[r]}"
      },
    )
  }
  front_end = var.domain_name != null && local.multi_region
  # Every region's function (its Cloud Run service), for the NEGs.
  region_services = merge(
    { (var.region) = google_cloudfunctions2_function.gateway.name },
    { for r, f in google_cloudfunctions2_function.regional : r => f.name },
  )
}

resource "google_cloudfunctions2_function" "regional" {
  for_each    = local.extra_regions
  project     = var.project_id
  location    = each.key
  name        = var.name
  description = "fngate OpenAI-compatible gateway, region ${each.key}"
  labels      = var.labels

  build_config {
    runtime         = "go125"
    entry_point     = "Gateway"
    service_account = var.build_service_account

    source {
      storage_source {
        bucket = local.bucket
        object = google_storage_bucket_object.source.name
      }
    }
  }

  service_config {
    available_memory                 = var.available_memory
    available_cpu                    = var.available_cpu
    max_instance_request_concurrency = var.max_instance_request_concurrency
    min_instance_count               = var.min_instance_count
    max_instance_count               = var.max_instance_count
    timeout_seconds                  = var.timeout_seconds
    service_account_email            = google_service_account.gateway.email
    # The load balancer's NEG reaches it as internal-and-LB traffic; direct calls stay open
    # like the primary's when there is no front end.
    ingress_settings               = local.front_end ? "ALLOW_INTERNAL_AND_GCLB" : "ALLOW_ALL"
    all_traffic_on_latest_revision = true
    environment_variables          = merge(local.environment, local.region_environment[each.key])

    dynamic "secret_environment_variables" {
      for_each = var.secret_env
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }

    dynamic "secret_volumes" {
      for_each = local.has_config ? [1] : []
      content {
        mount_path = dirname(local.config_path)
        project_id = var.project_id
        secret     = google_secret_manager_secret.config[0].secret_id
        versions {
          version = google_secret_manager_secret_version.config[0].version
          path    = basename(local.config_path)
        }
      }
    }
  }

  depends_on = [google_cloudfunctions2_function.gateway]
}

resource "google_cloud_run_service_iam_member" "regional_invoker" {
  for_each = { for p in setproduct(tolist(local.extra_regions), var.public ? ["allUsers"] : var.invoker_members) : "${p[0]}/${p[1]}" => { region = p[0], member = p[1] } }
  project  = var.project_id
  location = each.value.region
  service  = google_cloudfunctions2_function.regional[each.value.region].name
  role     = "roles/run.invoker"
  member   = each.value.member
}

# The other residencies' content: stored responses and cache entries in a database inside
# the residency, which Firestore never copies out of its location.
resource "google_firestore_database" "responses_residency" {
  for_each    = local.other_residencies
  project     = var.project_id
  name        = "${var.name}-responses-${each.key}"
  location_id = var.residency_firestore_location[each.key]
  type        = "FIRESTORE_NATIVE"
}

resource "google_firestore_database" "cache_residency" {
  for_each    = local.other_residencies
  project     = var.project_id
  name        = "${var.name}-cache-${each.key}"
  location_id = var.residency_firestore_location[each.key]
  type        = "FIRESTORE_NATIVE"
}

# The global external Application Load Balancer.
resource "google_compute_region_network_endpoint_group" "gateway" {
  for_each              = local.front_end ? toset(local.regions) : toset([])
  project               = var.project_id
  region                = each.key
  name                  = "${var.name}-${each.key}"
  network_endpoint_type = "SERVERLESS"
  cloud_run {
    service = local.region_services[each.key]
  }
}

# Outlier detection is the failover: a region whose answers are 5xx, or whose connections
# fail, is ejected for a while and the balancer sends its clients to the next region. A
# serverless NEG has no health check of its own.
resource "google_compute_backend_service" "gateway" {
  for_each              = local.front_end ? merge({ all = local.regions }, { for res, rs in local.residency_regions : res => rs }) : {}
  project               = var.project_id
  name                  = "${var.name}-${each.key}"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  protocol              = "HTTPS"

  dynamic "backend" {
    for_each = each.value
    content {
      group = google_compute_region_network_endpoint_group.gateway[backend.value].id
    }
  }

  outlier_detection {
    consecutive_errors                    = 5
    consecutive_gateway_failure           = 3
    enforcing_consecutive_errors          = 100
    enforcing_consecutive_gateway_failure = 100
    max_ejection_percent                  = 50
    interval {
      seconds = 10
    }
    base_ejection_time {
      seconds = 30
    }
  }
}

resource "google_compute_url_map" "gateway" {
  count           = local.front_end ? 1 : 0
  project         = var.project_id
  name            = var.name
  default_service = google_compute_backend_service.gateway["all"].id

  # <residency>.<domain_name>: that residency's regions alone.
  dynamic "host_rule" {
    for_each = local.residencies
    content {
      hosts        = ["${host_rule.value}.${var.domain_name}"]
      path_matcher = "residency-${host_rule.value}"
    }
  }
  dynamic "path_matcher" {
    for_each = local.residencies
    content {
      name            = "residency-${path_matcher.value}"
      default_service = google_compute_backend_service.gateway[path_matcher.value].id
    }
  }

  # On the one name, a client that says its residency (x-fngate-residency: eu) is kept to it.
  host_rule {
    hosts        = [var.domain_name]
    path_matcher = "all"
  }
  path_matcher {
    name            = "all"
    default_service = google_compute_backend_service.gateway["all"].id
    dynamic "route_rules" {
      for_each = local.residencies
      content {
        priority = route_rules.key + 1
        service  = google_compute_backend_service.gateway[route_rules.value].id
        match_rules {
          header_matches {
            header_name = "x-fngate-residency"
            exact_match = route_rules.value
          }
        }
      }
    }
  }
}

resource "google_compute_managed_ssl_certificate" "gateway" {
  count   = local.front_end ? 1 : 0
  project = var.project_id
  name    = var.name
  managed {
    domains = concat([var.domain_name], [for res in local.residencies : "${res}.${var.domain_name}"])
  }
}

resource "google_compute_target_https_proxy" "gateway" {
  count            = local.front_end ? 1 : 0
  project          = var.project_id
  name             = var.name
  url_map          = google_compute_url_map.gateway[0].id
  ssl_certificates = [google_compute_managed_ssl_certificate.gateway[0].id]
}

resource "google_compute_global_address" "gateway" {
  count   = local.front_end ? 1 : 0
  project = var.project_id
  name    = var.name
}

resource "google_compute_global_forwarding_rule" "gateway" {
  count                 = local.front_end ? 1 : 0
  project               = var.project_id
  name                  = var.name
  load_balancing_scheme = "EXTERNAL_MANAGED"
  ip_address            = google_compute_global_address.gateway[0].id
  port_range            = "443"
  target                = google_compute_target_https_proxy.gateway[0].id
}

output "load_balancer_ip" {
  description = "The global load balancer's address (null without domain_name): the A record of domain_name and of each <residency>.<domain_name>."
  value       = local.front_end ? google_compute_global_address.gateway[0].address : null
}

output "regions" {
  description = "Every region the gateway runs in, with its residency: the config's region.regions."
  value       = local.residency
}

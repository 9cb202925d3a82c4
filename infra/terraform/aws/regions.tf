# The gateway in several regions (docs/deploy.md, "Several regions"; docs/design.md, "Across
# regions"). The provider's region is the primary: everything else in this module lives there
# (the control plane, self-repair, the tables' home). Each further region in var.regions gets
# its own function, log group and function URL through the AWS provider's per-resource
# region argument (provider 6), and a replica of each shared table. With var.domain_name set,
# one name routes each client to a healthy region near it: Route 53 latency records, with a
# health check on /healthz, over an API Gateway regional custom domain in each region whose
# HTTP_PROXY integration streams (response_transfer_mode STREAM) from the region's function
# URL. With var.regions empty (the default) nothing here is created and the module is the
# single-region one it was.

variable "regions" {
  description = "Every region the gateway runs in; empty (default) is the provider's region alone. The provider's region is the primary and is added when missing."
  type        = list(string)
  default     = []
}

variable "region_residency" {
  description = "The residency label of each region (eu, us), as keys' residency names it; a region not listed takes the part of its name before the first '-' (eu-west-1 -> eu). The gateway refuses keys pinned to another residency, and stored responses and cache entries replicate only among regions of one residency."
  type        = map(string)
  default     = {}
}

variable "domain_name" {
  description = "The one name clients call (gw.example.com), served from every region by latency; null (default) makes no front end. Each residency also gets <residency>.<domain_name> over its own regions alone, for keys pinned to it."
  type        = string
  default     = null
}

variable "hosted_zone_id" {
  description = "The Route 53 public hosted zone of domain_name (required with it): its latency records, health checks and certificate validation."
  type        = string
  default     = null
}

locals {
  primary      = data.aws_region.current.region
  regions      = distinct(concat([local.primary], var.regions))
  multi_region = length(local.regions) > 1
  # The regions besides the primary: a function and a replica each.
  extra_regions = toset([for r in local.regions : r if r != local.primary])
  residency     = { for r in local.regions : r => lookup(var.region_residency, r, split("-", r)[0]) }
  residencies   = distinct([for r in local.regions : local.residency[r]])
  # Each residency's regions, its first (in var.regions order) holding the table its
  # stored responses and cache entries live in; the primary's residency uses the primary's.
  residency_regions = { for res in local.residencies : res => [for r in local.regions : r if local.residency[r] == res] }
  residency_home    = { for res, rs in local.residency_regions : res => contains(rs, local.primary) ? local.primary : rs[0] }
  # The residencies other than the primary's: a responses and a cache table of their own.
  other_residencies = toset([for res in local.residencies : res if res != local.residency[local.primary]])

  # Tables that hold no content (numbers, key hashes, route states) replicate everywhere;
  # content (stored responses, cached answers) only within its residency.
  shared_replicas  = local.extra_regions
  content_replicas = toset([for r in local.extra_regions : r if local.residency[r] == local.residency[local.primary]])

  # What tells each region's gateway where it is (config: region: {name: $${FNGATE_REGION},
  # residency: $${FNGATE_RESIDENCY}}), and which of the content tables is its residency's.
  region_environment = {
    for r in local.regions : r => merge(
      { FNGATE_REGION = r, FNGATE_RESIDENCY = local.residency[r] },
      local.residency[r] == local.residency[local.primary] ? {} : {
        RESPONSES_TABLE = "${var.name}-responses-${local.residency[r]}"
        CACHE_TABLE     = "${var.name}-cache-${local.residency[r]}"
      },
    )
  }
  front_end = var.domain_name != null && local.multi_region
  # The function URL of each region, for the front end's integrations.
  function_urls = merge(
    { (local.primary) = aws_lambda_function_url.gateway.function_url },
    { for r, u in aws_lambda_function_url.regional : r => u.function_url },
  )
}

resource "terraform_data" "front_end_needs_a_public_url" {
  count = local.front_end ? 1 : 0
  lifecycle {
    precondition {
      condition     = local.public && var.hosted_zone_id != null
      error_message = "The front end (domain_name) needs url_auth_type = \"NONE\" (API Gateway passes the client's Authorization, the gateway key, to the function URL, which cannot also take a SigV4 signature) and hosted_zone_id."
    }
  }
}

# The further regions' functions: the primary's code, role and settings, each with its own
# region's name and residency and its residency's content tables.
resource "aws_cloudwatch_log_group" "regional" {
  for_each          = local.extra_regions
  region            = each.key
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_lambda_function" "regional" {
  for_each         = local.extra_regions
  region           = each.key
  function_name    = var.name
  description      = "fngate OpenAI-compatible gateway (streaming function URL), region ${each.key}"
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
    # Self-repair and the provider-error bus are the primary's: a further region publishes
    # nothing (docs/deploy.md says what that leaves out).
    variables = merge({ for k, v in local.environment : k => v if k != "PROVIDER_ERROR_BUS" }, local.region_environment[each.key])
  }

  tags       = var.tags
  depends_on = [aws_cloudwatch_log_group.regional, aws_iam_role_policy.regions, aws_dynamodb_table.counters, aws_dynamodb_table.keys, aws_dynamodb_table.route_state]
}

resource "aws_lambda_function_url" "regional" {
  for_each           = local.extra_regions
  region             = each.key
  function_name      = aws_lambda_function.regional[each.key].function_name
  authorization_type = var.url_auth_type
  invoke_mode        = "RESPONSE_STREAM"
}

resource "aws_lambda_permission" "regional_public_url" {
  for_each               = local.public ? local.extra_regions : toset([])
  region                 = each.key
  statement_id           = "FngatePublicInvokeFunctionUrl"
  action                 = "lambda:InvokeFunctionUrl"
  function_name          = aws_lambda_function.regional[each.key].function_name
  principal              = "*"
  function_url_auth_type = "NONE"
}

resource "aws_lambda_permission" "regional_public_invoke" {
  for_each                 = local.public ? local.extra_regions : toset([])
  region                   = each.key
  statement_id             = "FngatePublicInvokeViaFunctionUrl"
  action                   = "lambda:InvokeFunction"
  function_name            = aws_lambda_function.regional[each.key].function_name
  principal                = "*"
  invoked_via_function_url = true
}

# The further residencies' content tables: the schema of responses.tf and cache.tf, in the
# residency's first region, replicated to its other regions alone.
resource "aws_dynamodb_table" "responses_residency" {
  for_each     = local.other_residencies
  region       = local.residency_home[each.key]
  name         = "${var.name}-responses-${each.key}"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"

  stream_enabled   = length(local.residency_regions[each.key]) > 1
  stream_view_type = length(local.residency_regions[each.key]) > 1 ? "NEW_AND_OLD_IMAGES" : null

  attribute {
    name = "pk"
    type = "S"
  }

  ttl {
    attribute_name = "expires_at"
    enabled        = true
  }

  dynamic "replica" {
    for_each = [for r in local.residency_regions[each.key] : r if r != local.residency_home[each.key]]
    content {
      region_name = replica.value
    }
  }

  tags = var.tags
}

resource "aws_dynamodb_table" "cache_residency" {
  for_each     = local.other_residencies
  region       = local.residency_home[each.key]
  name         = "${var.name}-cache-${each.key}"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"

  stream_enabled   = length(local.residency_regions[each.key]) > 1
  stream_view_type = length(local.residency_regions[each.key]) > 1 ? "NEW_AND_OLD_IMAGES" : null

  attribute {
    name = "pk"
    type = "S"
  }

  ttl {
    attribute_name = "expires_at"
    enabled        = true
  }

  dynamic "replica" {
    for_each = [for r in local.residency_regions[each.key] : r if r != local.residency_home[each.key]]
    content {
      region_name = replica.value
    }
  }

  tags = var.tags
}

# The role is global; the primary's policies name the primary's tables. A further region's
# function reaches its own region's replicas (a replica has its table's name and its region's
# ARN), its logs, and its residency's content tables.
data "aws_iam_policy_document" "regions" {
  count = local.multi_region ? 1 : 0

  statement {
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = [for r in local.extra_regions : "arn:aws:logs:${r}:${data.aws_caller_identity.current.account_id}:log-group:/aws/lambda/${var.name}:*"]
  }
  statement {
    actions = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query", "dynamodb:BatchGetItem"]
    resources = flatten([for r in local.extra_regions : [
      for t in ["counters", "keys", "routestate"] : ["arn:aws:dynamodb:${r}:${data.aws_caller_identity.current.account_id}:table/${var.name}-${t}", "arn:aws:dynamodb:${r}:${data.aws_caller_identity.current.account_id}:table/${var.name}-${t}/index/*"]
    ]])
  }
  statement {
    actions = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"]
    resources = [for r in local.extra_regions : "arn:aws:dynamodb:${r}:${data.aws_caller_identity.current.account_id}:table/${
      local.residency[r] == local.residency[local.primary] ? "${var.name}-responses" : "${var.name}-responses-${local.residency[r]}"
    }"]
  }
  statement {
    actions = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]
    resources = [for r in local.extra_regions : "arn:aws:dynamodb:${r}:${data.aws_caller_identity.current.account_id}:table/${
      local.residency[r] == local.residency[local.primary] ? "${var.name}-cache" : "${var.name}-cache-${local.residency[r]}"
    }"]
  }
}

resource "aws_iam_role_policy" "regions" {
  count  = local.multi_region ? 1 : 0
  name   = "regions"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.regions[0].json
}

# The front end, per region: an edge-free REST API whose every path goes, streaming, to the
# region's function URL; a regional custom domain with its own certificate; a health check of
# /healthz; latency records for the one name and for the residency's name.
resource "aws_acm_certificate" "front" {
  for_each                  = local.front_end ? toset(local.regions) : toset([])
  region                    = each.key
  domain_name               = var.domain_name
  subject_alternative_names = ["${local.residency[each.key]}.${var.domain_name}"]
  validation_method         = "DNS"
  tags                      = var.tags
}

# A name's validation record is the same in every region's certificate: one record each,
# written once whichever certificate asks.
resource "aws_route53_record" "front_validation" {
  for_each = local.front_end ? {
    for o in flatten([for r, c in aws_acm_certificate.front : [for d in c.domain_validation_options : d]]) : o.domain_name => o...
  } : {}
  zone_id         = var.hosted_zone_id
  name            = each.value[0].resource_record_name
  type            = each.value[0].resource_record_type
  records         = [each.value[0].resource_record_value]
  ttl             = 300
  allow_overwrite = true
}

resource "aws_acm_certificate_validation" "front" {
  for_each                = aws_acm_certificate.front
  region                  = each.key
  certificate_arn         = each.value.arn
  validation_record_fqdns = [for r in aws_route53_record.front_validation : r.fqdn]
}

resource "aws_api_gateway_rest_api" "front" {
  for_each = local.front_end ? toset(local.regions) : toset([])
  region   = each.key
  name     = "${var.name}-front"
  # Only the custom domain serves: the execute-api URL would bypass the latency routing.
  disable_execute_api_endpoint = true
  endpoint_configuration {
    types = ["REGIONAL"]
  }
  tags = var.tags
}

resource "aws_api_gateway_resource" "front_proxy" {
  for_each    = aws_api_gateway_rest_api.front
  region      = each.key
  rest_api_id = each.value.id
  parent_id   = each.value.root_resource_id
  path_part   = "{proxy+}"
}

resource "aws_api_gateway_method" "front_proxy" {
  for_each      = aws_api_gateway_rest_api.front
  region        = each.key
  rest_api_id   = each.value.id
  resource_id   = aws_api_gateway_resource.front_proxy[each.key].id
  http_method   = "ANY"
  authorization = "NONE" # the gateway's keys do the auth
  request_parameters = {
    "method.request.path.proxy" = true
  }
}

# HTTP_PROXY to the function URL, streamed: the request and its headers (Authorization
# included) pass through; the answer streams for up to 15 minutes, with an idle timeout of
# 5 minutes on a regional endpoint (docs/deploy.md cites the pages).
resource "aws_api_gateway_integration" "front_proxy" {
  for_each                = aws_api_gateway_rest_api.front
  region                  = each.key
  rest_api_id             = each.value.id
  resource_id             = aws_api_gateway_resource.front_proxy[each.key].id
  http_method             = aws_api_gateway_method.front_proxy[each.key].http_method
  type                    = "HTTP_PROXY"
  integration_http_method = "ANY"
  uri                     = "${local.function_urls[each.key]}{proxy}"
  request_parameters = {
    "integration.request.path.proxy" = "method.request.path.proxy"
  }
  response_transfer_mode = "STREAM"
  timeout_milliseconds   = min(var.timeout * 1000, 900000)
}

resource "aws_api_gateway_deployment" "front" {
  for_each    = aws_api_gateway_rest_api.front
  region      = each.key
  rest_api_id = each.value.id
  triggers = {
    redeploy = sha1(jsonencode([aws_api_gateway_integration.front_proxy[each.key].uri, aws_api_gateway_integration.front_proxy[each.key].response_transfer_mode]))
  }
  lifecycle {
    create_before_destroy = true
  }
  depends_on = [aws_api_gateway_integration.front_proxy]
}

resource "aws_api_gateway_stage" "front" {
  for_each      = aws_api_gateway_rest_api.front
  region        = each.key
  rest_api_id   = each.value.id
  deployment_id = aws_api_gateway_deployment.front[each.key].id
  stage_name    = "v"
  tags          = var.tags
}

# The one name and the residency's name, in each region, on its own certificate.
locals {
  front_names = local.front_end ? merge([for r in local.regions : {
    "${r}/all"       = { region = r, name = var.domain_name }
    "${r}/residency" = { region = r, name = "${local.residency[r]}.${var.domain_name}" }
  }]...) : {}
}

resource "aws_api_gateway_domain_name" "front" {
  for_each                 = local.front_names
  region                   = each.value.region
  domain_name              = each.value.name
  regional_certificate_arn = aws_acm_certificate_validation.front[each.value.region].certificate_arn
  security_policy          = "TLS_1_2"
  endpoint_configuration {
    types = ["REGIONAL"]
  }
  tags = var.tags
}

resource "aws_api_gateway_base_path_mapping" "front" {
  for_each    = local.front_names
  region      = each.value.region
  api_id      = aws_api_gateway_rest_api.front[each.value.region].id
  stage_name  = aws_api_gateway_stage.front[each.value.region].stage_name
  domain_name = aws_api_gateway_domain_name.front[each.key].domain_name
}

# /healthz of each region's function URL: a region whose function fails its checks leaves
# the latency answers within about a minute (3 failures 30 s apart, from Route 53's checkers).
resource "aws_route53_health_check" "front" {
  for_each          = local.front_end ? toset(local.regions) : toset([])
  fqdn              = trimsuffix(trimprefix(local.function_urls[each.key], "https://"), "/")
  type              = "HTTPS"
  port              = 443
  resource_path     = "/healthz"
  request_interval  = 30
  failure_threshold = 3
  tags              = merge(var.tags, { Name = "${var.name}-${each.key}" })
}

resource "aws_route53_record" "front" {
  for_each       = local.front_names
  zone_id        = var.hosted_zone_id
  name           = each.value.name
  type           = "A"
  set_identifier = each.value.region
  latency_routing_policy {
    region = each.value.region
  }
  health_check_id = aws_route53_health_check.front[each.value.region].id
  alias {
    name                   = aws_api_gateway_domain_name.front[each.key].regional_domain_name
    zone_id                = aws_api_gateway_domain_name.front[each.key].regional_zone_id
    evaluate_target_health = true
  }
}

output "regions" {
  description = "Every region the gateway runs in, with its residency: the config's region.regions."
  value       = local.residency
}

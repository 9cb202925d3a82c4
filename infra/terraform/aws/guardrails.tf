# Guardrails (guardrails: in the config; core/guardrail). kind: bedrock calls Amazon Bedrock's
# ApplyGuardrail (bedrock-runtime) from the gateway; kind: model-armor is Google Cloud's and
# kind: local needs no cloud. The config names the guardrails, so this module only grants the
# call, on exactly the guardrails listed, and only when some are.

# Amazon Bedrock's Service Authorization Reference
# (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonbedrock.html)
# names the action bedrock:ApplyGuardrail on resource type guardrail,
# arn:${Partition}:bedrock:${Region}:${Account}:guardrail/${GuardrailId}, and on
# guardrail-profile for cross-Region inference. The version is a request parameter, not part
# of the ARN: a grant covers every version of the guardrail.
data "aws_iam_policy_document" "guardrails" {
  count = length(var.guardrail_arns) > 0 ? 1 : 0

  statement {
    actions   = ["bedrock:ApplyGuardrail"]
    resources = var.guardrail_arns
  }
}

resource "aws_iam_role_policy" "guardrails" {
  count  = length(var.guardrail_arns) > 0 ? 1 : 0
  name   = "guardrails"
  role   = aws_iam_role.gateway.id
  policy = data.aws_iam_policy_document.guardrails[0].json
}

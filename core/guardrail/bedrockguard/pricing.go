package bedrockguard

import "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

// What Bedrock Guardrails charge per 1,000 text units (a text unit is up to 1,000
// characters), per policy, in USD: the Guardrails section of https://aws.amazon.com/bedrock/pricing/
// as read on 2026-12-02 (the prices since AWS's December 2024 reduction). Word filters and
// custom regexes (sensitiveInformationPolicyFreeUnits) are free. Images are priced per image
// judged by the content filters (contentPolicyImageUnits); that price was not re-read from
// the pricing page with the others (no access when it was added): check it there.
const (
	contentPolicyPerImage         = 0.00075
	contentPolicyPer1K            = 0.15
	topicPolicyPer1K              = 0.15
	sensitiveInformationPer1K     = 0.10
	contextualGroundingPer1K      = 0.10
	automatedReasoningPolicyPer1K = 0.17
)

// usage is the text units of an answer, summed over its policies (free ones included), and
// what the paid ones cost.
func usage(u *types.GuardrailUsage) (units int, costUSD float64) {
	if u == nil {
		return 0, 0
	}
	for _, p := range []struct {
		n     *int32
		per1K float64
	}{
		{u.ContentPolicyUnits, contentPolicyPer1K},
		{u.ContentPolicyImageUnits, contentPolicyPerImage * 1000}, // an image is one unit
		{u.TopicPolicyUnits, topicPolicyPer1K},
		{u.SensitiveInformationPolicyUnits, sensitiveInformationPer1K},
		{u.ContextualGroundingPolicyUnits, contextualGroundingPer1K},
		{u.AutomatedReasoningPolicyUnits, automatedReasoningPolicyPer1K},
		{u.WordPolicyUnits, 0},
		{u.SensitiveInformationPolicyFreeUnits, 0},
	} {
		if p.n != nil && *p.n > 0 { // a negative count is the service's nonsense: not ours to subtract
			units += int(*p.n)
			costUSD += float64(*p.n) * p.per1K / 1000
		}
	}
	return units, costUSD
}

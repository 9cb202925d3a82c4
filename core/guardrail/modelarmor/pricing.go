package modelarmor

import "unicode/utf8"

// Model Armor is priced per token processed: USD 0.10 per million tokens, after a free
// 2 million tokens per month per billing account, as Google's pricing page gives it
// (https://cloud.google.com/security-command-center/pricing#model-armor; the figure as
// published in 2025, not re-read on 2026-12-02: the reference search available then did not
// carry the page, so check it before relying on CostUSD for billing). A call's cost cannot
// know the month's free tier, so it is the list price. The service reports no token count:
// tokens are estimated as characters/4 (the ratio Google gives for its models' English text).
// Templates that use Sensitive Data Protection are also billed by SDP, which is not counted.
const usdPerMillionTokens = 0.10

// characters is what a text counts for: its characters (code points), not bytes.
func characters(text string) int { return utf8.RuneCountInString(text) }

// cost is the list price of checking units characters.
func cost(units int) float64 {
	tokens := float64(units) / 4
	return tokens * usdPerMillionTokens / 1e6
}

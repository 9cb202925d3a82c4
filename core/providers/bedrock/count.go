package bedrock

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// CountTokens asks Bedrock's CountTokens for the exact input count of req, which Bedrock
// offers for Claude models: an InvokeModel route sends the InvokeModel body it would send
// (the invokeModel form), a Claude model forced onto Converse the Converse input (the
// converse form). Other models cannot be counted; the error is unsupported, so the gateway
// asks the next route or estimates.
func (p *Provider) CountTokens(ctx context.Context, req *llm.Request, t providers.Target) (int, error) {
	var in types.CountTokensInput
	switch a, _ := apiOf(t); {
	case a == viaInvoke:
		in = &types.CountTokensInputMemberInvokeModel{Value: types.InvokeModelTokensRequest{Body: invokeBody(countable(req, t), t)}}
	case claude(t.Model):
		c, err := buildConverse(req, t)
		if err != nil {
			return 0, err
		}
		in = &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{
			Messages: c.Messages, System: c.System, ToolConfig: c.ToolConfig, AdditionalModelRequestFields: c.AdditionalModelRequestFields}}
	default:
		return 0, &providers.Error{Class: providers.Unsupported, Provider: displayName,
			Message: "CountTokens counts Claude models only, not " + t.Model}
	}
	out, err := p.client.CountTokens(ctx, &bedrockruntime.CountTokensInput{ModelId: aws.String(t.Model), Input: in})
	if err != nil {
		return 0, classify(ctx, err)
	}
	if out.InputTokens == nil || *out.InputTokens < 0 {
		return 0, &providers.Error{Class: providers.Unavailable, Provider: displayName, Message: "unreadable CountTokens answer"}
	}
	return int(*out.InputTokens), nil
}

// countable is req as CountTokens takes it in an InvokeModel body, which Bedrock checks as it
// would check the call itself: max_tokens, required there, above any thinking budget, and no
// token-counting beta, which names Anthropic's own count endpoint rather than a feature of
// the model.
func countable(req *llm.Request, t providers.Target) *llm.Request {
	c := *req
	n := anthropic.DefaultMaxTokens
	if t.MaxOutputTokens > 0 {
		n = t.MaxOutputTokens
	}
	if th := req.Thinking; th != nil && th.Type == llm.ThinkingEnabled && th.BudgetTokens >= n {
		n = th.BudgetTokens + 1
	}
	c.MaxTokens = &n
	if a := req.Anthropic; a != nil {
		ac := *a
		ac.Betas = nil
		for _, b := range a.Betas {
			if !strings.HasPrefix(b, "token-counting-") {
				ac.Betas = append(ac.Betas, b)
			}
		}
		c.Anthropic = &ac
	}
	return &c
}

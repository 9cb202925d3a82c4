package openaicompat

import (
	"context"
	"strconv"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// CheckCompletion: every OpenAI-wire kind serves /v1/completions (OpenAI only for its legacy
// instruct models, which the upstream itself enforces).
func (p *Provider) CheckCompletion(*openai.CompletionRequest, providers.Target) *openai.Error {
	return nil
}

// Complete makes a non-streaming legacy completion call.
func (p *Provider) Complete(ctx context.Context, req *openai.CompletionRequest, t providers.Target) (*openai.Completion, error) {
	resp, err := p.post(ctx, p.completionsURL, appendCompletionBody(nil, req, t.Model, false), false)
	if err != nil {
		return nil, err
	}
	defer drain(resp.Body)
	var out completion
	if err := readCompletion(resp, &out, p.name); err != nil {
		return nil, err
	}
	text := ""
	if out.content != nil {
		text = *out.content
	}
	c := &openai.Completion{Content: &text, FinishReason: out.finish}
	if c.FinishReason == "" {
		c.FinishReason = openai.FinishStop
	}
	if out.usage != nil {
		c.Usage = *out.usage
	}
	return c, nil
}

// CompleteStream starts a streaming legacy completion call.
func (p *Provider) CompleteStream(ctx context.Context, req *openai.CompletionRequest, t providers.Target) (providers.Stream, error) {
	resp, err := p.post(ctx, p.completionsURL, appendCompletionBody(nil, req, t.Model, true), true)
	if err != nil {
		return nil, err
	}
	return newStream(resp.Body, p.name, true), nil
}

func appendCompletionBody(b []byte, req *openai.CompletionRequest, model string, stream bool) []byte {
	b = append(b, `{"model":`...)
	b = openai.AppendString(b, model)
	b = append(b, `,"prompt":`...)
	b = openai.AppendString(b, *req.Prompt)
	if req.MaxTokens != nil {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(*req.MaxTokens), 10)
	}
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = strconv.AppendFloat(b, *req.Temperature, 'g', -1, 64)
	}
	if stream {
		b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}')
}

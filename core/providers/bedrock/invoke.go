package bedrock

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// Version is the anthropic_version Bedrock's Anthropic Messages body must carry.
const Version = "bedrock-2023-05-31"

// jsonType is the content type of InvokeModel bodies, both ways.
const jsonType = "application/json"

// checkInvoke refuses what a Claude model cannot serve through InvokeModel: the Messages
// API's own rules (anthropic.Check), which the body shares; everything the Messages door
// carries goes through (cache_control, thinking, betas, server tools, documents), and what
// Bedrock itself does not take it refuses with a 400 the gateway relays without failing over.
func checkInvoke(req *llm.Request, t providers.Target) *llm.Error {
	if req.Op == llm.OpCompletion {
		return llm.UnsupportedEndpoint(req.Model, displayName)
	}
	return anthropic.Check(req, anthropic.ModelOf(t.Model))
}

// invokeBody is the InvokeModel body of req: Anthropic's Messages body without "model" (the
// model is in the URL), with anthropic_version and the client's betas as anthropic_beta. It
// never carries "stream": the streaming call is InvokeModelWithResponseStream, and Bedrock
// refuses the key as extraneous (the Anthropic SDKs' Bedrock clients delete it too).
func invokeBody(req *llm.Request, t providers.Target) []byte {
	return anthropic.BuildRequest(req, t, anthropic.RequestOptions{OmitModel: true, AnthropicVersion: Version, BetasInBody: true,
		Model: anthropic.ModelOf(t.Model)})
}

// invoke makes one InvokeModel call; the answer is Anthropic's message object, which the
// Messages door passes on with only the model name replaced.
func (p *Provider) invoke(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	out, err := p.client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(t.Model),
		Body:        invokeBody(req, t),
		ContentType: aws.String(jsonType),
		Accept:      aws.String(jsonType),
	})
	if err != nil {
		return nil, classify(ctx, err)
	}
	a, err := anthropic.ParseResponseFor(out.Body, req, anthropic.ModelOf(t.Model))
	if err != nil {
		return nil, providers.AsError(ctx, err, displayName)
	}
	return a, nil
}

// invokeStream starts one InvokeModelWithResponseStream call. Its chunk events carry
// Anthropic's stream events, which the Anthropic translator reads as it reads the API's
// own stream (see chunkReader); with a Messages door client they pass through verbatim.
func (p *Provider) invokeStream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	out, err := p.client.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{
		ModelId:     aws.String(t.Model),
		Body:        invokeBody(req, t),
		ContentType: aws.String(jsonType),
		Accept:      aws.String(jsonType),
	})
	if err != nil {
		return nil, classify(ctx, err)
	}
	r := &chunkReader{ctx: ctx, es: out.GetStream()}
	return anthropic.NewStreamFor(ctx, r, displayName, req, anthropic.ModelOf(t.Model)), nil
}

// Package bedrockguard is the bedrock kind of guardrail: an Amazon Bedrock guardrail applied
// through the runtime's ApplyGuardrail, one call per Check, with the SDK's retries off (the
// gateway bounds each call and decides what a failure means).
//
//	bedrockguard.go  New, Check, CheckImages: the client and the call
//	verdict.go       an ApplyGuardrail answer -> guardrail.Verdict (action, masks, categories)
//	pricing.go       text units and what they cost
//	errors.go        SDK and service errors -> *guardrail.Error
package bedrockguard

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
)

// Checker is one Bedrock guardrail (id and version) in one region. It is safe for concurrent
// use.
type Checker struct {
	client  *bedrockruntime.Client
	id      string
	version string
}

var _ guardrail.ImageChecker = (*Checker)(nil)

// New makes the checker of g (validated config.Guardrail of kind bedrock) on cfg (the
// platform's aws.Config; g.Region, when set, overrides cfg.Region). It contacts nothing.
func New(g *config.Guardrail, cfg aws.Config) (*Checker, error) {
	if g.Region != "" {
		cfg.Region = g.Region
	}
	if cfg.Region == "" {
		return nil, errors.New("guardrail " + g.Name + ": region is required (set region on the guardrail, or AWS_REGION)")
	}
	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		o.Retryer = aws.NopRetryer{}
		o.RetryMaxAttempts = 0 // AWS_MAX_ATTEMPTS must not wrap the no-op retryer
		// A full slice expression: the config's options must not see this one.
		o.APIOptions = append(o.APIOptions[:len(o.APIOptions):len(o.APIOptions)], limitAnswer)
		if o.HTTPClient != nil {
			// The SDK closes a request body net/http may still be checking (awsconf/httpclient.go).
			o.HTTPClient = awsconf.SafeBodies(o.HTTPClient)
		}
	})
	o := client.Options()
	bearer := o.BearerAuthTokenProvider != nil && len(o.AuthSchemePreference) > 0 && o.AuthSchemePreference[0] == "httpBearerAuth"
	if !bearer && o.Credentials == nil {
		// The SDK dereferences missing credentials at the first call and panics.
		return nil, errors.New("guardrail " + g.Name + ": no AWS credentials: configure the default credentials chain")
	}
	return &Checker{client: client, id: g.ID, version: g.Version}, nil
}

// Check applies the guardrail to texts in one call, a text block per non-empty text (an
// empty one has nothing to assess, and Bedrock refuses a blank block); the verdict's Masked
// keeps one entry per text all the same. Texts that are all empty pass without a call.
func (c *Checker) Check(ctx context.Context, src guardrail.Source, texts []string) (guardrail.Verdict, error) {
	return c.CheckImages(ctx, src, texts, nil)
}

// CheckImages is Check with images, an image block each after the texts' blocks: Bedrock
// judges them by the guardrail's image content filters (where it has none, they pass), and
// blocks or passes an image, never masks one.
func (c *Checker) CheckImages(ctx context.Context, src guardrail.Source, texts []string, images []guardrail.Image) (guardrail.Verdict, error) {
	in := &bedrockruntime.ApplyGuardrailInput{
		GuardrailIdentifier: aws.String(c.id),
		GuardrailVersion:    aws.String(c.version),
		Source:              types.GuardrailContentSourceInput,
	}
	if src == guardrail.Output {
		in.Source = types.GuardrailContentSourceOutput
	}
	sent := make([]int, 0, len(texts)) // sent[block] is the index of its text
	for i, t := range texts {
		if t == "" {
			continue
		}
		in.Content = append(in.Content, &types.GuardrailContentBlockMemberText{Value: types.GuardrailTextBlock{Text: aws.String(t)}})
		sent = append(sent, i)
	}
	first, rest := images[:min(len(images), maxImages)], images[min(len(images), maxImages):]
	in.Content = appendImages(in.Content, first)
	if len(in.Content) == 0 {
		return guardrail.Verdict{}, nil
	}
	out, err := c.client.ApplyGuardrail(ctx, in)
	if err != nil {
		return guardrail.Verdict{}, c.classify(ctx, err)
	}
	v, err := verdict(out, texts, sent)
	// Bedrock takes at most maxImages a call: the rest go in calls of their own, which can
	// only block (there is no text in them to mask).
	for len(rest) > 0 && err == nil && v.Action != guardrail.Block {
		batch := rest[:min(len(rest), maxImages)]
		rest = rest[len(batch):]
		more := *in
		more.Content = appendImages(nil, batch)
		out, cerr := c.client.ApplyGuardrail(ctx, &more)
		if cerr != nil {
			return guardrail.Verdict{}, c.classify(ctx, cerr)
		}
		w, werr := verdict(out, nil, nil)
		v.Units, v.CostUSD, err = v.Units+w.Units, v.CostUSD+w.CostUSD, werr
		if w.Action == guardrail.Block {
			v.Action, v.Masked, v.Categories = guardrail.Block, nil, append(v.Categories, w.Categories...)
		}
	}
	return v, err
}

// maxImages is what one ApplyGuardrail call takes: "a maximum of 20 images for a single
// request" (User Guide, image content filters), each at most 4 MB, which the service itself
// refuses (ValidationException: on_error decides).
const maxImages = 20

func appendImages(content []types.GuardrailContentBlock, images []guardrail.Image) []types.GuardrailContentBlock {
	for _, im := range images {
		content = append(content, &types.GuardrailContentBlockMemberImage{Value: types.GuardrailImageBlock{
			Format: types.GuardrailImageFormat(im.Format), Source: &types.GuardrailImageSourceMemberBytes{Value: im.Data}}})
	}
	return content
}

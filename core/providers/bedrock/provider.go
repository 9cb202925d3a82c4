// Package bedrock serves the gateway's requests through the Amazon Bedrock runtime, with the
// AWS SDK for Go v2 doing the signing, the credentials and the binary event stream. A route
// reaches its model through one of two APIs:
//
//   - InvokeModel / InvokeModelWithResponseStream for Anthropic Claude models, whose body is
//     Anthropic's Messages body (built by the anthropic package, without "model" and
//     "stream", with anthropic_version bedrock-2023-05-31 and the client's betas as
//     anthropic_beta). Every Claude feature the Messages door carries goes through
//     (cache_control, thinking, betas, tools, images, documents, server tools), checked by
//     the Messages API's own rules (anthropic.Check); what Bedrock does not take it refuses
//     itself with a 400, which the gateway relays without failing over. Answers and stream
//     events are Anthropic's, read by the anthropic package's translators, and reach a
//     Messages door client verbatim (with the gateway's model name).
//   - Converse / ConverseStream for every other model, translated from the gateway's request.
//
// A model is Claude when its id contains "anthropic.claude": foundation models, cross-region
// inference profiles (us.anthropic.claude-..., global.anthropic.claude-...) and ARNs that
// name either. A route forces the API with api: invoke (an application inference profile or
// a provisioned throughput ARN of a Claude model, whose id does not say) or api: converse.
//
// The Converse translation carries what Converse can: system text, cache_control as
// cachePoint blocks (on Claude and Nova, the models that cache; elsewhere the hint is left
// out), base64 images (png, jpeg, gif, webp) in messages and tool results, tool results with
// is_error as status "error" (on Claude and Nova; elsewhere "Error: " in the text), stop
// sequences, top_p, top_k (additionalModelRequestFields), adaptive thinking (the model
// decides) and reasoning in answers. It refuses, with the reason, what it cannot: a thinking
// budget, Anthropic-only blocks and fields (documents, server tools, citations, Files API
// images, output_config, context_management beyond clearing thinking), images by URL,
// strict tools, tool_choice none, disable_parallel_tool_use, a developer message, a
// conversation that starts with the assistant or ends with it (prefill), blank turns.
// Thinking from earlier turns is not sent, as Anthropic itself drops it from the context.
// Anthropic betas mean nothing on Converse and are not sent. Under the extended profile a JSON
// response_format is outputConfig.textFormat on the Claude models with structured outputs,
// else the answer tool on the models whose toolChoice can force one (Claude, Nova, Mistral),
// else refused (converse_structured.go); seed, penalties, participant names and
// parallel_tool_calls false are refused on Converse.
//
// Connection settings (config.Connection):
//
//	region        the AWS region (else AWS_REGION / the shared config, as the SDK resolves it)
//	endpoint      overrides the runtime endpoint, for tests and VPC endpoints
//	bearer_token  a Bedrock API key, sent as a bearer token instead of SigV4 signing; the SDK
//	              also honours AWS_BEARER_TOKEN_BEDROCK on its own (this setting wins)
//	profile       a shared-config profile to take credentials and region from
//
// Credentials come from the awsconf.Loader the platform main registers the kind with: the
// SDK's default chain (environment, shared files, SSO, web identity, container and instance
// roles) through awsconf/sdkconfig, or on Lambda only the role credentials in the
// environment. They are resolved lazily at the first call: building the provider does no
// network I/O. The SDK never retries: the gateway owns retries and failover.
//
// Token counting (CountTokens) uses Bedrock's CountTokens, which counts Claude models; other
// models report unsupported, and the gateway estimates.
//
// Embeddings (POST /v1/embeddings) go through InvokeModel with each family's own body: Amazon
// Titan Text Embeddings take one text per call, Cohere Embed 96; a larger request is split
// into that many calls, run a few at a time, and fails whole when one of them fails.
//
//	api.go                which API a route uses (Claude detection, route api)
//	converse_check.go     what Converse refuses (checkConverse)
//	converse_request.go   llm.Request -> Converse input
//	converse_response.go  Converse answer -> llm.Answer; stop reasons; usage
//	converse_stream.go    ConverseStream events -> deltas
//	converse_structured.go  a JSON response_format: outputConfig or the answer tool
//	invoke.go             InvokeModel with Anthropic's body (checkInvoke, invokeBody)
//	invoke_stream.go      InvokeModelWithResponseStream chunks -> Anthropic's SSE for its translator
//	count.go              CountTokens
//	embeddings.go         embeddings through InvokeModel: the families, their checks and batches
//	embeddings_titan.go   Amazon Titan Text Embeddings v2 (and v1): one text per call
//	embeddings_cohere.go  Cohere Embed v3 and v4: 96 texts per call, the task as input_type
//	errors.go             exceptions -> error classes, for every operation
//	bodylimit.go          the bound on non-streamed answers
package bedrock

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go/auth/bearer"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Kind is the connection kind.
const Kind = "bedrock"

// displayName names the provider in messages, such as the 501 for /v1/completions.
const displayName = "Amazon Bedrock"

// Register adds the bedrock kind to r. load builds the AWS configuration: the platform main
// picks it (awsconf.FromEnvironment on Lambda, sdkconfig.Load elsewhere; see awsconf).
func Register(r providers.Registry, load awsconf.Loader) { r[Kind] = Factory(load) }

// Factory returns the provider factory over load.
func Factory(load awsconf.Loader) providers.Factory {
	return func(conn *config.Connection, env providers.Env) (providers.Provider, error) {
		return newProvider(conn, env, load)
	}
}

// Provider is one Bedrock connection: a region, an endpoint and a set of credentials.
type Provider struct {
	client *bedrockruntime.Client
}

// newProvider builds the provider of a bedrock connection. It reads the environment (and,
// with the full loader, the shared config files) but contacts nothing.
func newProvider(conn *config.Connection, env providers.Env, load awsconf.Loader) (providers.Provider, error) {
	// The context only bounds credential-source setup, which reads files and the environment.
	cfg, err := load(context.Background(), awsconf.Options{Region: conn.Region, Profile: conn.ExtraString("profile")})
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		return nil, errors.New("region is required (set region on the connection, or AWS_REGION)")
	}
	token := conn.ExtraString("bearer_token")
	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		o.Retryer = aws.NopRetryer{}
		// A full slice expression: the config's options must not see this one.
		o.APIOptions = append(o.APIOptions[:len(o.APIOptions):len(o.APIOptions)], limitAnswers)
		o.RetryMaxAttempts = 0 // AWS_MAX_ATTEMPTS must not wrap the no-op retryer
		// The shared client keeps connections warm across providers, but a custom CA bundle
		// (AWS_CA_BUNDLE) lives only in the SDK's own client.
		if env.HTTPClient != nil && os.Getenv("AWS_CA_BUNDLE") == "" {
			o.HTTPClient = env.HTTPClient
		}
		// Whichever client it is: the SDK closes a request body net/http may still be
		// checking, which can close the connection under an answer already arriving
		// (awsconf/httpclient.go). A loader that set no client leaves the SDK's own here.
		o.HTTPClient = awsconf.SafeBodies(o.HTTPClient)
		if conn.Endpoint != "" {
			o.BaseEndpoint = aws.String(conn.Endpoint)
		}
		if o.Credentials != nil {
			o.Credentials = markedCredentials{o.Credentials}
		}
		if token != "" {
			// After the SDK's own AWS_BEARER_TOKEN_BEDROCK handling, so the connection wins.
			o.BearerAuthTokenProvider = bearer.StaticTokenProvider{Token: bearer.Token{Value: token}}
			o.AuthSchemePreference = []string{"httpBearerAuth"}
		}
	})
	o := client.Options()
	usesBearer := o.BearerAuthTokenProvider != nil && len(o.AuthSchemePreference) > 0 && o.AuthSchemePreference[0] == "httpBearerAuth"
	switch {
	case usesBearer && strings.HasPrefix(strings.ToLower(conn.Endpoint), "http://"):
		// The SDK refuses to send a bearer token in clear text; say so now, not at every call.
		return nil, errors.New("a Bedrock API key (bearer_token or AWS_BEARER_TOKEN_BEDROCK) needs an https endpoint, got " + conn.Endpoint)
	case !usesBearer && o.Credentials == nil:
		// The SDK dereferences missing credentials at the first call and panics.
		return nil, errors.New("no AWS credentials: configure the default credentials chain or a bearer_token")
	}
	return &Provider{client: client}, nil
}

// markedCredentials tags a failure to obtain credentials, so it is logged as the gateway's
// auth problem rather than as an unreachable provider.
type markedCredentials struct{ aws.CredentialsProvider }

func (m markedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := m.CredentialsProvider.Retrieve(ctx)
	if err != nil && ctx.Err() == nil {
		return c, &credentialsError{err}
	}
	return c, err
}

// IsCredentialsProvider lets the SDK still recognise the provider inside, such as the
// anonymous credentials it refuses to sign with.
func (m markedCredentials) IsCredentialsProvider(target aws.CredentialsProvider) bool {
	return aws.IsCredentialsProvider(m.CredentialsProvider, target)
}

// ProviderSources keeps the credential source in the SDK's user agent.
func (m markedCredentials) ProviderSources() []aws.CredentialSource {
	if s, ok := m.CredentialsProvider.(aws.CredentialProviderSource); ok {
		return s.ProviderSources()
	}
	return nil
}

// Name is the display name.
func (p *Provider) Name() string { return displayName }

// Check refuses what the route's API cannot serve: Converse's rules (checkConverse), or on
// InvokeModel the Messages API's own (anthropic.Check), whose body carries every Claude
// feature. A route whose api names no Bedrock API is refused as misconfigured.
func (p *Provider) Check(req *llm.Request, t providers.Target) *llm.Error {
	if oe := providers.RefuseResponses(req, "Amazon Bedrock", false); oe != nil {
		return oe
	}
	a, ok := apiOf(t)
	switch {
	case !ok:
		return badAPI(t)
	case a == viaInvoke:
		return checkInvoke(req, t)
	}
	return checkConverse(req, t.Model)
}

// Generate makes one Converse or InvokeModel call.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	if a, _ := apiOf(t); a == viaInvoke {
		return p.invoke(ctx, req, t)
	}
	c, err := buildConverse(req, t)
	if err != nil {
		return nil, err
	}
	out, err := p.client.Converse(ctx, &c.ConverseInput)
	if err != nil {
		return nil, classify(ctx, err)
	}
	a, err := answer(out)
	if err != nil {
		return nil, err
	}
	return providers.AnswerAsContent(a, c.answerTool), nil
}

// Stream starts one ConverseStream or InvokeModelWithResponseStream call. Exceptions Bedrock
// sends before any content surface from the first Next, where the gateway can still fail
// over.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	if a, _ := apiOf(t); a == viaInvoke {
		return p.invokeStream(ctx, req, t)
	}
	c, err := buildConverse(req, t)
	if err != nil {
		return nil, err
	}
	out, err := p.client.ConverseStream(ctx, c.streamInput())
	if err != nil {
		return nil, classify(ctx, err)
	}
	return providers.StreamAnswerAsContent(&stream{ctx: ctx, es: out.GetStream()}, c.answerTool), nil
}

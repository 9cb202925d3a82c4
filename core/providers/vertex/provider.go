// Package vertex serves chat completions from Vertex AI: Gemini, Claude and partner (MaaS)
// models on one connection, through cloud.google.com/go/aiplatform's gRPC PredictionClient
// and, for partner models, Vertex AI's OpenAI-compatible REST endpoint.
//
//	family.go           which wire a route's model speaks (MLflow's rules, or the route's api),
//	                    and the hosts and resource names of a connection
//	gemini_request.go   OpenAI chat request -> GenerateContentRequest, and its refusals
//	gemini_response.go  GenerateContentResponse -> OpenAI completion: finish reasons, usage
//	gemini_stream.go    StreamGenerateContent messages -> OpenAI deltas
//	claude.go           RawPredict / StreamRawPredict carrying the anthropic package's body
//	maas.go             the OpenAI-compatible endpoint (endpoints/openapi) over REST
//	errors.go           gRPC statuses -> classified provider errors
//	transport.go        credentials and the gRPC client, made once on first use
//
// Rules worth knowing:
//   - Output maximum: the client's max_completion_tokens, else the gateway model's
//     max_output_tokens (Gemini's maxOutputTokens, max_tokens for partner models), else
//     none; Claude's required max_tokens follows the anthropic package.
//   - Gemini: leading system and developer messages become systemInstruction (a later one is
//     refused); tool results go back as functionResponse parts of a user turn, in the order
//     of the calls they answer, named after the call their tool_call_id designates, and with
//     an object response ({"content": "<text>"} unless the result is a JSON object). v1's
//     FunctionCall has no id, so every call gets a fresh call_<random> id, which clients send
//     back. Tool parameters go out as parametersJsonSchema, the JSON Schema exactly as the
//     client wrote it, rather than converted to the OpenAPI-subset Schema, whose conversion
//     would drop what it cannot express (additionalProperties, $ref, ...) without a word;
//     Vertex AI validates the schema itself. A strict tool is refused: nothing enforces it.
//     Thought signatures cannot cross the OpenAI wire, so for models after Gemini 2 the first
//     past call of each assistant turn carries Google's documented stand-in
//     (skip_thought_signature_validator), without which Gemini 3 refuses the history.
//   - Gemini answers: finish_reason is tool_calls whenever a call was returned (Gemini says
//     STOP), content_filter for SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII and
//     MODEL_ARMOR, and for a prompt blocked before any candidate. Usage comes from the last
//     non-empty usageMetadata (streams send empty ones early): prompt = promptTokenCount,
//     completion = candidatesTokenCount + thoughtsTokenCount (the thoughts also as
//     reasoning_tokens), cached = cachedContentTokenCount; counts Gemini leaves out stay out.
//     Thought parts are never returned.
//   - Claude: the anthropic package's translation, without "model" and with
//     anthropic_version vertex-2023-10-16; its refusals apply (temperature above 1, ...).
//   - MaaS: the OpenAI wire with the route's model; strict tools and a named tool_choice,
//     which the endpoint does not document, are refused. Streams end at [DONE], as OpenAI's.
//   - /v1/completions: claude and maas routes answer 501 (MLflow's message, naming the
//     gateway model). A gemini route serves the prompt as one user turn, as MLflow's gateway
//     does by falling through to its Gemini provider; max_tokens and temperature apply.
//   - gRPC streams receive once before ChatStream returns: the client opens a stream even
//     when Vertex AI refuses the call, which shows only on the first receive, and ChatStream
//     is where a refusal belongs (classified, before anything is committed to the client).
//   - The SDK never retries (the gateway owns retries and failover).
//
// Connection settings: project and location (both required); endpoint, a host:port replacing
// the regional gRPC host ({location}-aiplatform.googleapis.com:443, aiplatform.googleapis.com
// for global, aiplatform.{us|eu}.rep.googleapis.com for the multi-regions); base_url, the
// REST root for the OpenAI-compatible endpoint (default https:// plus the endpoint or the
// regional host); insecure, for tests only: plaintext gRPC, plain HTTP and no credentials.
// Credentials are Application Default Credentials, looked up on the first call, never at
// start-up.
package vertex

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"cloud.google.com/go/aiplatform/apiv1"
	"cloud.google.com/go/auth"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// Kind is the connection kind.
const Kind = "vertex"

// Name is the provider's display name.
const Name = "Vertex AI"

// Register adds the vertex kind to r.
func Register(r providers.Registry) { r[Kind] = New }

// Provider is one Vertex AI connection: a project and a location.
type Provider struct {
	project, location string
	grpcEndpoint      string // host:port of the PredictionService
	restRoot          string // scheme://host of REST calls, without a trailing slash
	insecure          bool
	http              *http.Client

	mu     sync.Mutex // guards building creds and client, once each
	creds  atomic.Pointer[auth.Credentials]
	client atomic.Pointer[aiplatform.PredictionClient]
}

var (
	locationPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	projectPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9.:-]{0,127}$`)
)

// New builds the provider of a vertex connection. It checks the settings and nothing else:
// credentials are looked up and the gRPC client is made on the first call, so a cold start
// that never reaches Vertex AI pays nothing for it.
func New(conn *config.Connection, env providers.Env) (providers.Provider, error) {
	p := &Provider{project: conn.Project, location: conn.Location, insecure: conn.Insecure, http: env.HTTPClient}
	switch {
	case p.project == "":
		return nil, errors.New("project is required for kind vertex")
	case !projectPattern.MatchString(p.project):
		return nil, errors.New("project " + quoteString(p.project) + " is not a Google Cloud project id")
	case p.location == "":
		return nil, errors.New("location is required for kind vertex (a region such as us-central1, global, us or eu)")
	case !locationPattern.MatchString(p.location):
		return nil, errors.New("location " + quoteString(p.location) + " is not a Vertex AI location")
	}
	h := host(p.location)
	p.grpcEndpoint = h + ":443"
	p.restRoot = "https://" + h
	if e := conn.Endpoint; e != "" {
		if strings.Contains(e, "://") || !strings.Contains(e, ":") {
			return nil, errors.New("endpoint must be host:port (no scheme), got " + quoteString(e))
		}
		p.grpcEndpoint = e
		if p.insecure {
			p.restRoot = "http://" + e
		} else {
			p.restRoot = "https://" + strings.TrimSuffix(e, ":443")
		}
	}
	if b := strings.TrimSuffix(conn.BaseURL, "/"); b != "" {
		if !strings.HasPrefix(b, "https://") && !strings.HasPrefix(b, "http://") {
			return nil, errors.New("base_url must start with https:// or http://, got " + conn.BaseURL)
		}
		p.restRoot = b
	}
	if p.http == nil {
		p.http = providers.NewHTTPClient(env.Timeouts.Connect.D())
	}
	return p, nil
}

// Name is the display name.
func (p *Provider) Name() string { return Name }

// CheckChat refuses what the route's family cannot serve as asked.
func (p *Provider) CheckChat(req *openai.ChatRequest, t providers.Target) *openai.Error {
	fam, ok := Classify(t)
	if !ok {
		return badAPI(t)
	}
	switch fam {
	case Claude:
		return anthropic.Check(req)
	case MaaS:
		return checkMaaS(req)
	}
	return checkGemini(req)
}

// Chat makes a non-streaming call.
func (p *Provider) Chat(ctx context.Context, req *openai.ChatRequest, t providers.Target) (*openai.Completion, error) {
	fam, ok := Classify(t)
	if !ok {
		return nil, refused(badAPI(t))
	}
	switch fam {
	case Claude:
		return p.claudeChat(ctx, req, t)
	case MaaS:
		return p.maasChat(ctx, req, t)
	}
	return p.geminiChat(ctx, req, t)
}

// ChatStream starts a streaming call. It returns once the first message arrived (or the
// call failed), so a failure before any output is the gateway's to fail over.
func (p *Provider) ChatStream(ctx context.Context, req *openai.ChatRequest, t providers.Target) (providers.Stream, error) {
	fam, ok := Classify(t)
	if !ok {
		return nil, refused(badAPI(t))
	}
	switch fam {
	case Claude:
		return p.claudeStream(ctx, req, t)
	case MaaS:
		return p.maasStream(ctx, req, t)
	}
	return p.geminiStream(ctx, req, t)
}

// CheckCompletion answers the legacy /v1/completions: served on gemini routes as one user
// turn, 501 on the others (MLflow's gateway message, naming the model the client asked for).
func (p *Provider) CheckCompletion(req *openai.CompletionRequest, t providers.Target) *openai.Error {
	fam, ok := Classify(t)
	if !ok {
		return badAPI(t)
	}
	if fam != Gemini {
		return openai.UnsupportedEndpoint(req.Model, Name)
	}
	if req.Prompt == nil || *req.Prompt == "" {
		return openai.BadRequest("prompt", "prompt must not be empty: Gemini refuses empty text")
	}
	return nil
}

// Complete serves a legacy completion on a gemini route.
func (p *Provider) Complete(ctx context.Context, req *openai.CompletionRequest, t providers.Target) (*openai.Completion, error) {
	if oe := p.CheckCompletion(req, t); oe != nil {
		return nil, refused(oe)
	}
	return p.geminiChat(ctx, promptAsChat(req), t)
}

// CompleteStream streams a legacy completion on a gemini route.
func (p *Provider) CompleteStream(ctx context.Context, req *openai.CompletionRequest, t providers.Target) (providers.Stream, error) {
	if oe := p.CheckCompletion(req, t); oe != nil {
		return nil, refused(oe)
	}
	return p.geminiStream(ctx, promptAsChat(req), t)
}

// promptAsChat is the prompt as a one-turn conversation; the gateway reads only text from
// the answer, and no tools are offered.
func promptAsChat(req *openai.CompletionRequest) *openai.ChatRequest {
	return &openai.ChatRequest{
		Model:               req.Model,
		Messages:            []openai.Message{{Role: openai.RoleUser, Content: req.Prompt}},
		MaxCompletionTokens: req.MaxTokens,
		Temperature:         req.Temperature,
		Stream:              req.Stream,
	}
}

// refused reports a request the planner should have kept away (CheckChat refuses the same).
// A misconfigured route is not the client's mistake and another route may serve.
func refused(oe *openai.Error) error {
	class := providers.BadRequest
	if oe.Status >= 500 {
		class = providers.Unsupported
	}
	return &providers.Error{Class: class, Code: oe.Code, Message: oe.Message, Param: oe.Param, Provider: Name}
}

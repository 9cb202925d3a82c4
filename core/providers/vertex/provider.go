// Package vertex serves Vertex AI: Gemini, Claude and partner (MaaS) models on one
// connection, through cloud.google.com/go/aiplatform's gRPC PredictionClient and, for
// partner models, Vertex AI's OpenAI-compatible REST endpoint. It speaks the wire-neutral
// core (core/llm): any front door's request, checked once (Check) and then translated.
//
//	family.go           which wire a route's model speaks (MLflow's rules, or the route's api),
//	                    and the hosts and resource names of a connection
//	gemini_check.go     what a Gemini route refuses (checkGemini)
//	gemini_request.go   llm.Request -> GenerateContentRequest
//	gemini_response.go  GenerateContentResponse -> llm.Answer: stop reasons, usage, thoughts;
//	                    GenerateContent and CountTokens calls
//	gemini_stream.go    StreamGenerateContent messages -> llm.Delta
//	claude.go           RawPredict / StreamRawPredict carrying the anthropic package's body,
//	                    and the count-tokens endpoint
//	maas.go             the OpenAI-compatible endpoint (endpoints/openapi) over REST, through
//	                    openaicompat's body writer, checks, parser and stream translator
//	embeddings.go       text embeddings through Predict (text-embedding-005, gemini-embedding-001):
//	                    the task type, batches, outputDimensionality
//	errors.go           gRPC statuses -> classified provider errors
//	transport.go        credentials and the gRPC clients, each made once on first use
//
// The package has no build tag of its own: the Lambda bootstrap links it only when built
// with -tags vertex (functions/lambda/providers_vertex.go), since aiplatform's gRPC stack
// roughly doubles the binary; the Cloud Functions and local mains always register it.
//
// Rules worth knowing:
//   - Output maximum: the client's (max_completion_tokens, max_tokens), else the gateway
//     model's max_output_tokens (Gemini's maxOutputTokens, max_tokens for partner models),
//     else none; Claude's required max_tokens follows the anthropic package.
//   - Gemini: up-front system parts, and system and developer messages that open the
//     conversation, become systemInstruction (a later one is refused on the chat door and
//     hoisted on the Messages door); tool results go back as functionResponse parts at the
//     head of their user turn, in the order of the calls they answer, named after the call
//     their id designates, with an object response ({"content": "<text>"} unless the result
//     is a JSON object; a failed result is {"error": "<text>"}, the key Vertex AI documents);
//     images go inline (base64) or as Cloud Storage fileData, never by http(s) URL. v1's
//     FunctionCall has no id, so the gateway gives every returned call one, which clients
//     send back. Tool parameters go out as parametersJsonSchema, the JSON Schema exactly as
//     the client wrote it, rather than converted to the OpenAPI-subset Schema, whose
//     conversion would drop what it cannot express (additionalProperties, $ref, ...) without
//     a word; Vertex AI validates the schema itself. A strict tool is refused: nothing
//     enforces it. Thought signatures cannot cross another wire, so for models after
//     Gemini 2 the first past call of each model turn carries Google's documented stand-in
//     (skip_thought_signature_validator), without which Gemini 3 refuses the history; the
//     thinking parts of earlier turns are not sent (as Anthropic drops them from context).
//   - Gemini thinking: enabled with budget_tokens is thinkingBudget; adaptive leaves the
//     budget to the model unless output_config.effort names one (low 1024, medium 8192,
//     high 24576: Google's own mapping of reasoning_effort); disabled is Gemini's default.
//     When the client asked for thinking (and not for it to be omitted) thoughts are asked
//     for (includeThoughts) and come back as thinking parts and deltas; otherwise thought
//     parts are never returned. Models that cannot think (Gemini 1.x and 2.0) get no
//     thinking settings: adaptive thinking and efforts are them deciding not to think, and
//     a budget is refused. cache_control is accepted (Gemini caches implicitly),
//     defer_loading tools are ordinary tools, anthropic-beta flags only unlock features
//     checked on their own; Anthropic-only blocks, fields and server tools are refused.
//   - Gemini answers: the stop is tool_use whenever a call was returned (Gemini says STOP),
//     content_filter for SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII and
//     MODEL_ARMOR, and for a prompt blocked before any candidate. Usage comes from the last
//     non-empty usageMetadata (streams send empty ones early): input = promptTokenCount,
//     output = candidatesTokenCount + thoughtsTokenCount (the thoughts also as reasoning
//     tokens), cache reads = cachedContentTokenCount; counts Gemini leaves out stay out.
//   - Extended profile on Gemini: seed (32-bit), presencePenalty and frequencyPenalty, a JSON
//     response_format as responseMimeType application/json with the JSON Schema as
//     responseJsonSchema (Gemini 2.5 and later); participant names and parallel_tool_calls
//     false are refused. Claude routes give a JSON response_format through the answer tool;
//     partner models take seed, penalties and response_format natively.
//   - Claude: the anthropic package's translation, without "model", with anthropic_version
//     vertex-2023-10-16 and the client's betas as the body's anthropic_beta (a gRPC
//     RawPredict has no HTTP headers to carry them), its refusals (temperature above 1, ...)
//     and Files API references refused. A system message inside the conversation is hoisted
//     into system (Vertex AI's fixed API version predates system messages in place). For a
//     Messages door client the upstream's answer and events pass through verbatim.
//     Token counting is the count-tokens rawPredict (the same body with the model named,
//     without output maximum, sampling or stream).
//   - Token counting on gemini routes is LlmUtilityService.CountTokens of the translated
//     request (its own gRPC client, made on the first count); partner models do not count.
//   - MaaS: the OpenAI wire with the route's model; what the endpoint does not document
//     (strict tools, a named tool_choice, top_k, thinking budgets and efforts, http(s)
//     images) is refused, since it ignores unknown settings without a word. Streams end at
//     [DONE], as OpenAI's.
//   - /v1/completions: claude and maas routes answer 501 (MLflow's message, naming the
//     gateway model). A gemini route serves the prompt as one user turn, as MLflow's gateway
//     does by falling through to its Gemini provider; max_tokens and temperature apply.
//   - gRPC streams receive once before Stream returns: the client opens a stream even when
//     Vertex AI refuses the call, which shows only on the first receive, and Stream is where
//     a refusal belongs (classified, before anything is committed to the client).
//   - The SDK never retries (the gateway owns retries and failover), and a received gRPC
//     message is bounded to 32 MB, as a REST answer is (the client's default is 2 GB).
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
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
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

	// maxRecv bounds one gRPC message received (a whole answer, a stream message or an
	// HttpBody chunk), as providers.MaxAnswer bounds a REST answer.
	maxRecv int

	mu      sync.Mutex // guards building creds and the clients, once each
	creds   atomic.Pointer[auth.Credentials]
	client  atomic.Pointer[aiplatform.PredictionClient]
	utility atomic.Pointer[aiplatform.LlmUtilityClient] // made on the first Gemini count
}

var (
	locationPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	projectPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9.:-]{0,127}$`)
)

// New builds the provider of a vertex connection. It checks the settings and nothing else:
// credentials are looked up and the gRPC client is made on the first call, so a cold start
// that never reaches Vertex AI pays nothing for it.
func New(conn *config.Connection, env providers.Env) (providers.Provider, error) {
	p := &Provider{project: conn.Project, location: conn.Location, insecure: conn.Insecure, http: env.HTTPClient, maxRecv: providers.MaxAnswer}
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

// Check refuses what the route's family cannot serve as asked: Claude what the anthropic
// package refuses (and Files API references, which Vertex AI cannot resolve), Gemini what
// checkGemini lists, partner models what checkMaaS lists. The legacy /v1/completions is
// served on gemini routes only (claude and maas routes answer MLflow's 501).
func (p *Provider) Check(req *llm.Request, t providers.Target) *llm.Error {
	fam, ok := Classify(t)
	if !ok {
		return badAPI(t)
	}
	if oe := providers.RefuseResponses(req, Name, false); oe != nil {
		return oe
	}
	if req.Op == llm.OpCompletion {
		if fam != Gemini {
			return llm.UnsupportedEndpoint(req.Model, Name)
		}
		if req.Prompt == "" {
			return llm.BadRequest("prompt", "prompt must not be empty: Gemini refuses empty text")
		}
		return checkSeed(req)
	}
	switch fam {
	case Claude:
		return checkClaude(req, t.Model)
	case MaaS:
		return checkMaaS(req)
	}
	return checkGemini(req, t.Model)
}

// Generate makes a non-streaming call.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	fam, ok := Classify(t)
	if !ok {
		return nil, refused(badAPI(t))
	}
	switch fam {
	case Claude:
		return p.claudeGenerate(ctx, req, t)
	case MaaS:
		return p.maasGenerate(ctx, req, t)
	}
	return p.geminiGenerate(ctx, req, t)
}

// Stream starts a streaming call. It returns once the first message arrived (or the call
// failed), so a failure before any output is the gateway's to fail over.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
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

// CountTokens counts the input of req exactly: on a claude route through Vertex AI's
// count-tokens rawPredict, on a gemini route through LlmUtilityService.CountTokens.
// Partner-model routes have no counter: the gateway asks the next route or estimates.
func (p *Provider) CountTokens(ctx context.Context, req *llm.Request, t providers.Target) (int, error) {
	fam, ok := Classify(t)
	if !ok {
		return 0, refused(badAPI(t))
	}
	switch fam {
	case Claude:
		return p.claudeCount(ctx, req, t)
	case Gemini:
		return p.geminiCount(ctx, req, t)
	}
	return 0, providers.ErrCannotCount // Vertex AI's OpenAI-compatible endpoint cannot count
}

// refused reports a request the planner should have kept away (Check refuses the same). A
// misconfigured route is not the client's mistake and another route may serve.
func refused(oe *llm.Error) error {
	class := providers.BadRequest
	if oe.Status >= 500 {
		class = providers.Unsupported
	}
	return &providers.Error{Class: class, Code: oe.Code, Message: oe.Message, Param: oe.Param, Provider: Name}
}

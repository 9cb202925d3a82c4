// Package anthropic serves chat completions from Anthropic's Messages API.
//
// The translation is independent of the transport so that Claude on Vertex AI, which sends
// the same body (without "model", with "anthropic_version") over another channel, reuses it:
//
//	request.go   OpenAI chat request -> Messages body (BuildRequest), and the refusals that
//	             need no network (Check)
//	response.go  Messages response -> OpenAI completion (ParseResponse, FinishReason)
//	stream.go    Messages events -> OpenAI deltas (NewStream)
//	structured.go  what a route's model takes (ModelOf): structured output, one sampler
//	errors.go    Anthropic (and Google) error bodies -> classified provider errors
//	provider.go  the direct API: URL, headers, credentials
//
// Rules worth knowing:
//   - Leading system and developer messages become the top-level system; one after the
//     conversation began is refused (400, param messages), as is temperature above 1 and a
//     strict tool, so the planner can pick another route.
//   - max_tokens is required by Anthropic: the client's max_completion_tokens, else the gateway
//     model's max_output_tokens, else DefaultMaxTokens (4096).
//   - Tool call ids minted elsewhere are made safe for Anthropic (ToolID); Anthropic's own
//     ids pass through both ways.
//   - Usage: prompt = input + cache writes + cache reads, cached = cache reads,
//     completion = output; what Anthropic does not report is left out.
//   - Extended profile: top_p and stop_sequences as sent (a model that takes one sampler is
//     not sent a top_p of 1 beside a temperature, and refuses any other pair); no seed, no
//     penalties, no participant names (refused, or left out under request_profile_ignore);
//     parallel_tool_calls false as disable_parallel_tool_use; a JSON response_format as
//     output_config.format on the models with structured outputs, else through the answer
//     tool (structured.go, providers.AnswerTool), whose strict schema is refused.
//   - The legacy /v1/completions is not served (the Provider has no Complete): the gateway
//     answers 501.
//
// Connection settings: api_key (required), base_url (default https://api.anthropic.com),
// anthropic_version (default 2023-06-01), headers (sent as given, e.g. anthropic-beta).
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Kind is the connection kind.
const Kind = "anthropic"

// Defaults of the direct API.
const (
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultVersion is the API version whose rules this package implements. Newer versions
	// change them (a system role inside messages, bearer auth), so a connection may pin
	// another one with anthropic_version but keeps the translation of this one.
	DefaultVersion = "2023-06-01"
)

// Register adds the anthropic kind to r.
func Register(r providers.Registry) { r[Kind] = New }

// Provider is one Anthropic API connection.
type Provider struct {
	url     string
	apiKey  string
	version string
	headers map[string]string
	client  *http.Client
}

// New builds the provider of an anthropic connection.
func New(conn *config.Connection, env providers.Env) (providers.Provider, error) {
	if conn.APIKey == "" {
		return nil, errors.New("api_key is required for kind anthropic")
	}
	base := strings.TrimSuffix(conn.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
		return nil, errors.New("base_url must start with https:// or http://, got " + conn.BaseURL)
	}
	version := conn.ExtraString("anthropic_version")
	if version == "" {
		version = DefaultVersion
	}
	client := env.HTTPClient
	if client == nil {
		client = providers.NewHTTPClient(env.Timeouts.Connect.D())
	}
	u, err := config.JoinURL(base, "/v1/messages")
	if err != nil {
		return nil, errors.New("base_url: " + err.Error())
	}
	return &Provider{url: u, apiKey: conn.APIKey, version: version, headers: conn.Headers, client: client}, nil
}

// Name is the display name.
func (p *Provider) Name() string { return "Anthropic" }

// Check refuses what Anthropic cannot serve as asked (see Check).
func (p *Provider) Check(req *llm.Request, t providers.Target) *llm.Error {
	return Check(req, ModelOf(t.Model))
}

// Generate makes a non-streaming call.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	opt := p.options(false, t)
	resp, err := p.post(ctx, p.url, req, BuildRequest(req, t, opt), false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, providers.MaxAnswer))
	if err != nil {
		return nil, providers.AsError(ctx, err, p.Name())
	}
	a, err := ParseResponseFor(data, req, opt.Model)
	if err != nil {
		pe := providers.AsError(ctx, err, p.Name())
		pe.Status = resp.StatusCode
		return nil, pe
	}
	return a, nil
}

// Stream starts a streaming call. The status and headers have arrived when it returns;
// the events are read by the stream.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	opt := p.options(true, t)
	resp, err := p.post(ctx, p.url, req, BuildRequest(req, t, opt), true)
	if err != nil {
		return nil, err
	}
	return NewStreamFor(ctx, resp.Body, p.Name(), req, opt.Model), nil
}

// CountTokens asks Anthropic's count_tokens for the exact input count of req.
func (p *Provider) CountTokens(ctx context.Context, req *llm.Request, t providers.Target) (int, error) {
	opt := p.options(false, t)
	opt.Count = true
	resp, err := p.post(ctx, p.url+"/count_tokens", req, BuildRequest(req, t, opt), false)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return ParseCount(resp.Body)
}

// ParseCount reads a count_tokens answer, {"input_tokens": N}.
func ParseCount(r io.Reader) (int, error) {
	var out struct {
		InputTokens *int `json:"input_tokens"`
	}
	// A count is a few bytes: the bound on an error body is ample.
	if err := json.NewDecoder(io.LimitReader(r, providers.MaxErrorBody)).Decode(&out); err != nil || out.InputTokens == nil || *out.InputTokens < 0 {
		return 0, &providers.Error{Class: providers.Unavailable, Message: "unreadable count_tokens answer"}
	}
	return *out.InputTokens, nil
}

func (p *Provider) options(stream bool, t providers.Target) RequestOptions {
	return RequestOptions{Stream: stream, SystemInMessages: true, Model: ModelOf(t.Model)}
}

func (p *Provider) post(ctx context.Context, url string, req *llm.Request, body []byte, stream bool) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: p.Name(), Message: err.Error(), Err: err}
	}
	h := hreq.Header
	for k, v := range p.headers {
		h.Set(k, v)
	}
	// Set after the configured headers, so a header in the config cannot replace the
	// credentials or the version the translation was written for. A Messages door client's
	// own version and betas go on unchanged: the body is its own, near enough.
	h.Set("Content-Type", "application/json")
	h.Set("X-Api-Key", p.apiKey)
	version := p.version
	if a := req.Anthropic; a != nil && a.Version != "" {
		version = a.Version
	}
	h.Set("Anthropic-Version", version)
	if betas := Betas(req); betas != "" {
		h.Set("Anthropic-Beta", betas)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		return nil, providers.AsError(ctx, err, p.Name())
	}
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, providers.MaxErrorBody))
		resp.Body.Close()
		return nil, ErrorFromResponse(resp.StatusCode, resp.Header, data, p.Name())
	}
	return resp, nil
}

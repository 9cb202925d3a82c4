package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// Provider is one OpenAI-wire connection.
type Provider struct {
	profile
	body           ChatBody
	chatURL        string // under base_url, with its query (config.JoinURL)
	completionsURL string
	responsesURL   string // the native Responses API, for the openai kind
	compactURL     string // and its /responses/compact
	embeddingsURL  string
	apiKey         string
	headers        map[string]string
	client         *http.Client
}

// New builds the provider of an OpenAI-wire connection.
func New(conn *config.Connection, env providers.Env) (providers.Provider, error) {
	p, ok := profiles[conn.Kind]
	if !ok {
		return nil, errors.New("not an OpenAI-wire kind")
	}
	base := conn.BaseURL
	if base == "" {
		base = p.defaultBaseURL
	}
	if base == "" {
		return nil, errors.New("base_url is required for kind " + conn.Kind)
	}
	if p.requireAPIKey && conn.APIKey == "" {
		return nil, errors.New("api_key is required for kind " + conn.Kind)
	}
	client := env.HTTPClient
	if client == nil {
		client = providers.NewHTTPClient(env.Timeouts.Connect.D())
	}
	// developer is OpenAI's newer name for system; other servers' chat templates know only
	// system.
	body := ChatBody{MaxTokensField: p.maxTokensField, DeveloperAsSystem: p.kind != "openai",
		TopK: p.topK, ParallelToolCalls: p.parallelToolCalls, ReasoningEffort: p.reasoningEffort,
		Names: p.names, RequireParameters: p.requireParameters}
	chatURL, err := config.JoinURL(base, "/chat/completions")
	if err != nil {
		return nil, errors.New("base_url: " + err.Error())
	}
	completionsURL, _ := config.JoinURL(base, "/completions") // base parsed just above
	responsesURL, _ := config.JoinURL(base, "/responses")
	compactURL, _ := config.JoinURL(base, "/responses/compact")
	embeddingsURL, _ := config.JoinURL(base, "/embeddings")
	return &Provider{profile: p, body: body, chatURL: chatURL, completionsURL: completionsURL, responsesURL: responsesURL,
		compactURL:    compactURL,
		embeddingsURL: embeddingsURL,
		apiKey:        conn.APIKey, headers: conn.Headers, client: client}, nil
}

// Name is the display name.
func (p *Provider) Name() string { return p.name }

// Generate makes a non-streaming call.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	if p.native(req) {
		if req.Responses.Compact {
			return p.generateCompact(ctx, req, t)
		}
		return p.generateResponses(ctx, req, t)
	}
	path, body := p.requestBody(req, t, false)
	resp, err := p.post(ctx, path, body, false)
	if err != nil {
		return nil, err
	}
	defer providers.Drain(resp.Body)
	var out completion
	if err := readCompletion(resp, &out, p.name); err != nil {
		return nil, err
	}
	return out.answer(req.Op), nil
}

// answer converts a parsed answer. A legacy completion's text is always there, if empty.
func (c *completion) answer(op llm.Op) *llm.Answer {
	a := &llm.Answer{Refusal: c.refusal, Stop: openai.StopReason(c.finish), Model: c.model}
	if c.content != nil || op == llm.OpCompletion {
		text := ""
		if c.content != nil {
			text = *c.content
		}
		a.Parts = append(a.Parts, llm.Part{Kind: llm.PartText, Text: text})
	}
	for _, tc := range c.toolCalls {
		a.Parts = append(a.Parts, llm.Part{Kind: llm.PartToolUse, ID: tc.ID, Name: tc.Name, Input: tc.Arguments})
	}
	if u := c.usage.llm(); u != nil {
		a.Usage = *u
	}
	return a
}

// requestBody is the URL and body of a call: the chat completions endpoint, or the legacy
// completions one.
func (p *Provider) requestBody(req *llm.Request, t providers.Target, stream bool) (string, []byte) {
	if req.Op == llm.OpCompletion {
		return p.completionsURL, appendCompletionBody(make([]byte, 0, 256), req, t.Model, stream)
	}
	return p.chatURL, p.body.Append(make([]byte, 0, 1024), req, t.Model, req.MaxTokens, stream)
}

// readCompletion reads and parses a whole answer.
func readCompletion(resp *http.Response, out *completion, provider string) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, providers.MaxAnswer))
	if err == nil {
		err = parseCompletion(body, out)
	}
	if err != nil {
		return &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: provider, Message: "unreadable response: " + err.Error(), Err: err}
	}
	if out.choices == 0 {
		return &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: provider, Message: "the response has no choices"}
	}
	return nil
}

// Stream starts a streaming call.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	if p.native(req) {
		return p.streamResponses(ctx, req, t)
	}
	path, body := p.requestBody(req, t, true)
	resp, err := p.post(ctx, path, body, true)
	if err != nil {
		return nil, err
	}
	return newStream(resp.Body, p.name), nil
}

func (p *Provider) post(ctx context.Context, url string, body []byte, stream bool) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: p.name, Message: err.Error(), Err: err}
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if p.apiKey != "" {
		h.Set("Authorization", "Bearer "+p.apiKey)
	}
	for k, v := range p.headers {
		h.Set(k, v)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		return nil, providers.AsError(ctx, err, p.name)
	}
	if resp.StatusCode/100 != 2 {
		return nil, providers.StatusError(resp, p.name)
	}
	return resp, nil
}

package vertex

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
)

// The OpenAI-compatible endpoint is plain REST (apiv1's gRPC client does not offer it; only
// apiv1beta1 has ChatCompletions, as an HttpBody stream): the OpenAI body goes out with the
// connection's token and the answer is OpenAI's wire, read by the openaicompat package's
// stream translator.

// maxResponseBody bounds a non-streamed answer.
const maxResponseBody = 32 << 20

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// checkMaaS refuses what the endpoint does not document: a named tool_choice and strict
// schemas. Unknown settings are ignored there without a word, so the route refuses them.
func checkMaaS(req *openai.ChatRequest) *openai.Error {
	for i := range req.Tools {
		if f := &req.Tools[i].Function; f.Strict != nil && *f.Strict {
			p := "tools[" + strconv.Itoa(i) + "].function.strict"
			return openai.Unsupported(p, p+" is not supported on Vertex AI routes: the schema would not be enforced")
		}
	}
	if tc := req.ToolChoice; tc != nil && tc.Mode == openai.ToolChoiceFunction {
		return openai.Unsupported("tool_choice", "a named tool_choice is not supported by Vertex AI's OpenAI-compatible endpoint: use auto, none or required")
	}
	return nil
}

func (p *Provider) maasURL() (string, error) {
	return config.JoinURL(p.restRoot, "/v1/"+p.parent()+"/endpoints/openapi/chat/completions")
}

// maasChat makes one non-streaming call.
func (p *Provider) maasChat(ctx context.Context, req *openai.ChatRequest, t providers.Target) (*openai.Completion, error) {
	if oe := checkMaaS(req); oe != nil {
		return nil, refused(oe)
	}
	resp, err := p.maasPost(ctx, maasBody(req, t, false), false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return nil, providers.AsError(ctx, err, Name)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content   *string           `json:"content"`
				Refusal   *string           `json:"refusal"`
				ToolCalls []openai.ToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *openai.Usage `json:"usage"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: Name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	if len(out.Choices) == 0 {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: Name, Message: "the response has no choices"}
	}
	ch := &out.Choices[0]
	c := &openai.Completion{Content: ch.Message.Content, Refusal: ch.Message.Refusal, ToolCalls: ch.Message.ToolCalls, FinishReason: ch.FinishReason}
	for i := range c.ToolCalls {
		c.ToolCalls[i].Type = "function"
	}
	if c.FinishReason == "" {
		c.FinishReason = openai.FinishStop
	}
	if out.Usage != nil {
		c.Usage = *out.Usage
	}
	return c, nil
}

// maasStream starts a streaming call; the status and headers have arrived when it returns.
func (p *Provider) maasStream(ctx context.Context, req *openai.ChatRequest, t providers.Target) (providers.Stream, error) {
	if oe := checkMaaS(req); oe != nil {
		return nil, refused(oe)
	}
	resp, err := p.maasPost(ctx, maasBody(req, t, true), true)
	if err != nil {
		return nil, err
	}
	return openaicompat.NewStream(resp.Body, Name), nil
}

func (p *Provider) maasPost(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	auth, err := p.bearer(ctx)
	if err != nil {
		return nil, err
	}
	u, err := p.maasURL()
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: Name, Message: "base_url: " + err.Error(), Err: err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: Name, Message: err.Error(), Err: err}
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	resp, err := p.http.Do(hreq)
	if err != nil {
		return nil, providers.AsError(ctx, err, Name)
	}
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		return nil, restError(resp, data)
	}
	return resp, nil
}

// restError classifies a failed REST call. Google's front end answers in its own shape,
// sometimes wrapped in a one-element array; partner models may answer in OpenAI's.
func restError(resp *http.Response, body []byte) *providers.Error {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(b, &list) == nil && len(list) > 0 {
			body = list[0]
		}
	}
	code, msg, param := providers.ParseErrorBody(body)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	class := providers.ClassifyStatus(resp.StatusCode)
	if class == providers.Unavailable && code == "overloaded_error" {
		class = providers.Overloaded
	}
	return &providers.Error{Class: class, Status: resp.StatusCode, Code: code, Message: msg, Param: param,
		RetryAfter: providers.RetryAfter(resp.Header), Provider: Name}
}

// maasWire is the endpoint's dialect of the OpenAI body: the output maximum as max_tokens
// (the name every partner model's server knows), developer as system (which the endpoint
// documents and partner models' chat templates know), no strict flags (checkMaaS refuses
// strict schemas, and false says nothing), and tool_choice only beside tools.
var maasWire = openaicompat.ChatBody{MaxTokensField: "max_tokens", DeveloperAsSystem: true, OmitStrict: true, ToolChoiceWithTools: true}

// maasBody renders the OpenAI request for the endpoint with the route's model named in it
// and the client's output maximum, else the model's ceiling.
func maasBody(req *openai.ChatRequest, t providers.Target, stream bool) []byte {
	var maxTokens *int
	if n := outputMax(req, t); n > 0 {
		maxTokens = &n
	}
	return maasWire.Append(make([]byte, 0, 1024), req, t.Model, maxTokens, stream)
}

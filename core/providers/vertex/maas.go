package vertex

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
)

// The OpenAI-compatible endpoint is plain REST (apiv1's gRPC client does not offer it; only
// apiv1beta1 has ChatCompletions, as an HttpBody stream): the OpenAI body goes out with the
// connection's token and the answer is OpenAI's wire, read by the openaicompat package's
// parser and stream translator.

// checkMaaS refuses what the endpoint cannot honour. "If you pass any unsupported parameter,
// it is ignored" (Google's OpenAI-compatibility page), so whatever it does not document is
// refused here rather than dropped there: strict schemas, a named tool_choice, top_k, a
// one-call limit (parallel_tool_calls), a thinking budget or an effort, and images by http(s)
// URL (the endpoint takes Cloud Storage URIs and data URIs). What no OpenAI-wire server can
// carry is openaicompat's refusal. As on every OpenAI-wire route, adaptive thinking is
// honoured (the model decides), earlier turns' thinking is not sent, cache_control is a
// hint the endpoint's own caching makes moot, and a failed tool result says "Error: ".
func checkMaaS(req *llm.Request) *llm.Error {
	if oe := openaicompat.CheckParts(req, maasName); oe != nil {
		return oe
	}
	if oe := providers.CheckNames(req, maasName); oe != nil {
		return oe
	}
	for i := range req.Tools {
		if t := &req.Tools[i]; t.Strict != nil && *t.Strict {
			p := "tools[" + strconv.Itoa(i) + "].function.strict"
			return llm.Unsupported(p, p+" is not supported on Vertex AI routes: the schema would not be enforced")
		}
	}
	if tc := req.ToolChoice; tc != nil {
		if tc.Mode == llm.ToolChoiceTool {
			return llm.Unsupported("tool_choice", "a named tool_choice is not supported by Vertex AI's OpenAI-compatible endpoint: use auto, none or required")
		}
		if tc.DisableParallel && len(req.Tools) > 0 {
			return llm.Unsupported(tc.Param(), maasName+" cannot be held to one tool call per turn")
		}
	}
	if req.TopK != nil {
		return llm.Unsupported("top_k", maasName+" does not take top_k")
	}
	if th := req.Thinking; th != nil && th.Type == llm.ThinkingEnabled {
		return llm.Unsupported("thinking", maasName+" takes no thinking budget: use thinking {\"type\":\"adaptive\"}")
	}
	if openaicompat.Effort(req) != "" {
		return llm.Unsupported("output_config.effort", maasName+" takes no reasoning effort")
	}
	return checkImages(req, func(p *llm.Part, path string) *llm.Error {
		if p.URL != "" && !strings.HasPrefix(p.URL, "gs://") {
			return llm.Unsupported(path, path+": "+maasName+" takes images inline or from Cloud Storage (gs://), not by http(s) URL")
		}
		return nil
	})
}

// maasName names the endpoint in refusals.
const maasName = "Vertex AI's OpenAI-compatible endpoint"

// checkImages applies check to every image part of the conversation, with its path.
func checkImages(req *llm.Request, check func(p *llm.Part, path string) *llm.Error) *llm.Error {
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Parts {
			if m.Parts[j].Kind != llm.PartImage {
				continue
			}
			if oe := check(&m.Parts[j], "messages["+strconv.Itoa(i)+"].content["+strconv.Itoa(j)+"]"); oe != nil {
				return oe
			}
		}
	}
	return nil
}

func (p *Provider) maasURL() (string, error) {
	return config.JoinURL(p.restRoot, "/v1/"+p.parent()+"/endpoints/openapi/chat/completions")
}

// maasGenerate makes one non-streaming call. The answer is read by openaicompat's bounded
// one-pass parser, as every OpenAI-wire answer is.
func (p *Provider) maasGenerate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	resp, err := p.maasPost(ctx, maasBody(req, t, false), false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	a, err := openaicompat.ReadAnswer(resp, Name)
	if err != nil {
		return nil, providers.AsError(ctx, err, Name)
	}
	return a, nil
}

// maasStream starts a streaming call; the status and headers have arrived when it returns.
func (p *Provider) maasStream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
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
		data, _ := io.ReadAll(io.LimitReader(resp.Body, providers.MaxErrorBody))
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
func maasBody(req *llm.Request, t providers.Target, stream bool) []byte {
	var maxTokens *int
	if n := outputMax(req, t); n > 0 {
		maxTokens = &n
	}
	return maasWire.Append(make([]byte, 0, 1024), req, t.Model, maxTokens, stream)
}

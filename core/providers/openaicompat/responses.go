package openaicompat

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// The Responses door's requests reach OpenAI itself (the openai kind) on its own Responses
// API, POST {base_url}/responses: the client's fields as it sent them (llm.Responses.Fields,
// hosted tools and all), the model as the route names it, the output maximum the gateway
// checked (the client's, or the model's ceiling), the conversation as input items
// (a continued response's first: the gateway, not OpenAI, keeps the chain, so
// previous_response_id is never sent), stream as asked and store as the gateway does. The
// answer and each event come back verbatim (llm.Answer.Raw, llm.Delta.Raw) beside the
// normalized fields the gateway reads (usage, stop, the commit point); the door patches in
// its own response id and model. Every other kind is sent the request translated to Chat
// Completions.

// native reports whether this route speaks the request's wire: OpenAI's own Responses API
// for the Responses door.
func (p *Provider) native(req *llm.Request) bool {
	return p.kind == "openai" && req.PassThrough == llm.WireResponses && req.Responses != nil
}

// responsesBody writes the native request body.
func responsesBody(req *llm.Request, model string, stream bool) []byte {
	rs := req.Responses
	b := make([]byte, 0, 256+len(rs.Input))
	b = append(b, `{"model":`...)
	b = openai.AppendString(b, model)
	b = append(b, `,"input":`...)
	if len(rs.Input) > 0 {
		b = append(b, rs.Input...)
	} else {
		b = append(b, "[]"...)
	}
	for _, f := range rs.Fields {
		b = append(b, ',')
		b = openai.AppendString(b, f.Name)
		b = append(b, ':')
		b = append(b, f.Value...)
	}
	if req.MaxTokens != nil {
		b = append(b, `,"max_output_tokens":`...)
		b = strconv.AppendInt(b, int64(*req.MaxTokens), 10)
	}
	b = append(b, `,"store":`...)
	b = strconv.AppendBool(b, rs.Store)
	if stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}')
}

func (p *Provider) generateResponses(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	resp, err := p.post(ctx, p.responsesURL, responsesBody(req, t.Model, false), false)
	if err != nil {
		return nil, err
	}
	defer providers.Drain(resp.Body)
	body, err := io.ReadAll(io.LimitReader(resp.Body, providers.MaxAnswer))
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	var r wireResponse
	if err := json.Unmarshal(body, &r); err != nil || r.Object != "response" {
		msg := "the answer is not a response object"
		if err != nil {
			msg = "unreadable response: " + err.Error()
		}
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: msg}
	}
	if r.Status == "failed" {
		return nil, r.failure(p.name)
	}
	a := r.answer()
	a.Raw, a.RawWire = body, llm.WireResponses
	return a, nil
}

func (p *Provider) streamResponses(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	resp, err := p.post(ctx, p.responsesURL, responsesBody(req, t.Model, true), true)
	if err != nil {
		return nil, err
	}
	return &responsesStream{body: resp.Body, sse: providers.NewSSEReader(resp.Body), provider: p.name, calls: map[string]int{}}, nil
}

// wireResponse is what the gateway reads of a response object.
type wireResponse struct {
	Object            string       `json:"object"`
	Status            string       `json:"status"`
	Output            []wireItem   `json:"output"`
	Usage             *wireUsageR  `json:"usage"`
	Error             *wireErrorR  `json:"error"`
	IncompleteDetails *wireDetails `json:"incomplete_details"`
}

type wireItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

type wireUsageR struct {
	InputTokens        *int `json:"input_tokens"`
	OutputTokens       *int `json:"output_tokens"`
	TotalTokens        *int `json:"total_tokens"`
	InputTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type wireErrorR struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type wireDetails struct {
	Reason string `json:"reason"`
}

func (u *wireUsageR) llm() *llm.Usage {
	if u == nil {
		return nil
	}
	out := &llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if d := u.InputTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// stop is the stop reason a response's status and output say.
func (r *wireResponse) stop() llm.StopReason {
	if r.Status == "incomplete" {
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
			return llm.StopContentFilter
		}
		return llm.StopMaxTokens
	}
	for i := range r.Output {
		if r.Output[i].Type == "function_call" {
			return llm.StopToolUse
		}
	}
	return llm.StopEnd
}

// answer is the normalized view of a response: text, calls and reasoning summaries (for the
// gateway's tool-call bookkeeping and logs; the client gets the raw object).
func (r *wireResponse) answer() *llm.Answer {
	a := &llm.Answer{Stop: r.stop()}
	for i := range r.Output {
		it := &r.Output[i]
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					a.Parts = append(a.Parts, llm.Part{Kind: llm.PartText, Text: c.Text})
				case "refusal":
					refusal := c.Refusal
					a.Refusal = &refusal
				}
			}
		case "function_call":
			a.Parts = append(a.Parts, llm.Part{Kind: llm.PartToolUse, ID: it.CallID, Name: it.Name, Input: it.Arguments})
		case "reasoning":
			for _, s := range it.Summary {
				a.Parts = append(a.Parts, llm.Part{Kind: llm.PartThinking, Text: s.Text})
			}
		}
	}
	if u := r.Usage.llm(); u != nil {
		a.Usage = *u
	}
	return a
}

// failure is a failed response's error, classified as an in-band error event would be.
func (r *wireResponse) failure(provider string) *providers.Error {
	code, msg := "", "the response failed"
	if r.Error != nil {
		code, msg = r.Error.Code, r.Error.Message
	}
	return responsesError(code, msg, provider)
}

// responsesError classifies an upstream's failure after its 200: busy and rate limits fail
// over (before output), anything else breaks the stream.
func responsesError(code, msg, provider string) *providers.Error {
	class := providers.StreamBroken
	switch code {
	case "rate_limit_exceeded":
		class = providers.RateLimited
	case "server_error", "server_is_overloaded", "slow_down":
		class = providers.Unavailable
	}
	if msg == "" {
		msg = "the response failed"
	}
	return &providers.Error{Class: class, Code: code, Message: msg, Provider: provider}
}

// responsesStream reads a native upstream's events: each comes back raw, with the normalized
// fields the gateway reads. It ends with io.EOF after response.completed or
// response.incomplete; response.failed and error events are failures; an upstream that just
// stops broke the stream.
type responsesStream struct {
	body     io.ReadCloser
	sse      *providers.SSEReader
	look     providers.Lookahead
	event    llm.RawEvent // the current upstream event
	provider string
	calls    map[string]int // function_call item id -> its dense index
	ncalls   int
	done     bool
}

// wireEvent is what the gateway reads of a stream event.
type wireEvent struct {
	Type     string        `json:"type"`
	Delta    string        `json:"delta"`
	ItemID   string        `json:"item_id"`
	Item     *wireItem     `json:"item"`
	Response *wireResponse `json:"response"`
	Code     string        `json:"code"`
	Message  string        `json:"message"`
}

func (s *responsesStream) Next() (llm.Delta, error) { return s.look.Next(s) }

// Pending reports whether the next delta is in hand (providers.Lookahead).
func (s *responsesStream) Pending() bool { return s.look.Pending(s, s.sse) }

// Step reads one event: each carries its raw event for the Responses door.
func (s *responsesStream) Step() (llm.Delta, bool, error) {
	if s.done {
		return llm.Delta{}, false, io.EOF
	}
	ev, err := s.sse.Next()
	if err != nil {
		return llm.Delta{}, false, s.broken(err)
	}
	if len(ev.Data) == 0 {
		return llm.Delta{}, false, nil
	}
	var we wireEvent
	if !parseDeltaEvent(ev.Data, &we) {
		if err := json.Unmarshal(ev.Data, &we); err != nil {
			return llm.Delta{}, false, &providers.Error{Class: providers.StreamBroken, Provider: s.provider,
				Message: "malformed stream event: " + err.Error(), Err: err}
		}
	}
	// One event at a time is in flight (llm.Delta.Raw is valid until the next Next), so its
	// struct is reused.
	s.event = llm.RawEvent{Wire: llm.WireResponses, Name: eventName(ev.Name), Data: ev.Data}
	d := llm.Delta{Raw: &s.event}
	switch we.Type {
	case "response.output_text.delta":
		d.Text = we.Delta
	case "response.refusal.delta":
		d.Refusal = we.Delta
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		d.Thinking = we.Delta
	case "response.output_item.added":
		if it := we.Item; it != nil {
			switch it.Type {
			case "function_call":
				s.calls[it.ID] = s.ncalls
				d.ToolCalls = []llm.ToolCallDelta{{Index: s.ncalls, ID: it.CallID, Name: it.Name}}
				s.ncalls++
			case "message", "reasoning":
			default:
				d.Opaque = true // a hosted tool's call: output the normalized fields cannot show
			}
		}
	case "response.function_call_arguments.delta":
		if i, ok := s.calls[we.ItemID]; ok && we.Delta != "" {
			d.ToolCalls = []llm.ToolCallDelta{{Index: i, Arguments: we.Delta}}
		}
	case "response.completed", "response.incomplete":
		s.done = true
		if r := we.Response; r != nil {
			d.Stop, d.Usage = r.stop(), r.Usage.llm()
		} else {
			d.Stop = llm.StopEnd
		}
	case "response.failed":
		if we.Response != nil {
			return llm.Delta{}, false, we.Response.failure(s.provider)
		}
		return llm.Delta{}, false, responsesError("", "", s.provider)
	case "error":
		return llm.Delta{}, false, responsesError(we.Code, we.Message, s.provider)
	}
	return d, true, nil
}

// parseDeltaEvent reads the events that make up nearly all of a stream, the deltas
//
//	{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}
//
// in one pass, without reflection. It reports false, leaving the event to encoding/json
// (whose reading it matches), for anything else: another key (encoding/json matches keys
// without regard to case, and other events carry objects the gateway reads), a key twice,
// a value of the wrong type, or invalid JSON.
func parseDeltaEvent(b []byte, we *wireEvent) bool {
	p := scanner{b: b}
	var seen uint16
	err := p.object(func(key []byte) error {
		var bit uint16
		var dst *string
		switch string(key) {
		case "type":
			bit, dst = 1, &we.Type
		case "delta":
			bit, dst = 2, &we.Delta
		case "item_id":
			bit, dst = 4, &we.ItemID
		case "sequence_number":
			bit = 8
		case "output_index":
			bit = 16
		case "content_index":
			bit = 32
		case "summary_index":
			bit = 64
		case "logprobs":
			bit = 128
		case "obfuscation":
			bit = 256
		default:
			return errSyntax
		}
		if seen&bit != 0 {
			return errSyntax
		}
		seen |= bit
		if dst == nil {
			return p.skip()
		}
		if p.peek() != '"' && p.peek() != 'n' {
			return errSyntax // encoding/json refuses a number or an object for a string
		}
		return p.nullableString(dst)
	})
	if err != nil || p.end() != nil {
		*we = wireEvent{}
		return false
	}
	return true
}

// eventName is the SSE event's name as a string, without an allocation for the common ones.
func eventName(b []byte) string {
	switch string(b) {
	case "response.output_text.delta":
		return "response.output_text.delta"
	case "response.function_call_arguments.delta":
		return "response.function_call_arguments.delta"
	case "response.reasoning_summary_text.delta":
		return "response.reasoning_summary_text.delta"
	case "response.reasoning_text.delta":
		return "response.reasoning_text.delta"
	case "response.refusal.delta":
		return "response.refusal.delta"
	}
	return string(b)
}

func (s *responsesStream) broken(err error) error {
	return providers.BrokenStream(err, s.provider, "the stream ended before response.completed")
}

func (s *responsesStream) Close() error {
	if s.done {
		providers.Drain(s.body)
		return nil
	}
	return s.body.Close()
}

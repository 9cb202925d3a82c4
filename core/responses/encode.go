package responses

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// Object is what a response object says besides its output: who it is and what was asked.
type Object struct {
	ID          string // resp_...
	CreatedAt   int64
	CompletedAt int64  // 0 until it completed
	Model       string // the gateway model
	Store       bool   // whether the gateway keeps it
	// Replayed marks a response served again from the response cache: an upstream's own
	// object then gets the gateway's times too (PatchResponse), not the recorded ones.
	Replayed bool
	// Request is the decoded request, whose settings the object repeats.
	Request *Request
}

// Status is a response's status with what it needs to say.
type Status struct {
	Status string // in_progress, completed, incomplete, failed
	// Incomplete is incomplete_details.reason (max_output_tokens, content_filter).
	Incomplete string
	// Error is the failure of a failed response.
	Error *llm.Error
}

// statusOf is the status an answer's stop gives.
func statusOf(stop llm.StopReason) Status {
	switch stop {
	case llm.StopMaxTokens, llm.StopContextWindow:
		return Status{Status: "incomplete", Incomplete: "max_output_tokens"}
	case llm.StopContentFilter:
		return Status{Status: "incomplete", Incomplete: "content_filter"}
	}
	return Status{Status: "completed"}
}

// output is one output item, as a whole answer holds it or as a stream builds it.
type output struct {
	kind      itemKind // itemMessage, itemCall or itemReasoning
	id        string
	text      []byte // message text, call arguments, reasoning summary
	refusal   string
	callID    string
	name      string
	namespace string // a call's: the namespace tool its function is in (unflatten)
	signature string // reasoning: the Anthropic-wire signature, or
	redacted  string // the data of a redacted block
	status    string // the item's own status: completed, or incomplete when the answer was cut
}

// outputs turns an answer's parts into the output items of response respID: consecutive
// text into one message, each tool call into a function_call, each thinking block into a
// reasoning item.
func outputs(a *llm.Answer, respID string) []*output {
	var out []*output
	var msg *output
	for i := range a.Parts {
		p := &a.Parts[i]
		switch p.Kind {
		case llm.PartText:
			if msg == nil {
				msg = &output{kind: itemMessage, id: itemID("msg", respID, len(out))}
				out = append(out, msg)
			}
			msg.text = append(msg.text, p.Text...)
			continue
		case llm.PartToolUse:
			out = append(out, &output{kind: itemCall, id: itemID("fc", respID, len(out)), callID: p.ID, name: p.Name, text: []byte(p.Input)})
		case llm.PartThinking:
			out = append(out, &output{kind: itemReasoning, id: itemID("rs", respID, len(out)), text: []byte(p.Text), signature: p.Signature})
		case llm.PartRedactedThinking:
			out = append(out, &output{kind: itemReasoning, id: itemID("rs", respID, len(out)), redacted: p.Data})
		default:
			continue // raw blocks only come from Anthropic's server tools, which this door never asks for
		}
		msg = nil
	}
	if a.Refusal != nil && *a.Refusal != "" {
		if msg == nil {
			msg = &output{kind: itemMessage, id: itemID("msg", respID, len(out))}
			out = append(out, msg)
		}
		msg.refusal = *a.Refusal
	}
	return out
}

// AppendResponse appends a whole answer as a response object.
func AppendResponse(b []byte, o *Object, a *llm.Answer) []byte {
	st := statusOf(a.Stop)
	items := outputs(a, o.ID)
	for _, it := range items {
		it.status = "completed"
		if it.kind == itemCall {
			it.namespace, it.name = o.Request.unflatten(it.name)
		}
	}
	if st.Status == "incomplete" && len(items) > 0 {
		items[len(items)-1].status = "incomplete"
	}
	return appendObject(b, o, st, items, &a.Usage)
}

// appendObject writes the response object: the fields in the order OpenAI writes them, each
// setting as the client sent it (tools, reasoning and text in the response's own shape, see
// tools.go), or OpenAI's default when it sent none: temperature and top_p 1, the penalties 0
// (this door takes neither penalty, as OpenAI's Responses API does not). Every member the
// Responses API's object has is there, so a client (or the Open Responses schema) that
// requires one finds it.
func appendObject(b []byte, o *Object, st Status, items []*output, u *llm.Usage) []byte {
	r := o.Request
	enc := r != nil && r.IncludeEncrypted
	echo := func(b []byte, field, dflt string) []byte {
		if r != nil {
			if v := r.echo[field]; v != nil {
				return append(b, v...)
			}
		}
		return append(b, dflt...)
	}
	b = append(b, `{"id":`...)
	b = openai.AppendString(b, o.ID)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, o.CreatedAt, 10)
	b = append(b, `,"status":`...)
	b = openai.AppendString(b, st.Status)
	b = append(b, `,"background":false,"completed_at":`...)
	if o.CompletedAt > 0 && st.Status == "completed" { // only a completed response has completed
		b = strconv.AppendInt(b, o.CompletedAt, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"error":`...)
	if st.Error != nil {
		b = appendResponseError(b, st.Error)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"frequency_penalty":0,"incomplete_details":`...)
	if st.Incomplete != "" {
		b = append(b, `{"reason":`...)
		b = openai.AppendString(b, st.Incomplete)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"instructions":`...)
	b = echo(b, "instructions", "null")
	b = append(b, `,"max_output_tokens":`...)
	b = echo(b, "max_output_tokens", "null")
	b = append(b, `,"max_tool_calls":null,"model":`...)
	b = openai.AppendString(b, o.Model)
	b = append(b, `,"output":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, it, it.status, enc)
	}
	b = append(b, `],"parallel_tool_calls":`...)
	b = echo(b, "parallel_tool_calls", "true")
	b = append(b, `,"presence_penalty":0,"previous_response_id":`...)
	b = echo(b, "previous_response_id", "null")
	b = append(b, `,"prompt_cache_key":`...)
	b = echo(b, "prompt_cache_key", "null")
	b = append(b, `,"reasoning":`...)
	b = echo(b, "reasoning", `{"effort":null,"summary":null}`)
	b = append(b, `,"safety_identifier":`...)
	b = echo(b, "safety_identifier", "null")
	b = append(b, `,"service_tier":"default","store":`...)
	b = strconv.AppendBool(b, o.Store)
	b = append(b, `,"temperature":`...)
	b = echo(b, "temperature", "1")
	b = append(b, `,"text":`...)
	b = echo(b, "text", `{"format":{"type":"text"}}`)
	b = append(b, `,"tool_choice":`...)
	b = echo(b, "tool_choice", `"auto"`)
	b = append(b, `,"tools":`...)
	b = echo(b, "tools", "[]")
	b = append(b, `,"top_logprobs":0,"top_p":`...)
	b = echo(b, "top_p", "1")
	b = append(b, `,"truncation":`...)
	b = echo(b, "truncation", `"disabled"`)
	b = append(b, `,"usage":`...)
	if u.Reported() {
		b = AppendUsage(b, u)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"user":`...)
	b = echo(b, "user", "null")
	b = append(b, `,"metadata":`...)
	b = echo(b, "metadata", "{}")
	return append(b, '}')
}

// appendItem writes one output item with the given status; enc adds a reasoning item's
// encrypted_content (include: reasoning.encrypted_content).
func appendItem(b []byte, it *output, status string, enc bool) []byte {
	switch it.kind {
	case itemMessage:
		b = append(b, `{"id":`...)
		b = openai.AppendString(b, it.id)
		b = append(b, `,"type":"message","status":`...)
		b = openai.AppendString(b, status)
		b = append(b, `,"content":[`...)
		n := 0
		if len(it.text) > 0 || it.refusal == "" && status != "in_progress" {
			b = appendTextPart(b, it.text)
			n++
		}
		if it.refusal != "" {
			if n > 0 {
				b = append(b, ',')
			}
			b = appendRefusalPart(b, it.refusal)
		}
		return append(b, `],"role":"assistant"}`...)
	case itemCall:
		b = append(b, `{"id":`...)
		b = openai.AppendString(b, it.id)
		b = append(b, `,"type":"function_call","status":`...)
		b = openai.AppendString(b, status)
		b = append(b, `,"arguments":`...)
		b = openai.AppendString(b, string(it.text))
		b = append(b, `,"call_id":`...)
		b = openai.AppendString(b, it.callID)
		b = append(b, `,"name":`...)
		b = openai.AppendString(b, it.name)
		if it.namespace != "" {
			b = append(b, `,"namespace":`...)
			b = openai.AppendString(b, it.namespace)
		}
		return append(b, '}')
	}
	b = append(b, `{"id":`...)
	b = openai.AppendString(b, it.id)
	b = append(b, `,"type":"reasoning","summary":[`...)
	if len(it.text) > 0 && status != "in_progress" {
		b = appendSummaryPart(b, it.text)
	}
	b = append(b, ']')
	if enc && status != "in_progress" {
		switch {
		case it.signature != "":
			b = append(b, `,"encrypted_content":`...)
			b = openai.AppendString(b, signaturePrefix+it.signature)
		case it.redacted != "":
			b = append(b, `,"encrypted_content":`...)
			b = openai.AppendString(b, redactedPrefix+it.redacted)
		}
	}
	return append(b, '}')
}

func appendTextPart(b []byte, text []byte) []byte {
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	b = openai.AppendString(b, string(text))
	return append(b, '}')
}

func appendRefusalPart(b []byte, refusal string) []byte {
	b = append(b, `{"type":"refusal","refusal":`...)
	b = openai.AppendString(b, refusal)
	return append(b, '}')
}

func appendSummaryPart(b []byte, text []byte) []byte {
	b = append(b, `{"type":"summary_text","text":`...)
	b = openai.AppendString(b, string(text))
	return append(b, '}')
}

// AppendUsage appends the usage object: input_tokens is the whole input, cached_tokens its
// share read from a cache, output_tokens includes the reasoning_tokens. The counts are the
// reported ones (total_tokens their sum when not reported); the two details are always
// there, as OpenAI always writes them, 0 when the backend reported no such tokens.
func AppendUsage(b []byte, u *llm.Usage) []byte {
	zero := 0
	orZero := func(v *int) *int {
		if v == nil {
			return &zero
		}
		return v
	}
	total, sum := u.TotalTokens, 0
	if total == nil && u.InputTokens != nil && u.OutputTokens != nil {
		sum = *u.InputTokens + *u.OutputTokens
		total = &sum
	}
	b = append(b, '{')
	n := len(b)
	field := func(name string, v *int) {
		if v == nil {
			return
		}
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(*v), 10)
	}
	details := func(name, inner string, v *int) {
		if v == nil {
			return
		}
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":{"`...)
		b = append(b, inner...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(*v), 10)
		b = append(b, '}')
	}
	field("input_tokens", u.InputTokens)
	details("input_tokens_details", "cached_tokens", orZero(u.CacheReadTokens))
	field("output_tokens", u.OutputTokens)
	details("output_tokens_details", "reasoning_tokens", orZero(u.ReasoningTokens))
	field("total_tokens", total)
	return append(b, '}')
}

// appendResponseError writes a failed response's error: {code, message}.
func appendResponseError(b []byte, e *llm.Error) []byte {
	code := e.Code
	if code == "" {
		code = "server_error"
	}
	b = append(b, `{"code":`...)
	b = openai.AppendString(b, code)
	b = append(b, `,"message":`...)
	b = openai.AppendString(b, e.Message)
	return append(b, '}')
}

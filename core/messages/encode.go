package messages

import (
	"net/http"
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// StopReason maps the gateway's stop reason to Anthropic's stop_reason.
func StopReason(s llm.StopReason) string {
	switch s {
	case llm.StopMaxTokens:
		return "max_tokens"
	case llm.StopContextWindow:
		return "model_context_window_exceeded"
	case llm.StopToolUse:
		return "tool_use"
	case llm.StopSequence:
		return "stop_sequence"
	case llm.StopContentFilter:
		return "refusal"
	case llm.StopPauseTurn:
		return "pause_turn"
	}
	return "end_turn"
}

// AppendMessage appends a whole answer as a Messages API message object.
func AppendMessage(b []byte, id, model string, a *llm.Answer) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendString(b, model)
	b = append(b, `,"content":[`...)
	n := 0
	for i := range a.Parts {
		before := len(b)
		if n > 0 {
			b = append(b, ',')
		}
		if b2, ok := appendAnswerBlock(b, &a.Parts[i]); ok {
			b = b2
			n++
		} else {
			b = b[:before]
		}
	}
	if a.Refusal != nil && *a.Refusal != "" {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, *a.Refusal)
		b = append(b, '}')
	}
	b = append(b, `],"stop_reason":`...)
	b = appendString(b, StopReason(a.Stop))
	b = append(b, `,"stop_sequence":`...)
	if a.StopSequence != "" {
		b = appendString(b, a.StopSequence)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"usage":`...)
	b = AppendUsage(b, &a.Usage)
	return append(b, '}')
}

// appendAnswerBlock writes one answer part as a content block; ok is false for parts the
// wire has no block for.
func appendAnswerBlock(b []byte, p *llm.Part) ([]byte, bool) {
	switch p.Kind {
	case llm.PartText:
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, p.Text)
		return append(b, '}'), true
	case llm.PartToolUse:
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendString(b, p.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, p.Name)
		b = append(b, `,"input":`...)
		b = appendInput(b, p.Input)
		return append(b, '}'), true
	case llm.PartThinking:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendString(b, p.Text)
		b = append(b, `,"signature":`...)
		b = appendString(b, p.Signature)
		return append(b, '}'), true
	case llm.PartRedactedThinking:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendString(b, p.Data)
		return append(b, '}'), true
	case llm.PartRaw:
		if len(p.Raw) > 0 {
			return append(b, p.Raw...), true
		}
	}
	return b, false
}

// appendInput writes tool input, which providers hand over as a JSON object text; an empty
// one (a call without arguments) is {}.
func appendInput(b []byte, input string) []byte {
	if input == "" {
		return append(b, "{}"...)
	}
	return append(b, input...)
}

// AppendUsage writes Anthropic's usage object: input_tokens is the uncached input, the cache
// counts apart. Counts the provider did not report are left out.
func AppendUsage(b []byte, u *llm.Usage) []byte {
	b = append(b, '{')
	first := true
	field := func(name string, v *int) {
		if v == nil {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(*v), 10)
	}
	field("input_tokens", u.UncachedInput())
	field("cache_creation_input_tokens", u.CacheWriteTokens)
	field("cache_read_input_tokens", u.CacheReadTokens)
	field("output_tokens", u.OutputTokens)
	return append(b, '}')
}

// ErrorStatus maps the gateway's error to Anthropic's status and error type. Anthropic's
// SDKs retry 408, 409, 429 and 5xx; an upstream that is busy or down is the API's own 529
// overloaded_error, which they retry with backoff.
func ErrorStatus(e *llm.Error) (int, string) {
	switch e.Status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType, http.StatusNotImplemented, http.StatusRequestTimeout:
		return e.Status, "invalid_request_error"
	case http.StatusUnauthorized:
		return e.Status, "authentication_error"
	case http.StatusForbidden:
		return e.Status, "permission_error"
	case http.StatusNotFound:
		return e.Status, "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return e.Status, "request_too_large"
	case http.StatusTooManyRequests:
		return e.Status, "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return 529, "overloaded_error"
	case http.StatusGatewayTimeout:
		return e.Status, "timeout_error"
	}
	if e.Status >= 500 {
		return http.StatusInternalServerError, "api_error"
	}
	return e.Status, "invalid_request_error"
}

// AppendError appends {"type":"error","error":{"type","message"},"request_id"}.
func AppendError(b []byte, e *llm.Error, requestID string) []byte {
	_, typ := ErrorStatus(e)
	b = append(b, `{"type":"error","error":{"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	b = append(b, '}')
	if requestID != "" {
		b = append(b, `,"request_id":`...)
		b = appendString(b, requestID)
	}
	return append(b, '}')
}

// WriteError sends e as a complete Anthropic error response.
func WriteError(w http.ResponseWriter, e *llm.Error, requestID string) {
	status, _ := ErrorStatus(e)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter != "" {
		h.Set("Retry-After", e.RetryAfter)
	}
	if e.NoRetry {
		h.Set("X-Should-Retry", "false")
	}
	body := AppendError(make([]byte, 0, 128+len(e.Message)), e, requestID)
	body = append(body, '\n')
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func appendString(b []byte, s string) []byte { return jsonx.AppendString(b, s) }

package openai

import (
	"net/http"
	"strconv"

	"github.com/fngate/fngate/core/llm"
)

// AppendError appends the {"error":{"message","type","param","code"}} body of e.
func AppendError(b []byte, e *llm.Error) []byte {
	b = append(b, `{"error":{"message":`...)
	b = AppendString(b, e.Message)
	b = append(b, `,"type":`...)
	b = AppendString(b, e.Type)
	b = append(b, `,"param":`...)
	b = appendNullableString(b, e.Param)
	b = append(b, `,"code":`...)
	b = appendNullableString(b, e.Code)
	return append(b, "}}"...)
}

// WriteError sends e as a complete JSON response, with the headers that steer SDK retries.
func WriteError(w http.ResponseWriter, e *llm.Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter != "" {
		h.Set("Retry-After", e.RetryAfter)
	}
	if e.NoRetry {
		h.Set("X-Should-Retry", "false")
	}
	body := AppendError(make([]byte, 0, 128+len(e.Message)), e)
	body = append(body, '\n')
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// AppendErrorEvent appends the in-band error that ends a stream after output was sent; the
// stream then closes without [DONE] so no client mistakes a broken answer for a finished one.
func AppendErrorEvent(b []byte, e *llm.Error) []byte {
	b = append(b, "data: "...)
	b = AppendError(b, e)
	return append(b, "\n\n"...)
}

// FieldError is a decoding failure attributable to one request parameter.
type FieldError struct {
	Param   string
	Message string
	Code    string // "" is sent as null
}

func (e *FieldError) badRequest() *llm.Error {
	oe := llm.BadRequest(e.Param, e.Message)
	oe.Code = e.Code
	return oe
}

func (e *FieldError) Error() string { return e.Message }

func appendNullableString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return AppendString(b, s)
}

package openai

import (
	"net/http"
	"strconv"
)

// Error types the gateway sends. OpenAI SDKs choose their exception class and retry behaviour
// from the HTTP status alone; the type only informs a human reader.
const (
	TypeInvalidRequest     = "invalid_request_error"
	TypeAuthentication     = "authentication_error"
	TypePermission         = "permission_error"
	TypeNotFound           = "not_found_error"
	TypeRateLimit          = "rate_limit_error"
	TypeServer             = "server_error"
	TypeServiceUnavailable = "service_unavailable_error"
	TypeTimeout            = "timeout_error"
)

// Error is an error in OpenAI's wire shape together with the HTTP status that carries it.
type Error struct {
	Status  int
	Type    string
	Message string
	Param   string // "" is sent as null
	Code    string // "" is sent as null

	// RetryAfter is forwarded as the Retry-After header (seconds or an HTTP date).
	RetryAfter string
	// NoRetry sends x-should-retry: false, for statuses SDKs would otherwise retry (501).
	NoRetry bool
}

func (e *Error) Error() string {
	if e.Param != "" {
		return e.Message + " (param " + e.Param + ")"
	}
	return e.Message
}

// BadRequest is a 400 invalid_request_error naming param.
func BadRequest(param, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Param: param, Message: msg}
}

// Unsupported is a 400 for a field or value the gateway (or a route) does not implement.
func Unsupported(param, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Param: param, Code: "unsupported_parameter", Message: msg}
}

// UnsupportedEndpoint is the 501 for /v1/completions on a chat-only model. SDKs retry any
// status >= 500, hence x-should-retry: false.
func UnsupportedEndpoint(model, provider string) *Error {
	return &Error{
		Status:  http.StatusNotImplemented,
		Type:    TypeInvalidRequest,
		Code:    "unsupported_endpoint",
		NoRetry: true,
		Message: "The completions endpoint is not supported for " + model + " on " + provider + ". Use the chat endpoint instead.",
	}
}

// AppendJSON appends the {"error":{...}} body.
func (e *Error) AppendJSON(b []byte) []byte {
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

// Write sends the error as a complete JSON response.
func (e *Error) Write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter != "" {
		h.Set("Retry-After", e.RetryAfter)
	}
	if e.NoRetry {
		h.Set("X-Should-Retry", "false")
	}
	body := e.AppendJSON(make([]byte, 0, 128+len(e.Message)))
	body = append(body, '\n')
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// FieldError is a decoding failure attributable to one request parameter.
type FieldError struct {
	Param   string
	Message string
	Code    string // "" is sent as null
}

func (e *FieldError) badRequest() *Error {
	oe := BadRequest(e.Param, e.Message)
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

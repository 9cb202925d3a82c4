package llm

import "net/http"

// Error types. They name what went wrong in OpenAI's vocabulary, which the Chat Completions
// door sends as is; other doors map them to their own (Anthropic: api_error,
// overloaded_error, ...). SDKs choose their behaviour from the HTTP status alone; the type
// only informs a human reader.
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

// Error is what a client is told when the gateway refuses a request or cannot serve it, with
// the HTTP status that carries it. Front doors render it in their wire's error shape.
type Error struct {
	Status  int
	Type    string
	Message string
	// Param names the request field at fault, in the door's notation ("messages[3].content").
	Param string
	// Code is a stable machine-readable reason ("model_not_found", "upstream_overloaded").
	Code string

	// RetryAfter is sent as the Retry-After header (seconds or an HTTP date).
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

package anthropic

import (
	"bytes"
	"net/http"

	"github.com/fngate/fngate/core/providers"
)

// ErrorFromResponse classifies a failed Messages call from its status and body. It reads
// Anthropic's shape {"type":"error","error":{"type","message"},"request_id"} and, because
// Vertex AI's front end answers quota and permission failures itself, Google's
// {"error":{"code","message","status"}} too. Anthropic's 529 is overloaded (busy, 503 to the
// client); 401, 403 and 402 mean the gateway's own credentials or account failed, which is
// worth a failover, never the client's 401.
func ErrorFromResponse(status int, header http.Header, body []byte, provider string) *providers.Error {
	code, msg, param := providers.ParseErrorBody(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	class := providers.ClassifyStatus(status)
	if c, ok := classByType(code); ok && refines(class, c) {
		class = c
	}
	if id := requestID(header, body); id != "" {
		msg += " (request-id " + id + ")"
	}
	return &providers.Error{
		Class:      class,
		Status:     status,
		Code:       code,
		Message:    msg,
		Param:      param,
		RetryAfter: providers.RetryAfter(header),
		Provider:   provider,
	}
}

// classByType maps Anthropic's error.type (and the Google statuses Vertex AI sends) to a
// class. It matters where the status alone says too little: an overloaded_error under a 500
// or a 503 is as busy as a 529, and the error event inside a 200 stream has no status at all.
func classByType(t string) (providers.Class, bool) {
	switch t {
	case "overloaded_error":
		return providers.Overloaded, true
	case "rate_limit_error", "RESOURCE_EXHAUSTED":
		return providers.RateLimited, true
	case "authentication_error", "permission_error", "billing_error", "UNAUTHENTICATED", "PERMISSION_DENIED":
		return providers.Auth, true
	case "not_found_error", "NOT_FOUND":
		return providers.NotFound, true
	case "timeout_error", "DEADLINE_EXCEEDED":
		return providers.Timeout, true
	case "api_error", "INTERNAL", "UNAVAILABLE":
		return providers.Unavailable, true
	case "invalid_request_error", "request_too_large", "INVALID_ARGUMENT", "FAILED_PRECONDITION":
		return providers.BadRequest, true
	}
	return "", false
}

// refines reports whether the class named by the error type should replace the one the
// status gave. Only busy signals move a server error, so a 400 never turns into a failover
// and a 5xx never into the client's fault.
func refines(byStatus, byType providers.Class) bool {
	switch byStatus {
	case providers.Unavailable:
		return byType == providers.Overloaded || byType == providers.RateLimited || byType == providers.Timeout
	}
	return false
}

// eventError converts the error event of a stream (sent after the 200, so there is no
// status). A request-level complaint this late is not the client's fault to fix and must not
// stop the failover, hence stream_broken rather than bad_request.
func eventError(data []byte, provider string) *providers.Error {
	code, msg, _ := providers.ParseErrorBody(data)
	class, ok := classByType(code)
	if !ok || class == providers.BadRequest {
		class = providers.StreamBroken
	}
	if msg == "" {
		msg = "error event in the stream"
	}
	if id := requestID(nil, data); id != "" {
		msg += " (request-id " + id + ")"
	}
	return &providers.Error{Class: class, Code: code, Message: msg, Provider: provider}
}

// requestID finds Anthropic's request id, which its support asks for, in the response header
// or in the error body.
func requestID(h http.Header, body []byte) string {
	if id := h.Get("Request-Id"); id != "" {
		return id
	}
	// The body's request_id is the last field of a small object: a scan is enough.
	_, rest, ok := bytes.Cut(body, []byte(`"request_id":`))
	if !ok {
		return ""
	}
	rest = bytes.TrimLeft(rest, " ")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	id, _, ok := bytes.Cut(rest[1:], []byte{'"'})
	if !ok || len(id) == 0 || len(id) > 128 || bytes.IndexByte(id, '\\') >= 0 {
		return ""
	}
	return string(id)
}

package anthropic

import (
	"net/http"
	"testing"

	"github.com/fngate/fngate/core/providers"
)

func TestErrorFromResponse(t *testing.T) {
	anthropic := func(typ, msg string) string {
		return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
	}
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		class      providers.Class
		client     int // the status the gateway's client gets
		retryAfter string
		failover   bool
	}{
		{"overloaded 529", 529, nil, anthropic("overloaded_error", "Overloaded"), providers.Overloaded, 503, "", true},
		{"overloaded under a 500", 500, nil, anthropic("overloaded_error", "Overloaded"), providers.Overloaded, 503, "", true},
		{"rate limited keeps retry-after", 429, http.Header{"Retry-After": {"17"}}, anthropic("rate_limit_error", "slow down"), providers.RateLimited, 429, "17", true},
		{"our key refused", 401, nil, anthropic("authentication_error", "invalid x-api-key"), providers.Auth, 502, "", true},
		{"our key lacks permission", 403, nil, anthropic("permission_error", "no access to model"), providers.Auth, 502, "", true},
		{"billing", 402, nil, anthropic("billing_error", "credit balance too low"), providers.Auth, 502, "", true},
		{"unknown model", 404, nil, anthropic("not_found_error", "model: claude-nope"), providers.NotFound, 502, "", true},
		{"bad request stays 400", 400, nil, anthropic("invalid_request_error", "messages.0.content: empty"), providers.BadRequest, 400, "", false},
		{"too large", 413, nil, anthropic("request_too_large", "Request exceeds the maximum allowed number of bytes."), providers.BadRequest, 400, "", false},
		{"api error", 500, nil, anthropic("api_error", "Internal server error"), providers.Unavailable, 502, "", true},
		{"gateway timeout", 504, nil, anthropic("timeout_error", "timed out"), providers.Timeout, 504, "", true},
		{"html from a proxy", 502, nil, `<html>Bad Gateway</html>`, providers.Unavailable, 502, "", true},
		{"Vertex quota, Google shape", 429, nil, `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`, providers.RateLimited, 429, "", true},
		{"a 400 saying overloaded is still the client's", 400, nil, anthropic("overloaded_error", "?"), providers.BadRequest, 400, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ErrorFromResponse(tt.status, tt.header, []byte(tt.body), "Anthropic")
			if e.Class != tt.class || e.Status != tt.status || e.Provider != "Anthropic" {
				t.Fatalf("got class %s status %d provider %q, want %s %d", e.Class, e.Status, e.Provider, tt.class, tt.status)
			}
			if e.Failover() != tt.failover {
				t.Errorf("Failover() = %v", e.Failover())
			}
			ce := e.ClientError()
			if ce.Status != tt.client || ce.RetryAfter != tt.retryAfter {
				t.Errorf("client gets %d retry-after %q, want %d %q", ce.Status, ce.RetryAfter, tt.client, tt.retryAfter)
			}
			if e.Message == "" {
				t.Error("no message")
			}
		})
	}
	e := ErrorFromResponse(529, nil, []byte(anthropic("overloaded_error", "Overloaded")), "Anthropic")
	if e.Code != "overloaded_error" || e.Message != "Overloaded (request-id req_011CSHoEeqs5C35K2UUqR7Fy)" {
		t.Errorf("code %q message %q: want the upstream type and message with its request id", e.Code, e.Message)
	}
	e = ErrorFromResponse(500, http.Header{"Request-Id": {"req_hdr"}}, nil, "Anthropic")
	if e.Message != "Internal Server Error (request-id req_hdr)" {
		t.Errorf("message %q", e.Message)
	}
}

func TestEventError(t *testing.T) {
	for _, tt := range []struct {
		body  string
		class providers.Class
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, providers.Overloaded},
		{`{"type":"error","error":{"type":"api_error","message":"boom"}}`, providers.Unavailable},
		{`{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, providers.RateLimited},
		// A complaint about the request after the 200 must not stop the failover.
		{`{"type":"error","error":{"type":"invalid_request_error","message":"?"}}`, providers.StreamBroken},
		{`{"type":"error","error":{"type":"brand_new_error","message":"?"}}`, providers.StreamBroken},
		{`not json`, providers.StreamBroken},
	} {
		e := eventError([]byte(tt.body), "Anthropic")
		if e.Class != tt.class || !e.Failover() || e.Status != 0 {
			t.Errorf("%s: class %s failover %v status %d, want %s, failover, no status", tt.body, e.Class, e.Failover(), e.Status, tt.class)
		}
	}
}

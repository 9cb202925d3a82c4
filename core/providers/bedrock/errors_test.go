package bedrock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/bedrockfake"
)

// TestExceptions sends every Bedrock exception as an HTTP error response and as an
// exception frame inside a stream, through the real SDK, to Converse and to InvokeModel, and
// checks the class (which decides failover and remediation), the logged status and the
// status the client gets: the same for both APIs.
func TestExceptions(t *testing.T) {
	p, f := fakeProvider(t)
	req := hello()
	for _, tc := range []struct {
		exception string
		status    int // HTTP status Bedrock answers with
		class     providers.Class
		client    int
		failover  bool
	}{
		{"ThrottlingException", 429, providers.RateLimited, 429, true},
		{"ServiceQuotaExceededException", 400, providers.RateLimited, 429, true},
		{"ServiceUnavailableException", 503, providers.Unavailable, 503, true},
		{"ModelNotReadyException", 429, providers.Overloaded, 503, true},
		{"ModelTimeoutException", 408, providers.Timeout, 504, true},
		{"InternalServerException", 500, providers.Unavailable, 502, true},
		{"ModelErrorException", 424, providers.Unavailable, 502, true},
		{"ModelStreamErrorException", 424, providers.Unavailable, 502, true},
		{"AccessDeniedException", 403, providers.Auth, 502, true},
		{"UnrecognizedClientException", 403, providers.Auth, 502, true},
		{"ExpiredTokenException", 403, providers.Auth, 502, true},
		{"ResourceNotFoundException", 404, providers.NotFound, 502, true},
		{"ValidationException", 400, providers.BadRequest, 400, false},
		{"SomeFutureException", 409, providers.BadRequest, 400, false},
		{"SomeFutureServerException", 502, providers.Unavailable, 502, true},
	} {
		check := func(t *testing.T, how string, err error, status int) {
			t.Helper()
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s: %v (%T) is not a *providers.Error", how, err, err)
			}
			if pe.Class != tc.class || pe.Status != status || pe.Code != tc.exception || pe.Failover() != tc.failover {
				t.Errorf("%s: class %s status %d code %q failover %v; want %s %d %q %v", how, pe.Class, pe.Status, pe.Code, pe.Failover(), tc.class, status, tc.exception, tc.failover)
			}
			if got := pe.ClientError().Status; got != tc.client {
				t.Errorf("%s: the client gets %d, want %d", how, got, tc.client)
			}
			if pe.Message != "msg "+tc.exception {
				t.Errorf("%s: message %q", how, pe.Message)
			}
		}
		for _, api := range []string{apiConverse, apiInvoke} {
			t.Run(tc.exception+"/"+api, func(t *testing.T) {
				target := providers.Target{Model: "m-" + tc.exception, API: api}
				f.Script(target.Model, bedrockfake.Answer{Error: &bedrockfake.Exception{Type: tc.exception, Message: "msg " + tc.exception, Status: tc.status}})
				n := len(f.Requests())
				_, err := p.Generate(ctx, req, target)
				check(t, "plain", err, tc.status)
				_, err = p.Stream(ctx, req, target)
				check(t, "stream", err, tc.status)
				// The SDK retries throttling and 5xx by default; the gateway owns retries.
				if got := len(f.Requests()) - n; got != 2 {
					t.Errorf("%d requests for two calls: the SDK retried", got)
				}
				if tc.status == 409 || tc.status == 502 {
					return // not a Bedrock stream exception
				}
				// Inside a stream the exception arrives after the 200, so the status is the
				// one Bedrock documents for it.
				f.Script(target.Model, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "x"}}, FailAfter: 1,
					StreamError: &bedrockfake.Exception{Type: tc.exception, Message: "msg " + tc.exception}})
				st, err := p.Stream(ctx, req, target)
				if err != nil {
					t.Fatal(err)
				}
				_, err = streamResult(st)
				check(t, "in stream", err, tc.status)
			})
		}
	}
}

// TestUnknownModelIsNotFound: Bedrock answers a model id it does not know with 400
// ValidationException "The provided model identifier is invalid." (recorded from the live
// API), on Converse and InvokeModel alike. The route names a model that does not exist: class not_found, so the gateway fails
// over, the client of the last route gets 502 upstream_model_not_found and self-repair
// disables the route. Other ValidationExceptions stay the client's 400.
func TestUnknownModelIsNotFound(t *testing.T) {
	p, f := fakeProvider(t)
	req := hello()
	for _, tc := range []struct {
		message string
		class   providers.Class
		client  string
	}{
		{"The provided model identifier is invalid.", providers.NotFound, "upstream_model_not_found"},
		{"The provided model identifier is invalid", providers.NotFound, "upstream_model_not_found"},
		{"Malformed input request: #: extraneous key [foo] is not permitted, please reformat your input and try again.", providers.BadRequest, "upstream_bad_request"},
	} {
		f.Script("m-unknown", bedrockfake.Answer{Error: &bedrockfake.Exception{Type: "ValidationException", Message: tc.message, Status: 400}})
		for _, c := range []struct {
			stream bool
			api    string
		}{{false, apiConverse}, {true, apiConverse}, {false, apiInvoke}, {true, apiInvoke}} {
			stream, target := c.stream, providers.Target{Model: "m-unknown", API: c.api}
			var err error
			if stream {
				_, err = p.Stream(ctx, req, target)
			} else {
				_, err = p.Generate(ctx, req, target)
			}
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q stream=%v %s: %v is not a *providers.Error", tc.message, stream, c.api, err)
			}
			ce := pe.ClientError()
			if pe.Class != tc.class || pe.Status != 400 || pe.Code != "ValidationException" || ce.Code != tc.client || pe.Failover() != (tc.class != providers.BadRequest) {
				t.Errorf("%q stream=%v %s: class %s status %d code %q, client %d %s, failover %v", tc.message, stream, c.api, pe.Class, pe.Status, pe.Code, ce.Status, ce.Code, pe.Failover())
			}
		}
	}
}

// A gateway timer cancels the attempt: its cause (first-byte timeout) names the failure,
// whatever the SDK made of the cancelled request.
func TestClassifyContextCause(t *testing.T) {
	// Through the SDK: a stream that stalls past the cancel ends with the timer's class.
	p, f := fakeProvider(t)
	f.StreamDelay = 300 * time.Millisecond
	f.Script("slow", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "late"}}})
	c, cancel := context.WithCancelCause(context.Background())
	timer := time.AfterFunc(50*time.Millisecond, func() { cancel(providers.ErrFirstByteTimeout) })
	defer timer.Stop()
	_, err := p.Stream(c, hello(), providers.Target{Model: "slow"})
	var got *providers.Error
	if !errors.As(err, &got) || got.Class != providers.Timeout {
		t.Errorf("got %v, want class timeout", err)
	}
}

package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// The request's own guards, which every platform gets from the core (Lambda's lambdaurl runs
// its handler without a recover, and kills an invoke hard at its deadline): a panic is the
// request's failure and never the instance's, and a request whose context carries a deadline
// ends in-band shortly before it.

// withDeadline gives every request's context a deadline after d, as lambdaurl gives it the
// invoke's.
func withDeadline(d time.Duration) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			h.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// timeLimited serves the fake upstream through a gateway whose requests have 1 s to live and
// are ended 200 ms before that.
func timeLimited(t *testing.T, up *openaifake.Server) *testGateway {
	t.Helper()
	cfg := fmt.Sprintf(`
connections:
  up: {kind: vllm, base_url: %s}
models:
  up: {routes: [{connection: up, model: served}]}
`, up.BaseURL())
	return newWrappedGateway(t, cfg, withDeadline(time.Second), func(o *gateway.Options) { o.DeadlineMargin = 200 * time.Millisecond })
}

const functionTimeoutEvent = `data: {"error":{"message":"the gateway function reached its time limit before the answer was complete","type":"timeout_error","param":null,"code":"function_timeout"}}` + "\n\n"

func TestTimeLimitBeforeOutputIsA504(t *testing.T) {
	up := openaifake.New()
	defer up.Close()
	up.Default = openaifake.Reply{Text: "late", StallBeforeHeaders: 5 * time.Second}
	g := timeLimited(t, up)
	for _, stream := range []bool{false, true} {
		r := g.Chat(t, fmt.Sprintf(`{"model":"up","stream":%t,"messages":[{"role":"user","content":"hi"}]}`, stream))
		e := r.ErrorObject(t)
		if r.Status != http.StatusGatewayTimeout || e["code"] != "function_timeout" {
			t.Fatalf("stream %t: got %d %s; want a 504 function_timeout", stream, r.Status, r.Body)
		}
	}
	for _, l := range g.logs.Lines(t, record.MsgRequest) {
		if l["status"] != float64(http.StatusGatewayTimeout) || l["error_code"] != "function_timeout" {
			t.Errorf("the request line says %v", l)
		}
	}
	if pe := g.logs.Lines(t, record.MsgProviderError); len(pe) > 0 {
		t.Errorf("the time limit is not the provider's failure: %v", pe)
	}
	for _, a := range g.logs.Lines(t, record.MsgAttempt) {
		if a["outcome"] != record.OutcomeError || a["error_code"] != "function_timeout" || a["error_class"] != nil {
			t.Errorf("an attempt the time limit cut is the gateway's error, not the provider's: %v", a)
		}
	}
}

func TestTimeLimitMidStreamEndsWithTheErrorEvent(t *testing.T) {
	up := openaifake.New()
	defer up.Close()
	up.Default = openaifake.Reply{Text: "one two three four", StallAfter: 2, StallFor: 5 * time.Second}
	g := timeLimited(t, up)
	r := g.Chat(t, `{"model":"up","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != http.StatusOK || !strings.HasSuffix(string(r.Body), functionTimeoutEvent) || strings.Contains(string(r.Body), "[DONE]") {
		t.Fatalf("got %d %q; want the stream closed with a function_timeout event and no [DONE]", r.Status, r.Body)
	}
	// The fake notices the cancelled call when its connection closes, a moment later.
	gatewaytest.WaitFor(t, func() bool { return up.Canceled() > 0 }, "the upstream call went on after the time limit")
}

func TestTimeLimitLeavesFinishedStreamsAlone(t *testing.T) {
	up := openaifake.New()
	defer up.Close()
	up.Default = openaifake.Reply{Text: "quick answer"}
	g := timeLimited(t, up)
	r := g.Chat(t, `{"model":"up","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if !strings.HasSuffix(string(r.Body), "data: [DONE]\n\n") || strings.Contains(string(r.Body), "function_timeout") {
		t.Fatalf("a stream that ended got more: %q", r.Body)
	}
	r = g.Do(t, http.MethodPost, "/v1/responses", `{"model":"up","stream":true,"input":"hi"}`)
	if !strings.Contains(string(r.Body), "event: response.completed\n") || strings.Contains(string(r.Body), "function_timeout") {
		t.Fatalf("a Responses stream that ended got more: %q", r.Body)
	}
}

func TestTimeLimitEndsResponsesStreamsInTheirShape(t *testing.T) {
	up := openaifake.New()
	defer up.Close()
	up.Default = openaifake.Reply{Text: "one two three four", StallAfter: 2, StallFor: 5 * time.Second}
	g := timeLimited(t, up)
	r := g.Do(t, http.MethodPost, "/v1/responses", `{"model":"up","stream":true,"input":"hi"}`)
	cut := `"code":"function_timeout","message":"the gateway function reached its time limit before the answer was complete","param":null}` + "\n\nevent: response.failed\n"
	if !strings.Contains(string(r.Body), cut) || strings.Contains(string(r.Body), "event: response.completed\n") {
		t.Fatalf("a cut Responses stream ends %q", r.Body)
	}
	m := g.Do(t, http.MethodPost, "/v1/messages", `{"model":"up","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	if !strings.Contains(string(m.Body), "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"timeout_error\"") || strings.Contains(string(m.Body), "message_stop") {
		t.Fatalf("a cut Messages stream ends %q", m.Body)
	}
}

func TestPanicBeforeOutputIsA500(t *testing.T) {
	g := newGateway(t, `
connections:
  mock: {kind: mock}
models:
  boom: {routes: [{connection: mock, model: panic}]}
  echo: {routes: [{connection: mock, model: echo}]}
`)
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		body := `{"model":"boom","messages":[{"role":"user","content":"hi"}]}`
		if path == "/v1/responses" {
			body = `{"model":"boom","input":"hi"}`
		}
		r := g.Do(t, http.MethodPost, path, body)
		if r.Status != http.StatusInternalServerError || r.Header.Get("Content-Type") != "application/json" || r.ErrorObject(t)["code"] != "internal_error" {
			t.Fatalf("%s: got %d %v %s; want a 500 JSON internal_error", path, r.Status, r.Header, r.Body)
		}
	}
	if r := g.Chat(t, `{"model":"echo","messages":[{"role":"user","content":"still there?"}]}`); r.Status != http.StatusOK {
		t.Fatalf("after the panic: %d %s", r.Status, r.Body)
	}
}

func TestPanicMidStreamEndsWithTheErrorEvent(t *testing.T) {
	g := newGateway(t, `
connections:
  mock: {kind: mock}
models:
  boom: {routes: [{connection: mock, model: "panic:2"}]}
`)
	r := g.Chat(t, `{"model":"boom","stream":true,"messages":[{"role":"user","content":"one two three"}]}`)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d", r.Status)
	}
	if !strings.HasSuffix(string(r.Body), "data: {\"error\":{\"message\":\"the gateway failed while handling this request\",\"type\":\"server_error\",\"param\":null,\"code\":\"internal_error\"}}\n\n") {
		t.Fatalf("a panic after output must end the stream with an error event, got %q", r.Body)
	}
}

// aborting is a provider that aborts its answer with http.ErrAbortHandler, net/http's way to
// end a response on purpose: before any output in Generate, after two words in Stream.
type aborting struct{ providers.Provider }

func (aborting) Generate(context.Context, *llm.Request, providers.Target) (*llm.Answer, error) {
	panic(http.ErrAbortHandler)
}

func (a aborting) Stream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	st, err := a.Provider.Stream(ctx, req, t)
	return &abortAfter{Stream: st, n: 2}, err
}

type abortAfter struct {
	llm.Stream
	n int
}

func (s *abortAfter) Next() (llm.Delta, error) {
	if s.n == 0 {
		panic(http.ErrAbortHandler)
	}
	d, err := s.Stream.Next()
	if d.Text != "" {
		s.n--
	}
	return d, err
}

func TestAbortedResponsesEndAsTheyStand(t *testing.T) {
	g := newGateway(t, `
connections:
  ab: {kind: aborting}
models:
  ab: {routes: [{connection: ab, model: echo}]}
`, func(o *gateway.Options) {
		o.Registry["aborting"] = func(c *config.Connection, env providers.Env) (providers.Provider, error) {
			p, err := mock.New(c, env)
			return aborting{p}, err
		}
	})
	r := g.Chat(t, `{"model":"ab","messages":[{"role":"user","content":"one two three"}]}`)
	if r.Status != http.StatusBadGateway || r.ErrorObject(t)["code"] != "aborted" {
		t.Fatalf("an abort before output: got %d %q; want a 502, not an empty 200", r.Status, r.Body)
	}
	r = g.Chat(t, `{"model":"ab","stream":true,"messages":[{"role":"user","content":"one two three"}]}`)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"content":"one"`) || strings.Contains(string(r.Body), "[DONE]") || strings.Contains(string(r.Body), `"error"`) {
		t.Fatalf("an abort after output ends the answer as it stands: %q", r.Body)
	}
}

package gateway_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/loopback"
	"github.com/fngate/fngate/internal/openaifake"
)

// twoUpstreams is a model with two OpenAI routes, so each test can fail the first and watch
// the second.
const twoUpstreams = `
timeouts: {first_byte: 300ms, idle: 300ms}
connections:
  a: {kind: openai, api_key: sk-test-key-aaaaaaaa, base_url: %s}
  b: {kind: openai, api_key: sk-test-key-bbbbbbbb, base_url: %s}
models:
  m:
    price: {input_per_mtok: 2, output_per_mtok: 10}
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: a, model: model-a}
      - {connection: b, model: model-b}
`

func newPair(t *testing.T) (*testGateway, *openaifake.Server, *openaifake.Server) {
	t.Helper()
	a, b := openaifake.New(), openaifake.New()
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	return newGateway(t, fmt.Sprintf(twoUpstreams, a.BaseURL(), b.BaseURL())), a, b
}

const hello = `"model":"m","max_completion_tokens":50,"messages":[{"role":"user","content":"hello"}]`

func TestFailoverBeforeOutput(t *testing.T) {
	cases := []struct {
		status int
		class  string
	}{
		{429, "rate_limited"},
		{500, "unavailable"},
		{502, "unavailable"},
		{503, "unavailable"},
		{504, "timeout"},
		{529, "overloaded"},
		{401, "auth"},
		{403, "auth"},
		{404, "not_found"},
	}
	for _, stream := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%d stream=%v", tc.status, stream), func(t *testing.T) {
				g, a, b := newPair(t)
				a.Enqueue(openaifake.Reply{Status: tc.status})
				b.Enqueue(openaifake.Reply{Text: "from b", PromptTokens: 3, CompletionTokens: 2})
				r := g.Chat(t, fmt.Sprintf(`{%s,"stream":%v}`, hello, stream))
				if r.Status != 200 {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				if got := r.Header.Get("X-Fngate-Route"); got != "b/model-b" {
					t.Errorf("served by %q, want b/model-b", got)
				}
				if !strings.Contains(string(r.Body), "from") || strings.Contains(string(r.Body), "scripted failure") {
					t.Errorf("unexpected body %s", r.Body)
				}
				attempts := g.logs.Lines(t, "")
				var errs, oks []map[string]any
				for _, l := range attempts {
					switch l["msg"] {
					case "provider_error":
						errs = append(errs, l)
					case "attempt":
						oks = append(oks, l)
					}
				}
				if len(errs) != 1 || len(oks) != 1 {
					t.Fatalf("want one provider_error and one attempt line, got:\n%s", g.logs)
				}
				e := errs[0]
				if e["error_class"] != tc.class || e["outcome"] != "failover" || e["route"] != "a/model-a" || e["status"] != float64(tc.status) || e["attempt"] != float64(1) {
					t.Errorf("provider_error line: %v", e)
				}
				if e["provider"] != "openai" || e["connection"] != "a" || e["model"] != "m" || e["level"] != "ERROR" {
					t.Errorf("provider_error line lacks identity fields: %v", e)
				}
				if oks[0]["route"] != "b/model-b" || oks[0]["attempt"] != float64(2) || oks[0]["cost_usd"] == nil {
					t.Errorf("attempt line: %v", oks[0])
				}
			})
		}
	}
}

func TestConnectionRefusedFailsOver(t *testing.T) {
	// Reserved and never listened on: connections are refused, and no other process can
	// start listening there in the meantime.
	dead := "http://" + loopback.ForTest(t).Addr() + "/v1"
	b := openaifake.New()
	defer b.Close()
	g := newGateway(t, fmt.Sprintf(twoUpstreams, dead, b.BaseURL()))
	for _, stream := range []string{"false", "true"} {
		r := g.Chat(t, `{`+hello+`,"stream":`+stream+`}`)
		if r.Status != 200 || r.Header.Get("X-Fngate-Route") != "b/model-b" {
			t.Fatalf("stream=%s: status %d route %q: %s", stream, r.Status, r.Header.Get("X-Fngate-Route"), r.Body)
		}
	}
	for _, l := range g.logs.Lines(t, "provider_error") {
		if l["error_class"] != "unavailable" {
			t.Errorf("connection refused classified %v", l["error_class"])
		}
	}
}

func TestBadRequestIsNotFailedOver(t *testing.T) {
	g, a, b := newPair(t)
	a.Enqueue(openaifake.Reply{Status: 400, ErrorBody: `{"error":{"message":"messages[0]: bad thing","type":"invalid_request_error","param":"messages","code":null}}`})
	r := g.Chat(t, `{`+hello+`}`)
	if r.Status != 400 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	e := r.ErrorObject(t)
	if !strings.Contains(e["message"].(string), "bad thing") || e["param"] != "messages" {
		t.Errorf("upstream 400 not relayed: %s", r.Body)
	}
	if n := len(b.Requests()); n != 0 {
		t.Errorf("second route was tried %d times", n)
	}
}

// When every attempt fails the client gets the last failure, mapped so SDKs retry what is
// retryable: 429 keeps Retry-After; upstream failures are never a 4xx of the client's.
func TestAllRoutesFail(t *testing.T) {
	cases := []struct {
		last       openaifake.Reply
		status     int
		code       string
		retryAfter string
		noRetry    bool
	}{
		{openaifake.Reply{Status: 429, Header: map[string]string{"Retry-After": "7"}}, 429, "rate_limit_exceeded", "7", false},
		{openaifake.Reply{Status: 503}, 503, "upstream_unavailable", "", false},
		{openaifake.Reply{Status: 500}, 502, "upstream_error", "", false},
		{openaifake.Reply{Status: 529}, 503, "upstream_overloaded", "", false},
		{openaifake.Reply{Status: 504}, 504, "upstream_timeout", "", false},
		{openaifake.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: sk-test-****bbbb"}}`}, 502, "upstream_auth_failed", "", true},
		{openaifake.Reply{Status: 404}, 502, "upstream_model_not_found", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			g, a, b := newPair(t)
			a.Enqueue(openaifake.Reply{Status: 503})
			b.Enqueue(tc.last)
			r := g.Chat(t, `{`+hello+`}`)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			e := r.ErrorObject(t)
			if e["code"] != tc.code {
				t.Errorf("code %v, want %s", e["code"], tc.code)
			}
			if got := r.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if got := r.Header.Get("X-Should-Retry") == "false"; got != tc.noRetry {
				t.Errorf("x-should-retry false = %v, want %v", got, tc.noRetry)
			}
			if strings.Contains(string(r.Body), "sk-test") {
				t.Errorf("upstream auth message leaked to the client: %s", r.Body)
			}
			if n := len(g.logs.Lines(t, "provider_error")); n != 2 {
				t.Errorf("%d provider_error lines, want 2", n)
			}
		})
	}
}

func TestStallBeforeFirstByteFailsOver(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{StallBeforeHeaders: 5 * time.Second})
	start := time.Now()
	r := g.Chat(t, `{`+hello+`,"stream":true}`)
	if r.Status != 200 || r.Header.Get("X-Fngate-Route") != "b/model-b" {
		t.Fatalf("status %d route %q: %s", r.Status, r.Header.Get("X-Fngate-Route"), r.Body)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("the stalled attempt was not cut at the first-byte timeout")
	}
	errs := g.logs.Lines(t, "provider_error")
	if len(errs) != 1 || errs[0]["error_class"] != "timeout" {
		t.Fatalf("want one timeout provider_error, got %v", errs)
	}
	waitFor(t, func() bool { return a.Canceled() == 1 }, "the stalled upstream request was not cancelled")
}

// A role chunk, then an error event: nothing visible reached the client, so the gateway fails
// over and the client sees one clean stream (the failed preamble does not leak into it).
func TestPreambleThenErrorFailsOver(t *testing.T) {
	g, a, b := newPair(t)
	a.Enqueue(openaifake.Reply{ErrorEventAfter: -1, ErrorEventCode: 503})
	b.Enqueue(openaifake.Reply{Text: "fine thanks"})
	r := g.Chat(t, `{`+hello+`,"stream":true}`)
	events := gatewaytest.SSEData(t, r.Body)
	if r.Header.Get("X-Fngate-Route") != "b/model-b" || events[len(events)-1] != "[DONE]" {
		t.Fatalf("route %q events %v", r.Header.Get("X-Fngate-Route"), events)
	}
	if n := strings.Count(string(r.Body), `"role":"assistant"`); n != 1 {
		t.Errorf("%d role chunks, want 1", n)
	}
	if len(b.Requests()) != 1 {
		t.Errorf("second route not tried")
	}
}

// After the first content reached the client there is no failover: the stream ends with an
// error event and no [DONE], and the second route is never called.
func TestNoFailoverAfterOutput(t *testing.T) {
	faults := map[string]openaifake.Reply{
		"cut":         {Text: "one two three four", CutAfter: 2},
		"malformed":   {Text: "one two three four", MalformedAfter: 2},
		"error event": {Text: "one two three four", ErrorEventAfter: 2},
		"no [DONE]":   {Text: "one two three four", NoDone: true},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			g, a, b := newPair(t)
			a.Enqueue(fault)
			r := g.Chat(t, `{`+hello+`,"stream":true}`)
			if r.Status != 200 {
				t.Fatalf("status %d", r.Status)
			}
			events := gatewaytest.SSEData(t, r.Body)
			last := events[len(events)-1]
			for _, ev := range events {
				if ev == "[DONE]" {
					t.Fatalf("a broken stream ended with [DONE]: %v", events)
				}
			}
			if !strings.HasPrefix(last, `{"error":`) {
				t.Fatalf("last event %q is not an error event", last)
			}
			if !strings.Contains(string(r.Body), `"content":"one"`) {
				t.Errorf("content before the failure was not streamed: %v", events)
			}
			if len(b.Requests()) != 0 {
				t.Errorf("failed over after output")
			}
			errs := g.logs.Lines(t, "provider_error")
			if len(errs) != 1 || errs[0]["outcome"] != "error" {
				t.Errorf("provider_error lines: %v", errs)
			}
		})
	}
}

// A provider that goes quiet after output began is cut at the idle timeout: an error event,
// no [DONE], no failover, and the upstream request is cancelled.
func TestIdleTimeoutAfterOutput(t *testing.T) {
	g, a, b := newPair(t)
	a.Enqueue(openaifake.Reply{Text: "one two three", StallAfter: 1, StallFor: 10 * time.Second})
	start := time.Now()
	r := g.Chat(t, `{`+hello+`,"stream":true}`)
	if time.Since(start) > 5*time.Second {
		t.Fatal("the stalled stream was not cut at the idle timeout")
	}
	events := gatewaytest.SSEData(t, r.Body)
	if last := events[len(events)-1]; !strings.Contains(last, `"code":"upstream_timeout"`) {
		t.Fatalf("last event %q, want an upstream_timeout error event", last)
	}
	if len(b.Requests()) != 0 {
		t.Error("failed over after output")
	}
	waitFor(t, func() bool { return a.Canceled() == 1 }, "the stalled upstream request was not cancelled")
}

func TestResidencyIsKeptOnFailover(t *testing.T) {
	eu1, us, eu2 := openaifake.New(), openaifake.New(), openaifake.New()
	defer eu1.Close()
	defer us.Close()
	defer eu2.Close()
	g := newGateway(t, fmt.Sprintf(`
connections:
  eu1: {kind: openai, api_key: sk-test-key-11111111, base_url: %s}
  us: {kind: openai, api_key: sk-test-key-22222222, base_url: %s}
  eu2: {kind: openai, api_key: sk-test-key-33333333, base_url: %s}
models:
  m:
    routing: {max_attempts: 3}
    routes:
      - {connection: eu1, model: x, residency: eu}
      - {connection: us, model: x, residency: us}
      - {connection: eu2, model: x, residency: eu}
`, eu1.BaseURL(), us.BaseURL(), eu2.BaseURL()))
	eu1.Enqueue(openaifake.Reply{Status: 503})
	eu2.Enqueue(openaifake.Reply{Status: 503})
	r := g.Chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != 503 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if len(us.Requests()) != 0 {
		t.Errorf("failover crossed residency eu -> us")
	}
	if len(eu2.Requests()) != 1 {
		t.Errorf("the second eu route was not tried")
	}
}

func TestMaxAttempts(t *testing.T) {
	var fakes []*openaifake.Server
	var conns, routes []string
	for i := range 3 {
		f := openaifake.New()
		defer f.Close()
		f.Default = openaifake.Reply{Status: 503}
		fakes = append(fakes, f)
		conns = append(conns, fmt.Sprintf("  c%d: {kind: openai, api_key: sk-test-key-%08d, base_url: %s}", i, i, f.BaseURL()))
		routes = append(routes, fmt.Sprintf("      - {connection: c%d, model: x}", i))
	}
	g := newGateway(t, "connections:\n"+strings.Join(conns, "\n")+"\nmodels:\n  m:\n    routing: {max_attempts: 2}\n    routes:\n"+strings.Join(routes, "\n")+"\n")
	r := g.Chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != 503 || r.Header.Get("X-Fngate-Attempts") != "2" {
		t.Fatalf("status %d attempts %q", r.Status, r.Header.Get("X-Fngate-Attempts"))
	}
	if len(fakes[2].Requests()) != 0 {
		t.Error("a third attempt was made despite max_attempts 2")
	}
}

func TestWeightedPolicy(t *testing.T) {
	a, b := openaifake.New(), openaifake.New()
	defer a.Close()
	defer b.Close()
	g := newGateway(t, fmt.Sprintf(`
connections:
  a: {kind: openai, api_key: sk-test-key-aaaaaaaa, base_url: %s}
  b: {kind: openai, api_key: sk-test-key-bbbbbbbb, base_url: %s}
models:
  m:
    routing: {policy: weighted}
    routes:
      - {connection: a, model: x, weight: 9}
      - {connection: b, model: x, weight: 1}
`, a.BaseURL(), b.BaseURL()))
	for range 200 {
		if r := g.Chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`); r.Status != 200 {
			t.Fatalf("status %d", r.Status)
		}
	}
	na, nb := len(a.Requests()), len(b.Requests())
	// p(a)=0.9: below 150 of 200 is over 4 standard deviations away.
	if na < 150 || nb == 0 {
		t.Errorf("weights 9:1 gave %d:%d", na, nb)
	}
}

// A route whose provider refuses the request is skipped before any I/O; when no route can
// serve, the client gets a 400 naming the reason.
func TestRefusingRoutesAreSkipped(t *testing.T) {
	ol, oa := openaifake.New(), openaifake.New()
	defer ol.Close()
	defer oa.Close()
	g := newGateway(t, fmt.Sprintf(`
connections:
  local: {kind: ollama, base_url: %s}
  cloud: {kind: openai, api_key: sk-test-key-cccccccc, base_url: %s}
models:
  both:
    routes: [{connection: local, model: llama}, {connection: cloud, model: gpt}]
  local-only:
    routes: [{connection: local, model: llama}]
`, ol.BaseURL(), oa.BaseURL()))
	withChoice := `"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","messages":[{"role":"user","content":"hi"}]`
	r := g.Chat(t, `{"model":"both",`+withChoice+`}`)
	if r.Status != 200 || r.Header.Get("X-Fngate-Route") != "cloud/gpt" || len(ol.Requests()) != 0 {
		t.Fatalf("status %d route %q ollama calls %d", r.Status, r.Header.Get("X-Fngate-Route"), len(ol.Requests()))
	}
	r = g.Chat(t, `{"model":"local-only",`+withChoice+`}`)
	if r.Status != 400 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if e := r.ErrorObject(t); e["param"] != "tool_choice" || !strings.Contains(e["message"].(string), "Ollama") {
		t.Errorf("refusal does not name the reason: %s", r.Body)
	}
}

func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	gatewaytest.WaitFor(t, cond, msg)
}

// doorRequest is a one-message request of model on one front door, whole or streamed: the
// path, the body and the door's required headers.
type doorRequest struct {
	door, path string
	body       func(model string, stream bool) string
	header     []string
}

var doors = []doorRequest{
	{"chat", "/v1/chat/completions", func(m string, s bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"where am I"}]}`, m, s)
	}, nil},
	{"messages", "/v1/messages", func(m string, s bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%t,"max_tokens":50,"messages":[{"role":"user","content":"where am I"}]}`, m, s)
	}, []string{"Anthropic-Version", "2023-06-01"}},
	{"responses", "/v1/responses", func(m string, s bool) string {
		return fmt.Sprintf(`{"model":%q,"stream":%t,"input":"where am I"}`, m, s)
	}, nil},
}

// A key pinned to a residency is served only by routes with that label, and failover keeps
// the first candidate's residency, on every door, whole and streamed: an unpinned key's eu
// route fails and the next eu route serves (the us one between is not asked); a us key goes
// straight to the us route; an eu key fails over within eu; a model with no route of the
// key's residency is a 403 residency_not_available in the door's error shape.
func TestResidencyOnEveryDoor(t *testing.T) {
	g := newGateway(t, `
keys:
  - {name: anywhere, value: gw-key-residency-any-01}
  - {name: eu-app, value: gw-key-residency-eu-02, residency: eu}
  - {name: us-app, value: gw-key-residency-us-03, residency: us}
connections:
  mock: {kind: mock}
models:
  m:
    routing: {max_attempts: 3}
    routes:
      - {connection: mock, model: "error:503", residency: eu}
      - {connection: mock, model: lorem, residency: us}
      - {connection: mock, model: echo, residency: eu}
  us-only: {routes: [{connection: mock, model: echo, residency: us}]}
`)
	keys := []struct {
		key, route, attempts string
	}{
		{"gw-key-residency-any-01", "mock/echo", "2"},
		{"gw-key-residency-eu-02", "mock/echo", "2"},
		{"gw-key-residency-us-03", "mock/lorem", "1"},
	}
	for _, d := range doors {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%t", d.door, stream), func(t *testing.T) {
				for _, k := range keys {
					r := g.Do(t, "POST", d.path, d.body("m", stream), append([]string{"Authorization", "Bearer " + k.key}, d.header...)...)
					if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != k.route || r.Header.Get(gateway.HeaderAttempts) != k.attempts {
						t.Errorf("key %s: %d served by %q after %s attempts, want %s after %s: %.300s", k.key, r.Status,
							r.Header.Get(gateway.HeaderRoute), r.Header.Get(gateway.HeaderAttempts), k.route, k.attempts, r.Body)
					}
				}
				r := g.Do(t, "POST", d.path, d.body("us-only", stream), append([]string{"Authorization", "Bearer gw-key-residency-eu-02"}, d.header...)...)
				if r.Status != 403 {
					t.Fatalf("eu key on a us-only model: %d %s", r.Status, r.Body)
				}
				if d.door == "messages" {
					var e struct {
						Type  string `json:"type"`
						Error struct{ Type, Message string }
					}
					if json.Unmarshal(r.Body, &e) != nil || e.Type != "error" || e.Error.Type != "permission_error" || !strings.Contains(e.Error.Message, "residency eu") {
						t.Errorf("eu key on a us-only model: %s", r.Body)
					}
				} else if e := r.ErrorObject(t); e["code"] != "residency_not_available" {
					t.Errorf("eu key on a us-only model: %s", r.Body)
				}
			})
		}
	}
	// The log of every attempt has the route's residency; the us route was never asked but by
	// the us key.
	for _, a := range g.logs.Lines(t, record.MsgAttempt) {
		if a["route"] == "mock/lorem" && a["residency"] != "us" || a["route"] == "mock/echo" && a["residency"] != "eu" {
			t.Errorf("attempt %v", a)
		}
	}
}

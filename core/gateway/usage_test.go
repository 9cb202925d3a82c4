package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const usageConfig = `
keys:
  - {name: app, value: ` + limitedKey + `}
  - {name: capped, value: sk-capped-0123456789abcdef, rate: {requests_per_minute: 1}}
connections: {mock: {kind: mock}}
models:
  m:
    price: {input_per_mtok: 1000, output_per_mtok: 2000}
    max_output_tokens: 50
    routes: [{connection: mock, model: echo}]
  e:
    kind: embedding
    dimensions: 8
    price: {input_per_mtok: 1000}
    routes: [{connection: mock, model: embed}]
responses: {compaction_keys: [{id: k1, key: "` + compactKeyNew + `"}]}
key_store: {store: memory, stale_for: 1m}
`

// withHistory gives the gateway h, on the limits tests' clock.
func withHistory(h counters.History) func(*gateway.Options) {
	return func(o *gateway.Options) {
		o.Now = func() time.Time { return limitsNow }
		o.History = h
	}
}

// waitUsage waits until key's history on the test day counts n requests of model, then
// returns its row.
func waitUsage(t *testing.T, h counters.History, key, model string, n int64) counters.Usage {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, err := h.Usage(context.Background(), key, limitsNow, limitsNow)
		if err != nil {
			t.Fatal(err)
		}
		var u counters.Usage
		for _, r := range rows {
			if r.Model == model {
				u = r.Usage
			}
		}
		if u.Requests >= n || time.Now().After(deadline) {
			return u
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// loggedUsage adds up what the logs of n requests say they used: a request for each request
// line, the tokens and cost of each attempt line. The history must agree with the logs.
func loggedUsage(t *testing.T, g *testGateway, n int) counters.Usage {
	t.Helper()
	var u counters.Usage
	for _, l := range g.logs.AfterRequests(t, n) {
		switch l["msg"] {
		case record.MsgRequest:
			u.Requests++
		case record.MsgAttempt, record.MsgProviderError:
			if us, ok := l["usage"].(map[string]any); ok {
				in, _ := us["prompt_tokens"].(float64)
				out, _ := us["completion_tokens"].(float64)
				u.InputTokens += int64(in)
				u.OutputTokens += int64(out)
			}
			c, _ := l["cost_usd"].(float64)
			u.CostNanoUSD += int64(math.Round(c * 1e9))
		}
	}
	return u
}

// TestUsageLandsInTheHistory: every door's request, whole or streamed, adds one request with
// the tokens and the cost its request line shows to its key's day, under the gateway model.
func TestUsageLandsInTheHistory(t *testing.T) {
	anth := []string{"Anthropic-Version", "2023-06-01"}
	for _, tc := range []struct {
		name, path, body string
		header           []string
		model            string
	}{
		{"chat", "/v1/chat/completions", `{"model":"m","max_completion_tokens":20,"messages":[{"role":"user","content":"one two three"}]}`, nil, "m"},
		{"chat streamed", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":20,"messages":[{"role":"user","content":"one two three"}]}`, nil, "m"},
		{"completions", "/v1/completions", `{"model":"m","max_tokens":20,"prompt":"one two three"}`, nil, "m"},
		{"messages", "/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"one two three"}]}`, anth, "m"},
		{"messages streamed", "/v1/messages", `{"model":"m","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"one two three"}]}`, anth, "m"},
		{"responses", "/v1/responses", `{"model":"m","max_output_tokens":20,"input":"one two three"}`, nil, "m"},
		{"responses streamed", "/v1/responses", `{"model":"m","max_output_tokens":20,"stream":true,"input":"one two three"}`, nil, "m"},
		{"embeddings", "/v1/embeddings", `{"model":"e","input":"one two three"}`, nil, "e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := counters.NewMemoryHistory()
			g := newGateway(t, usageConfig, withHistory(h))
			for range 2 {
				r := g.Do(t, http.MethodPost, tc.path, tc.body, append([]string{"Authorization", "Bearer " + limitedKey}, tc.header...)...)
				if r.Status != 200 {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
			}
			got := waitUsage(t, h, "app", tc.model, 2)
			want := loggedUsage(t, g, 2)
			if got != want || want.Requests != 2 || want.InputTokens+want.OutputTokens == 0 || want.CostNanoUSD == 0 || tc.model == "m" && want.OutputTokens == 0 {
				t.Fatalf("history = %+v; the request lines say %+v (and both must show tokens and cost)", got, want)
			}
			if err := g.Gateway.FlushUsage(context.Background()); err != nil {
				t.Fatal(err)
			}
			if rows, _ := h.Usage(context.Background(), "app", limitsNow, limitsNow); len(rows) != 1 {
				t.Fatalf("rows = %+v; want the one model", rows)
			}
		})
	}
}

// TestUsageOfAFailedOverRequest: a request served by its second route is one request, with
// what both attempts used (the first reported input before its stream broke).
func TestUsageOfAFailedOverRequest(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":0,"total_tokens":50}}`+"\n\n")
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}))
	t.Cleanup(up.Close)
	h := counters.NewMemoryHistory()
	g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`}]
connections:
  flaky: {kind: openai-compatible, base_url: "`+up.URL+`/v1"}
  mock: {kind: mock}
models:
  m:
    price: {input_per_mtok: 1000, output_per_mtok: 2000}
    routes: [{connection: flaky, model: x}, {connection: mock, model: echo}]
`, withHistory(h))
	r := g.Chat(t, `{"model":"m","stream":true,"max_completion_tokens":10,"messages":[{"role":"user","content":"one two"}]}`, "Authorization", "Bearer "+limitedKey)
	if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != "mock/echo" {
		t.Fatalf("%d via %s: %s", r.Status, r.Header.Get(gateway.HeaderRoute), r.Body)
	}
	got := waitUsage(t, h, "app", "m", 1)
	want := counters.Usage{Requests: 1, InputTokens: 52, OutputTokens: 2, CostNanoUSD: 56_000_000}
	if got != want || loggedUsage(t, g, 1) != want {
		t.Fatalf("history = %+v, logged %+v; want %+v (50 tokens in on the first route, 2 in and 2 out on the second)", got, loggedUsage(t, g, 1), want)
	}
}

// TestUsageOfRefusedRequests: a request its key's rate limit refuses is still a request of
// the key's day (of no tokens and no cost); so is one its model's rules refuse. A request
// without a key, or for a model the gateway does not have, is kept nowhere.
func TestUsageOfRefusedRequests(t *testing.T) {
	h := counters.NewMemoryHistory()
	g := newGateway(t, usageConfig, withHistory(h), func(o *gateway.Options) { o.Counters = counters.NewMemory() })
	body := `{"model":"m","max_completion_tokens":20,"messages":[{"role":"user","content":"one two three"}]}`
	auth := []string{"Authorization", "Bearer sk-capped-0123456789abcdef"}
	for i, want := range []int{200, 429, 429} {
		if r := g.Chat(t, body, auth...); r.Status != want {
			t.Fatalf("request %d: %d %s, want %d", i+1, r.Status, r.Body, want)
		}
	}
	for _, r := range []struct {
		body   string
		header []string
		want   int
	}{
		{`{"model":"nope","messages":[{"role":"user","content":"x"}]}`, auth, 404},
		{body, []string{"Authorization", "Bearer sk-not-a-key-0123456789"}, 401},
		{`{"model":"m","messages":[{"role":"user","content":"x"}]`, auth, 400},
	} {
		if got := g.Chat(t, r.body, r.header...); got.Status != r.want {
			t.Fatalf("%s: %d %s, want %d", r.body, got.Status, got.Body, r.want)
		}
	}
	got := waitUsage(t, h, "capped", "m", 3)
	first := loggedUsage(t, g, 6)
	if got.Requests != 3 || got.InputTokens != first.InputTokens || got.OutputTokens != first.OutputTokens || got.CostNanoUSD != first.CostNanoUSD || got.InputTokens == 0 {
		t.Fatalf("history = %+v; want 3 requests with the first one's usage (the logs say %+v in all)", got, first)
	}
	if err := g.Gateway.FlushUsage(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, _ := h.Usage(context.Background(), "capped", limitsNow, limitsNow)
	if len(rows) != 1 {
		t.Fatalf("rows = %+v; a model the gateway does not have is not kept", rows)
	}
}

// TestUsageOfAStoredKeyFollowsItsID: a stored key's usage is kept under its key_... id, not
// its name (which may change or be reused).
func TestUsageOfAStoredKeyFollowsItsID(t *testing.T) {
	clock := newKeyClock()
	store := keystore.NewMemory()
	h := counters.NewMemoryHistory()
	g := storedKeysGateway(t, usageConfig, store, clock, func(o *gateway.Options) { o.History = h })
	admin := keyAdmin{t, store, clock.Now}
	secret, id := admin.create("team-a", nil)
	if r := g.Chat(t, `{"model":"m","max_completion_tokens":20,"messages":[{"role":"user","content":"one two"}]}`, "Authorization", "Bearer "+secret); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, err := h.Usage(context.Background(), id, clock.Now(), clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 && rows[0].Requests == 1 && rows[0].Model == "m" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage of %s = %+v; want its one request", id, rows)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if rows, _ := h.Usage(context.Background(), "team-a", clock.Now(), clock.Now()); len(rows) != 0 {
		t.Fatalf("usage kept under the key's name: %+v", rows)
	}
}

// slowHistory holds every write until released, and fails when told to.
type slowHistory struct {
	*counters.MemoryHistory
	release chan struct{}
	fail    bool
	mu      sync.Mutex
	writes  int
}

func (s *slowHistory) AddUsage(ctx context.Context, key string, at time.Time, model string, u counters.Usage) error {
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	s.writes++
	s.mu.Unlock()
	if s.fail {
		return errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	}
	return s.MemoryHistory.AddUsage(ctx, key, at, model, u)
}

// TestUsageIsWrittenOffTheRequestPath: a history that does not answer delays no answer, a
// failing one fails no request (it is logged), and FlushUsage waits for what is queued.
func TestUsageIsWrittenOffTheRequestPath(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("failing %v", fail), func(t *testing.T) {
			h := &slowHistory{MemoryHistory: counters.NewMemoryHistory(), release: make(chan struct{}), fail: fail}
			metrics := &gatewaytest.LogBuffer{}
			g := newGateway(t, usageConfig, withHistory(h), func(o *gateway.Options) { o.Metrics = metrics })
			body := `{"model":"m","max_completion_tokens":20,"messages":[{"role":"user","content":"one two three"}]}`
			start := time.Now()
			for range 3 {
				if r := g.Chat(t, body, "Authorization", "Bearer "+limitedKey); r.Status != 200 {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("three requests took %v with the history stuck", d)
			}
			g.logs.AfterRequests(t, 3)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			if err := g.Gateway.FlushUsage(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("FlushUsage with the history stuck = %v, want the deadline", err)
			}
			cancel()
			close(h.release)
			if err := g.Gateway.FlushUsage(context.Background()); err != nil {
				t.Fatal(err)
			}
			rows, _ := h.MemoryHistory.Usage(context.Background(), "app", limitsNow, limitsNow)
			switch {
			case fail && len(rows) != 0:
				t.Fatalf("a failing history holds %+v", rows)
			case !fail && (len(rows) != 1 || rows[0].Requests != 3):
				t.Fatalf("after FlushUsage the history holds %+v, want the 3 requests", rows)
			}
			errs := g.logs.Lines(t, record.MsgUsageError)
			if fail != (len(errs) > 0) {
				t.Fatalf("%d %s lines with a history failing %v", len(errs), record.MsgUsageError, fail)
			}
			if fail && (errs[0]["key_id"] != "app" || errs[0]["model"] != "m" || !strings.Contains(fmt.Sprint(errs[0]["error"]), "connection refused")) {
				t.Fatalf("error line = %v", errs[0])
			}
			if got := strings.Contains(metrics.String(), `"`+record.MetricUsageErrors+`":1`); got != fail {
				t.Fatalf("metric %s emitted: %v, with a history failing %v", record.MetricUsageErrors, got, fail)
			}
			if bytes.Contains([]byte(g.logs.String()), []byte(limitedKey)) {
				t.Fatal("a key's secret was logged")
			}
		})
	}
}

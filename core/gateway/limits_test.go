package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// The limits tests run on a fixed clock half a minute into a minute, so a window resets in
// 30 s.
var limitsNow = time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)

// settling wraps a store and reports each settlement: the gateway settles after the client
// has its answer, so a test waits for it before it reads the counts.
type settling struct {
	counters.Store
	added chan struct{}
}

func newSettling(s counters.Store) *settling {
	return &settling{Store: s, added: make(chan struct{}, 100)}
}

func (s *settling) Add(ctx context.Context, key string, w counters.Windows, a []counters.Amount) error {
	err := s.Store.Add(ctx, key, w, a)
	s.added <- struct{}{}
	return err
}

func (s *settling) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.added:
	case <-time.After(5 * time.Second):
		t.Fatal("the request was never settled")
	}
}

func (s *settling) read(t *testing.T, key string) counters.Counts {
	t.Helper()
	c, err := s.Store.Read(context.Background(), key, counters.At(limitsNow))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func limited(store counters.Store) func(*gateway.Options) {
	return func(o *gateway.Options) {
		o.Now = func() time.Time { return limitsNow }
		o.Counters = store
	}
}

const limitedKey = "gw-key-limits-0001"

// doorCall is one request on one front door, and how that door shapes a 429.
type doorCall struct {
	door, path, body string
	header           []string
	anthropic        bool
}

var doorCalls = []doorCall{
	{"chat", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"one two three"}]}`, nil, false},
	{"completions", "/v1/completions", `{"model":"m","prompt":"one two three"}`, nil, false},
	{"messages", "/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"one two three"}]}`, []string{"Anthropic-Version", "2023-06-01"}, true},
	{"responses", "/v1/responses", `{"model":"m","input":"one two three"}`, nil, false},
	{"compact", "/v1/responses/compact", `{"model":"m","input":"one two three"}`, nil, false},
	{"embeddings", "/v1/embeddings", `{"model":"e","input":"one two three"}`, nil, false},
}

func (c doorCall) do(t *testing.T, g *testGateway) *gatewaytest.Response {
	t.Helper()
	return g.Do(t, http.MethodPost, c.path, c.body, append([]string{"Authorization", "Bearer " + limitedKey}, c.header...)...)
}

// errorCode reads a refusal in its door's shape: OpenAI's code, or Anthropic's error type.
func (c doorCall) errorCode(t *testing.T, r *gatewaytest.Response) string {
	t.Helper()
	m := r.JSON(t)
	if c.anthropic {
		e, _ := m["error"].(map[string]any)
		if m["type"] != "error" || e == nil {
			t.Fatalf("not an Anthropic error: %s", r.Body)
		}
		return fmt.Sprint(e["type"])
	}
	return fmt.Sprint(r.ErrorObject(t)["code"])
}

// TestRateLimitOnEveryDoor: a key with 2 requests a minute gets them, each answer carrying
// OpenAI's x-ratelimit-* headers, and then a 429 with Retry-After at the minute's end, in the
// door's own error shape, on chat, completions, messages, responses, compact and embeddings
// alike.
func TestRateLimitOnEveryDoor(t *testing.T) {
	for _, c := range doorCalls {
		t.Run(c.door, func(t *testing.T) {
			g := newGateway(t, `
keys:
  - {name: app, value: `+limitedKey+`, rate: {requests_per_minute: 2, tokens_per_minute: 100000}}
connections: {mock: {kind: mock}}
models:
  m: {max_output_tokens: 50, routes: [{connection: mock, model: echo}]}
  e: {kind: embedding, dimensions: 8, routes: [{connection: mock, model: embed}]}
responses: {compaction_keys: [{id: k1, key: "`+compactKeyNew+`"}]}
`, limited(counters.NewMemory()))
			for i, remaining := range []string{"1", "0"} {
				r := c.do(t, g)
				if r.Status != 200 {
					t.Fatalf("request %d: %d %s", i+1, r.Status, r.Body)
				}
				for h, want := range map[string]string{
					gateway.HeaderLimitRequests: "2", gateway.HeaderRemainingRequests: remaining, gateway.HeaderResetRequests: "30s",
					gateway.HeaderLimitTokens: "100000", gateway.HeaderResetTokens: "30s",
				} {
					if got := r.Header.Get(h); got != want {
						t.Errorf("request %d: %s = %q, want %q", i+1, h, got, want)
					}
				}
			}
			r := c.do(t, g)
			if r.Status != http.StatusTooManyRequests {
				t.Fatalf("third request: %d %s, want 429", r.Status, r.Body)
			}
			want := "rate_limit_exceeded"
			if c.anthropic {
				want = "rate_limit_error"
			}
			if got := c.errorCode(t, r); got != want {
				t.Errorf("error = %s, want %s: %s", got, want, r.Body)
			}
			if r.Header.Get("Retry-After") != "30" || r.Header.Get(gateway.HeaderRemainingRequests) != "0" || r.Header.Get("X-Should-Retry") != "" {
				t.Errorf("429 headers: Retry-After %q, remaining %q, x-should-retry %q; want 30, 0 and none",
					r.Header.Get("Retry-After"), r.Header.Get(gateway.HeaderRemainingRequests), r.Header.Get("X-Should-Retry"))
			}
			if !bytes.Contains(r.Body, []byte("Rate limit reached for key app on requests per minute (RPM): Limit 2, Used 2, Requested 1")) {
				t.Errorf("message: %s", r.Body)
			}
			// The refusal is logged as the request's answer.
			lines := g.logs.AfterRequests(t, 3)
			var refused int
			for _, l := range lines {
				if l["msg"] == record.MsgRequest && l["status"] == float64(429) && l["error_code"] == "rate_limit_exceeded" {
					refused++
				}
			}
			if refused != 1 {
				t.Errorf("%d request lines record the refusal", refused)
			}
		})
	}
}

const pricedLimits = `
keys:
  - {name: app, value: ` + limitedKey + `, budget: {usd_per_day: 0.01}}
connections: {mock: {kind: mock}}
models:
  m:
    price: {input_per_mtok: 1000, output_per_mtok: 1000}   # $0.001 a token
    max_output_tokens: 50
    routes: [{connection: mock, model: echo}]
  e:
    kind: embedding
    dimensions: 8
    price: {input_per_mtok: 1000}
    routes: [{connection: mock, model: embed}]
responses: {compaction_keys: [{id: k1, key: "` + compactKeyNew + `"}]}
`

// TestBudgetExceededOnEveryDoor: once a key's day budget is spent the next request is a 429
// budget_exceeded with x-should-retry: false, and an SDK that retries 429s sends it once.
func TestBudgetExceededOnEveryDoor(t *testing.T) {
	for _, c := range doorCalls {
		t.Run(c.door, func(t *testing.T) {
			store := newSettling(counters.NewMemory())
			g := newGateway(t, pricedLimits, limited(store))
			if field := map[string]string{"chat": "max_completion_tokens", "completions": "max_tokens", "responses": "max_output_tokens"}[c.door]; field != "" {
				c.body = strings.Replace(c.body, `"model":"m"`, `"model":"m","`+field+`":20`, 1)
			}
			// Requests are admitted while the day's spend is under $0.01 (the mock answers 3
			// output tokens, and 3 input ones on the doors with messages: $0.003 to $0.006; an
			// embedding costs its 3 input tokens alone).
			var spent int64
			for i := 0; spent < 10_000_000; i++ {
				if r := c.do(t, g); r.Status != 200 {
					t.Fatalf("request %d with %d nano-USD spent: %d %s", i+1, spent, r.Status, r.Body)
				}
				store.wait(t)
				spent = store.read(t, "app").Value("", counters.SpendDay)
			}
			var logged float64
			for _, a := range g.logs.Lines(t, record.MsgAttempt) {
				logged += a["cost_usd"].(float64)
			}
			if want := int64(logged*1e9 + 0.5); spent != want {
				t.Fatalf("spent %d nano-USD, the attempt lines say %d", spent, want)
			}
			r := c.do(t, g)
			if r.Status != http.StatusTooManyRequests || r.Header.Get("X-Should-Retry") != "false" {
				t.Fatalf("past the budget: %d, x-should-retry %q: %s", r.Status, r.Header.Get("X-Should-Retry"), r.Body)
			}
			want := "budget_exceeded"
			if c.anthropic {
				want = "rate_limit_error"
			}
			if got := c.errorCode(t, r); got != want {
				t.Errorf("error = %s, want %s", got, want)
			}
			if !bytes.Contains(r.Body, []byte(fmt.Sprintf("Key app has spent $%.4f of its daily budget of $0.01; it renews at 2026-11-30T00:00:00Z.", float64(spent)/1e9))) {
				t.Errorf("message: %s", r.Body)
			}
		})
	}
	t.Run("openai-go does not retry it", func(t *testing.T) {
		store := newSettling(counters.NewMemory())
		g := newGateway(t, pricedLimits, limited(store))
		client := g.OpenAI(option.WithAPIKey(limitedKey), option.WithMaxRetries(3))
		params := gatewaytest.UserOnly("m", "one two three")
		params.MaxCompletionTokens = oai.Int(20)
		for range 2 {
			if _, err := client.Chat.Completions.New(context.Background(), params); err != nil {
				t.Fatal(err)
			}
			store.wait(t)
		}
		_, err := client.Chat.Completions.New(context.Background(), params)
		if e := gatewaytest.APIError(t, err); e.StatusCode != 429 || e.Code != "budget_exceeded" || e.Type != "insufficient_quota" {
			t.Fatalf("got %d %s %s", e.StatusCode, e.Code, e.Type)
		}
		// The SDK's retries would all have been sent by the time it returned.
		g.logs.AfterRequests(t, 3)
		if got := len(g.logs.Lines(t, record.MsgRequest)); got != 3 {
			t.Errorf("the gateway saw %d requests; the SDK retried a budget_exceeded", got)
		}
	})
}

// TestBudgetExceededIsNotRetriedByTheAnthropicSDK: the Messages door's budget_exceeded carries
// x-should-retry: false too, which the Anthropic SDK honours over the 429.
func TestBudgetExceededIsNotRetriedByTheAnthropicSDK(t *testing.T) {
	store := newSettling(counters.NewMemory())
	g := newGateway(t, pricedLimits, limited(store))
	c := g.Anthropic(aoption.WithAPIKey(limitedKey), aoption.WithMaxRetries(3))
	params := anthropic.MessageNewParams{Model: "m", MaxTokens: 20, Messages: []anthropic.MessageParam{userText("one two three")}}
	for range 2 {
		if _, err := c.Messages.New(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		store.wait(t)
	}
	_, err := c.Messages.New(context.Background(), params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 {
		t.Fatalf("got %v, want a 429", err)
	}
	g.logs.AfterRequests(t, 3)
	if got := len(g.logs.Lines(t, record.MsgRequest)); got != 3 {
		t.Errorf("the gateway saw %d requests; the SDK retried a budget_exceeded", got)
	}
}

// TestBudgetCrossedMidStream: a stream admitted under the budget that spends past it runs to
// its end; the next request is refused.
func TestBudgetCrossedMidStream(t *testing.T) {
	store := newSettling(counters.NewMemory())
	g := newGateway(t, strings.Replace(pricedLimits, "model: echo", "model: lorem", 1), limited(store))
	// lorem streams 40 words (max_completion_tokens): $0.04 of output on a $0.01 budget.
	r := g.Chat(t, `{"model":"m","stream":true,"max_completion_tokens":40,"messages":[{"role":"user","content":"go"}]}`, "Authorization", "Bearer "+limitedKey)
	data := gatewaytest.SSEData(t, r.Body)
	if r.Status != 200 || data[len(data)-1] != "[DONE]" || len(data) < 40 {
		t.Fatalf("the stream that crossed the budget did not finish: %d, %d events, last %q", r.Status, len(data), data[len(data)-1])
	}
	store.wait(t)
	if spent := store.read(t, "app").Value("", counters.SpendDay); spent != 41_000_000 {
		t.Errorf("spent %d nano-USD, want 41000000 (1 input and 40 output tokens)", spent)
	}
	r = g.Chat(t, `{"model":"m","max_completion_tokens":5,"messages":[{"role":"user","content":"again"}]}`, "Authorization", "Bearer "+limitedKey)
	if r.Status != http.StatusTooManyRequests || r.ErrorObject(t)["code"] != "budget_exceeded" {
		t.Fatalf("the request after the crossing: %d %s", r.Status, r.Body)
	}
}

// TestTokensReservedThenSettled: admission reserves the input estimate plus the output
// maximum; once the request ends the counter holds what the provider reported.
func TestTokensReservedThenSettled(t *testing.T) {
	store := newSettling(counters.NewMemory())
	g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`, rate: {tokens_per_minute: 1000}}]
connections: {mock: {kind: mock}}
models: {m: {max_output_tokens: 800, routes: [{connection: mock, model: echo}]}}
`, limited(store))
	body := `{"model":"m","max_completion_tokens":800,"messages":[{"role":"user","content":"one two three four"}]}`
	r := g.Chat(t, body, "Authorization", "Bearer "+limitedKey)
	reserved := int64(gateway.EstimateChatTokens(body) + 800)
	if r.Status != 200 || r.Header.Get(gateway.HeaderRemainingTokens) != fmt.Sprint(1000-reserved) {
		t.Fatalf("%d, remaining tokens %q, want %d left after reserving %d", r.Status, r.Header.Get(gateway.HeaderRemainingTokens), 1000-reserved, reserved)
	}
	store.wait(t)
	if got := store.read(t, "app").Value("", counters.Tokens); got != 8 {
		t.Fatalf("after the request the key has %d tokens counted, want the 8 reported (4 in, 4 out)", got)
	}
	// The reservation alone would not fit twice; the settled count leaves room.
	if r := g.Chat(t, body, "Authorization", "Bearer "+limitedKey); r.Status != 200 {
		t.Fatalf("second request: %d %s", r.Status, r.Body)
	}
	// A reservation above the limit could never be admitted: no retry helps.
	r = g.Chat(t, strings.Replace(body, `"max_completion_tokens":800`, `"max_completion_tokens":2000`, 1), "Authorization", "Bearer "+limitedKey)
	if r.Status != 400 { // above the model's max_output_tokens first
		t.Fatalf("max 2000 over a ceiling of 800: %d", r.Status)
	}
}

// TestRequestTooLargeForTheTokenLimit: a request whose reservation exceeds tokens_per_minute is
// a 429 no SDK should retry.
func TestRequestTooLargeForTheTokenLimit(t *testing.T) {
	g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`, rate: {tokens_per_minute: 100}}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, limited(counters.NewMemory()))
	r := g.Chat(t, `{"model":"m","max_completion_tokens":500,"messages":[{"role":"user","content":"x"}]}`, "Authorization", "Bearer "+limitedKey)
	if r.Status != 429 || r.Header.Get("X-Should-Retry") != "false" || !bytes.Contains(r.Body, []byte("Request too large for key app on tokens per minute (TPM): Limit 100")) {
		t.Fatalf("%d %q %s", r.Status, r.Header.Get("X-Should-Retry"), r.Body)
	}
}

// TestPerModelLimitsAndDefaults: key_defaults apply to keys that set nothing, a key's own
// parts replace them (rate: {} frees it), and a per_model rule counts apart from the key's own
// limits, both applying.
func TestPerModelLimitsAndDefaults(t *testing.T) {
	g := newGateway(t, `
key_defaults: {rate: {requests_per_minute: 1}}
keys:
  - {name: plain, value: key-plain-00001}
  - {name: free, value: key-free-000001, rate: {}}
  - name: app
    value: `+limitedKey+`
    rate: {requests_per_minute: 3}
    per_model: {"tools*": {rate: {requests_per_minute: 1}}}
connections: {mock: {kind: mock}}
models:
  echo: {routes: [{connection: mock, model: echo}]}
  tools-a: {routes: [{connection: mock, model: echo}]}
  tools-b: {routes: [{connection: mock, model: echo}]}
`, limited(counters.NewMemory()))
	call := func(key, model string) *gatewaytest.Response {
		return g.Chat(t, `{"model":"`+model+`","messages":[{"role":"user","content":"x"}]}`, "Authorization", "Bearer "+key)
	}
	for i, tc := range []struct {
		key, model string
		status     int
	}{
		{"key-plain-00001", "echo", 200}, {"key-plain-00001", "echo", 429}, // the default: 1 a minute
		{"key-free-000001", "echo", 200}, {"key-free-000001", "echo", 200}, {"key-free-000001", "echo", 200},
		{limitedKey, "tools-a", 200}, {limitedKey, "tools-b", 429}, // one request to tools* a minute
		{limitedKey, "echo", 200}, {limitedKey, "echo", 200}, {limitedKey, "echo", 429}, // 3 a minute: tools-a, echo, echo
	} {
		r := call(tc.key, tc.model)
		if r.Status != tc.status {
			t.Fatalf("call %d (%s on %s): %d, want %d: %s", i, tc.key, tc.model, r.Status, tc.status, r.Body)
		}
		if i == 6 && !bytes.Contains(r.Body, []byte("for key app on models matching tools* on requests per minute")) {
			t.Errorf("the per-model refusal does not name its rule: %s", r.Body)
		}
	}
}

// TestFailoverAttemptsAreEachCharged: an attempt that failed over after reporting usage is
// charged as its attempt line says, and the attempt that served too.
func TestFailoverAttemptsAreEachCharged(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":0,"total_tokens":50}}`+"\n\n")
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // the connection drops before any content
	}))
	t.Cleanup(up.Close)
	store := newSettling(counters.NewMemory())
	g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`, budget: {usd_per_month: 100}}]
connections:
  flaky: {kind: openai-compatible, base_url: "`+up.URL+`/v1"}
  mock: {kind: mock}
models:
  m:
    price: {input_per_mtok: 1000, output_per_mtok: 2000}
    routes: [{connection: flaky, model: x}, {connection: mock, model: echo}]
`, limited(store))
	r := g.Chat(t, `{"model":"m","stream":true,"max_completion_tokens":10,"messages":[{"role":"user","content":"one two"}]}`, "Authorization", "Bearer "+limitedKey)
	if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != "mock/echo" {
		t.Fatalf("%d via %s: %s", r.Status, r.Header.Get(gateway.HeaderRoute), r.Body)
	}
	store.wait(t)
	attempts := g.logs.Attempts(t, 1)
	var logged float64
	for _, a := range attempts {
		c, _ := a["cost_usd"].(float64)
		logged += c
		if labels, _ := a["labels"].(map[string]any); labels["key"] != "app" {
			t.Errorf("attempt line labels = %v, want the key's name", a["labels"])
		}
	}
	if len(attempts) != 2 || logged != 0.05+0.002+0.004 {
		t.Fatalf("attempts %d costing %v; want 2 costing $0.056 (50 input tokens, then 2 in and 2 out)", len(attempts), logged)
	}
	if got := store.read(t, "app").Value("", counters.SpendMonth); got != 56_000_000 {
		t.Errorf("the key was charged %d nano-USD, the attempt lines say 56000000", got)
	}
}

// TestCutStreamIsChargedForWhatItUsed: a stream the upstream broke off without reporting usage
// is charged the input estimate and the output it sent, not its reservation.
func TestCutStreamIsChargedForWhatItUsed(t *testing.T) {
	store := newSettling(counters.NewMemory())
	// The OpenAI wire reports usage only at the end, so a cut stream has none (the mock
	// reports its prompt with its first word).
	up := openaifake.New()
	t.Cleanup(up.Close)
	up.Enqueue(openaifake.Reply{Text: "Lorem ipsum dolor sit amet", CutAfter: 3})
	g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`, rate: {tokens_per_minute: 100000}}]
connections: {up: {kind: openai, api_key: sk-up-limits-0123456789, base_url: "`+up.BaseURL()+`"}}
models: {m: {routes: [{connection: up, model: gpt-cut}]}}
`, limited(store))
	body := `{"model":"m","stream":true,"max_completion_tokens":500,"messages":[{"role":"user","content":"hello there"}]}`
	r := g.Chat(t, body, "Authorization", "Bearer "+limitedKey)
	data := gatewaytest.SSEData(t, r.Body)
	if !strings.HasPrefix(data[len(data)-1], `{"error"`) {
		t.Fatalf("the cut stream ended with %q", data[len(data)-1])
	}
	store.wait(t)
	// "Lorem ipsum dolor": 17 characters reached the client, about 5 tokens.
	want := int64(gateway.EstimateChatTokens(body) + 5)
	if got := store.read(t, "app").Value("", counters.Tokens); got != want {
		t.Fatalf("a cut stream was charged %d tokens, want %d (the input estimate and its output)", got, want)
	}
}

// TestClientThatLeavesIsStillCharged: a client that hangs up mid-stream leaves its request
// charged for the output it was sent, settled all the same.
func TestClientThatLeavesIsStillCharged(t *testing.T) {
	store := newSettling(counters.NewMemory())
	g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`, rate: {tokens_per_minute: 100000}}]
connections: {mock: {kind: mock, delay_ms: 20}}
models: {m: {routes: [{connection: mock, model: lorem}]}}
`, limited(store))
	body := `{"model":"m","stream":true,"max_completion_tokens":1000,"messages":[{"role":"user","content":"hi"}]}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+limitedKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for n := 0; n < 3 && sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "data: ") {
			n++
		}
	}
	cancel()
	resp.Body.Close()
	store.wait(t)
	est := int64(gateway.EstimateChatTokens(body))
	if got := store.read(t, "app").Value("", counters.Tokens); got <= est || got >= est+1000 {
		t.Fatalf("the departed client's request holds %d tokens; want more than the %d input and well under the reservation", got, est)
	}
}

// blockingStore never answers before its caller gives up.
type blockingStore struct{ counters.Store }

func (blockingStore) Take(ctx context.Context, _ string, _ counters.Windows, _ []counters.Amount) (counters.Counts, bool, error) {
	<-ctx.Done()
	return counters.Counts{}, false, ctx.Err()
}

// TestCounterStoreOutage: a store that does not answer costs a request at most the counters'
// timeout; on_store_error open serves it with an ERROR line and a CounterStoreErrors metric,
// closed refuses it with a 503 (Anthropic's 529 on the Messages door).
func TestCounterStoreOutage(t *testing.T) {
	for _, policy := range []string{"open", "closed"} {
		t.Run(policy, func(t *testing.T) {
			var metrics gatewaytest.LogBuffer
			g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`, rate: {requests_per_minute: 5}}]
counters: {on_store_error: `+policy+`, timeout: 20ms}
connections: {mock: {kind: mock}}
models: {m: {max_output_tokens: 20, routes: [{connection: mock, model: echo}]}}
`, limited(blockingStore{counters.NewMemory()}), func(o *gateway.Options) { o.Metrics = &metrics })
			for _, c := range []doorCall{doorCalls[0], doorCalls[2]} {
				r := c.do(t, g)
				want := 200
				if policy == "closed" {
					want = 503
					if c.anthropic {
						want = 529
					}
				}
				if r.Status != want {
					t.Fatalf("%s with the store down: %d, want %d: %s", c.door, r.Status, want, r.Body)
				}
				if policy == "closed" && !c.anthropic && r.ErrorObject(t)["code"] != "limits_unavailable" {
					t.Errorf("closed refusal: %s", r.Body)
				}
			}
			errs := g.logs.WaitLines(t, record.MsgCounterStoreError, 2)
			if len(errs) != 2 || errs[0]["level"] != "ERROR" || errs[0]["key"] != "app" || errs[0]["on_store_error"] != policy ||
				!strings.Contains(fmt.Sprint(errs[0]["error"]), "deadline exceeded") {
				t.Fatalf("store error lines: %v", errs)
			}
			emf := strings.Split(strings.TrimSpace(metrics.String()), "\n")
			if len(emf) != 2 || !strings.Contains(emf[0], `"Name":"`+record.MetricCounterStoreErrors+`","Unit":"Count"`) ||
				!strings.Contains(emf[0], `"OnStoreError":"`+policy+`"`) || !strings.Contains(emf[0], `"Namespace":"fngate"`) {
				t.Fatalf("metric lines: %q", emf)
			}
		})
	}
}

// orderedStore records the counter calls among the other events of a request, and holds the
// settlement until the client has read the whole stream: a settlement on the stream's path
// would hold the stream back and the test would time out.
type orderedStore struct {
	counters.Store
	mu         sync.Mutex
	events     []string
	clientDone chan struct{}
	settled    chan struct{}
}

func (s *orderedStore) note(e string) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *orderedStore) Take(ctx context.Context, key string, w counters.Windows, a []counters.Amount) (counters.Counts, bool, error) {
	s.note("take")
	return s.Store.Take(ctx, key, w, a)
}

func (s *orderedStore) Add(ctx context.Context, key string, w counters.Windows, a []counters.Amount) error {
	select {
	case <-s.clientDone:
	case <-time.After(5 * time.Second):
		s.note("settled before the client had its answer")
	}
	s.note("settle")
	defer close(s.settled)
	return s.Store.Add(ctx, key, w, a)
}

// TestNoCounterCallBetweenUpstreamAndClient: the admission happens before the upstream is
// called, the settlement after the client has the stream's last byte, and nothing between.
func TestNoCounterCallBetweenUpstreamAndClient(t *testing.T) {
	store := &orderedStore{Store: counters.NewMemory(), clientDone: make(chan struct{}), settled: make(chan struct{})}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		store.note("upstream")
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			`[DONE]`,
		} {
			fmt.Fprint(w, "data: "+chunk+"\n\n")
			http.NewResponseController(w).Flush()
		}
	}))
	t.Cleanup(up.Close)
	g := newGateway(t, `
keys: [{name: app, value: `+limitedKey+`, rate: {tokens_per_minute: 1000}}]
connections: {up: {kind: openai-compatible, base_url: "`+up.URL+`/v1"}}
models: {m: {routes: [{connection: up, model: x}]}}
`, limited(store))
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"max_completion_tokens":100,"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("Authorization", "Bearer "+limitedKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "data: [DONE]" {
			store.note("client has [DONE]")
			close(store.clientDone)
			break
		}
	}
	select {
	case <-store.settled:
	case <-time.After(10 * time.Second):
		t.Fatal("never settled")
	}
	want := []string{"take", "upstream", "client has [DONE]", "settle"}
	store.mu.Lock()
	defer store.mu.Unlock()
	if fmt.Sprint(store.events) != fmt.Sprint(want) {
		t.Fatalf("events = %q, want %q", store.events, want)
	}
}

// TestUnlimitedKeysMakeNoCounterCalls: a key without limits, and an open gateway, never touch
// the store.
func TestUnlimitedKeysMakeNoCounterCalls(t *testing.T) {
	g := newGateway(t, `
keys:
  - {name: limited, value: key-limited-001, rate: {requests_per_minute: 5}}
  - {name: app, value: `+limitedKey+`}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, limited(failingStore{}))
	r := g.Chat(t, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, "Authorization", "Bearer "+limitedKey)
	if r.Status != 200 || r.Header.Get(gateway.HeaderLimitRequests) != "" {
		t.Fatalf("%d, %s = %q", r.Status, gateway.HeaderLimitRequests, r.Header.Get(gateway.HeaderLimitRequests))
	}
	if lines := g.logs.Lines(t, record.MsgCounterStoreError); len(lines) != 0 {
		t.Fatalf("an unlimited key called the store: %v", lines)
	}
}

type failingStore struct{ counters.Store }

func (failingStore) Take(context.Context, string, counters.Windows, []counters.Amount) (counters.Counts, bool, error) {
	return counters.Counts{}, false, errors.New("must not be called")
}

// TestLimitsNeedTheirStore: a config that counts in a cloud store does not start on a platform
// that supplied none, rather than limiting each instance on its own.
func TestLimitsNeedTheirStore(t *testing.T) {
	cfg := gatewaytest.Config(t, `
keys: [{name: app, value: `+limitedKey+`, rate: {requests_per_minute: 5}}]
counters: {store: dynamodb, table: fngate-counters}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, config.Options{Getenv: func(string) string { return "" }})
	_, err := gateway.New(cfg, gateway.Options{Registry: registry(), Logger: discardLogger()})
	if err == nil || !strings.Contains(err.Error(), "counters.store is dynamodb, but this platform supplied no counter store") {
		t.Fatalf("err = %v", err)
	}
}

// TestEmbeddingsReserveTheirInputAlone: an embeddings request reserves its input estimate (a
// quarter of each text's characters, token ids as they are) and no output; it is charged the
// input its route reported, or the estimate when the route reported none, at the model's
// input price, which the attempt and request lines log as the cost; a reservation above
// tokens_per_minute says what it counted.
func TestEmbeddingsReserveTheirInputAlone(t *testing.T) {
	noUsage := openaifake.New()
	t.Cleanup(noUsage.Close)
	const cfg = `
keys: [{name: app, value: ` + limitedKey + `, rate: {tokens_per_minute: %d}, budget: {usd_per_day: 1}}]
connections:
  mock: {kind: mock}
  silent: {kind: openai-compatible, base_url: "%s"}
models:
  e: {kind: embedding, dimensions: 2, price: {input_per_mtok: 1000}, routes: [{connection: mock, model: embed}]}
  e-silent: {kind: embedding, dimensions: 2, price: {input_per_mtok: 1000}, routes: [{connection: silent, model: x}]}
`
	// "one two three four" and "five six": 5 and 2 tokens estimated, 4 and 2 words the mock
	// reports.
	const texts = `"input":["one two three four","five six"]`
	for _, tc := range []struct {
		name, body     string
		reserved, used int64
		cost           bool // the route reported usage, so the lines log a cost
	}{
		{"reported", `{"model":"e",` + texts + `}`, 7, 6, true},
		{"not reported", `{"model":"e-silent",` + texts + `}`, 7, 7, false},
		{"token ids", `{"model":"e","input":[[1,2,3],[4,5,6,7,8]]}`, 8, 8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := counters.NewMemory()
			g := newGateway(t, fmt.Sprintf(cfg, 1000, noUsage.BaseURL()), limited(store))
			if strings.Contains(tc.body, "e-silent") {
				noUsage.Enqueue(openaifake.Reply{Body: []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.5]},{"object":"embedding","index":1,"embedding":[1,0]}],"model":"x"}`)})
			}
			// Served in this goroutine, so the request has been settled when ServeHTTP returns.
			req := httptest.NewRequest(http.MethodPost, "/v1/embeddings", strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+limitedKey)
			r := httptest.NewRecorder()
			g.Gateway.ServeHTTP(r, req)
			if r.Code != 200 || r.Header().Get(gateway.HeaderRemainingTokens) != fmt.Sprint(1000-tc.reserved) {
				t.Fatalf("%d, remaining tokens %q, want %d after reserving %d: %s", r.Code, r.Header().Get(gateway.HeaderRemainingTokens), 1000-tc.reserved, tc.reserved, r.Body)
			}
			c, err := store.Read(context.Background(), "app", counters.At(limitsNow))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Value("", counters.Tokens); got != tc.used {
				t.Errorf("%d tokens counted, want %d", got, tc.used)
			}
			if got := c.Value("", counters.SpendDay); got != tc.used*1_000_000 {
				t.Errorf("%d nano-USD spent, want %d (input tokens at $0.001)", got, tc.used*1_000_000)
			}
			lines := []map[string]any{g.logs.Attempts(t, 1)[0], g.logs.AfterRequests(t, 1)[0]}
			for _, l := range lines {
				got, logged := l["cost_usd"].(float64)
				if logged != tc.cost || tc.cost && got != float64(tc.used)*0.001 {
					t.Errorf("%s line cost_usd = %v, want %v (logged: %v)", l["msg"], l["cost_usd"], float64(tc.used)*0.001, tc.cost)
				}
			}
		})
	}
	t.Run("too large for the token limit", func(t *testing.T) {
		g := newGateway(t, fmt.Sprintf(cfg, 5, noUsage.BaseURL()), limited(counters.NewMemory()))
		r := g.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"e",`+texts+`}`, "Authorization", "Bearer "+limitedKey)
		if r.Status != 429 || r.Header.Get("X-Should-Retry") != "false" || r.ErrorObject(t)["code"] != "rate_limit_exceeded" ||
			!bytes.Contains(r.Body, []byte("Limit 5, Requested 7 (the input estimate). Send fewer or shorter inputs.")) {
			t.Fatalf("%d %q %s", r.Status, r.Header.Get("X-Should-Retry"), r.Body)
		}
	})
}

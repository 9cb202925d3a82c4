package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	anthropicp "github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/openaifake"
)

const (
	usageKey    = "sk-gw-usage-0123456789"
	usageClaude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	usageNova   = "amazon.nova-test-v1:0"
)

// usageRoute is one route kind of the Messages door and what its backend reports: Input
// counts the whole prompt, cached share included (the gateway's Usage.InputTokens).
type usageRoute struct {
	name, model           string
	script                func()
	input, output         int
	cacheRead, cacheWrite int
	reportsPromptAtStart  bool   // message_start has the backend's count, not the estimate
	count                 string // how count_tokens counts on the route (gateway.HeaderTokenCount)
}

// usageHarness serves a gateway with one model per route kind the tests reach: the mock, an
// OpenAI-wire fake, an Anthropic fake, and a Bedrock fake with a Claude model (InvokeModel,
// Anthropic's events) and a Nova model (ConverseStream, translated). Its key has a token
// limit, so what each request is charged is counted; its tracer keeps each attempt's record.
type usageHarness struct {
	g      *testGateway
	store  *settling
	traces *attemptTraces
	routes []usageRoute
}

func newUsageHarness(t *testing.T) *usageHarness {
	t.Helper()
	// The AWS SDK reads credentials from the environment, pointed at files of the test's own.
	awstest.Isolate(t, "AKIDUSAGE", "AWS_ENDPOINT_URL=http://127.0.0.1:1")
	oa, an, bf := openaifake.New(), anthropicfake.New(), bedrockfake.Start()
	t.Cleanup(oa.Close)
	t.Cleanup(an.Close)
	t.Cleanup(bf.Close)
	bf.AccessKeyID = "AKIDUSAGE"
	reg := providers.Registry{}
	mock.Register(reg)
	openaicompat.Register(reg)
	anthropicp.Register(reg)
	bedrock.Register(reg, sdkconfig.Load)
	h := &usageHarness{store: newSettling(counters.NewMemory()), traces: &attemptTraces{}}
	h.g = newGateway(t, fmt.Sprintf(`
keys: [{name: app, value: %s, rate: {tokens_per_minute: 10000000}}]
connections:
  mock: {kind: mock}
  oai: {kind: openai, api_key: sk-up-usage-0123456789, base_url: "%s"}
  claude: {kind: anthropic, api_key: %s, base_url: "%s"}
  aws: {kind: bedrock, region: us-east-1, endpoint: %s}
models:
  via-mock: {routes: [{connection: mock, model: echo}]}
  via-openai: {routes: [{connection: oai, model: gpt-fake}]}
  via-anthropic: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
  via-bedrock-claude: {routes: [{connection: aws, model: %s}]}
  via-bedrock-nova: {routes: [{connection: aws, model: %s}]}
`, usageKey, oa.BaseURL(), anthropicfake.APIKey, an.URL, bf.URL, usageClaude, usageNova), limited(h.store),
		func(o *gateway.Options) { o.Registry = reg; o.Tracer = h.traces })
	h.routes = []usageRoute{
		// The mock counts words: 2 of the system prompt and 5 of the message, 5 answered. It
		// reports the prompt with its first word, and counts it for count_tokens too.
		{name: "mock", model: "via-mock", script: func() {}, input: 7, output: 5, reportsPromptAtStart: true, count: "exact"},
		{name: "openai wire", model: "via-openai", script: func() {
			oa.Enqueue(openaifake.Reply{Text: "one two three four five", PromptTokens: 1234, CompletionTokens: 6, CachedTokens: 1000})
		}, input: 1234, output: 6, cacheRead: 1000, count: "estimate"},
		{name: "anthropic", model: "via-anthropic", script: func() {
			an.Enqueue(anthropicfake.Reply{Answer: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("one two three four five")},
				Usage: anthropicfake.Usage{Input: 12, CacheRead: 2000, CacheCreation: 100, Output: 9}}})
		}, input: 2112, output: 9, cacheRead: 2000, cacheWrite: 100, reportsPromptAtStart: true, count: "exact"},
		{name: "bedrock claude", model: "via-bedrock-claude", script: func() {
			bf.Script(usageClaude, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "one two three four five"}},
				Usage: &bedrockfake.Usage{InputTokens: ptrInt(12), OutputTokens: ptrInt(40), CacheReadInputTokens: ptrInt(2000), CacheWriteInputTokens: ptrInt(300)}})
		}, input: 2312, output: 40, cacheRead: 2000, cacheWrite: 300, reportsPromptAtStart: true, count: "exact"},
		{name: "bedrock converse", model: "via-bedrock-nova", script: func() {
			bf.Script(usageNova, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "one two three four five"}}, Usage: bedrockfake.Tokens(321, 4)})
		}, input: 321, output: 4, count: "estimate"},
	}
	return h
}

func ptrInt(n int) *int { return &n }

const usagePrompt = `"system":"Be brief.","messages":[{"role":"user","content":"one two three four five"}]`

func usageBody(model string) string {
	return `{"model":"` + model + `","max_tokens":100,"stream":true,` + usagePrompt + `}`
}

func usageParams(model string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 100, System: []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{userText("one two three four five")}}
}

// check compares u with the route's usage in Anthropic's terms: input_tokens is the uncached share.
func (rt *usageRoute) check(t *testing.T, what string, u anthropic.Usage) {
	t.Helper()
	if u.InputTokens != int64(rt.input-rt.cacheRead-rt.cacheWrite) || u.OutputTokens != int64(rt.output) ||
		u.CacheReadInputTokens != int64(rt.cacheRead) || u.CacheCreationInputTokens != int64(rt.cacheWrite) {
		t.Errorf("%s usage %s, want the backend's %d in (%d read, %d written), %d out", what, u.RawJSON(), rt.input, rt.cacheRead, rt.cacheWrite, rt.output)
	}
}

// startCounts reads message_start's input_tokens and output_tokens, failing unless both are
// there as integers.
func startCounts(t *testing.T, ev anthropic.MessageStreamEventUnion) (input, output int) {
	t.Helper()
	var start struct {
		Message struct {
			Usage map[string]json.RawMessage `json:"usage"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(ev.RawJSON()), &start); err != nil {
		t.Fatal(err)
	}
	n := func(name string) int {
		v, err := strconv.Atoi(string(start.Message.Usage[name]))
		if err != nil {
			t.Fatalf("message_start usage.%s is %s, want an integer: %s", name, start.Message.Usage[name], ev.RawJSON())
		}
		return v
	}
	return n("input_tokens"), n("output_tokens")
}

// TestMessagesStreamStartCarriesCountsOnEveryRoute: on every route kind the Messages stream's
// message_start has integer input_tokens and output_tokens: the backend's count where it has
// one at the start (Anthropic's and Bedrock Claude's own events, the mock's first word),
// else the gateway's estimate, which is what count_tokens answers where it estimates; the
// SDK's accumulated message then ends with the backend's own usage, cache counts included,
// as the whole answer has it.
func TestMessagesStreamStartCarriesCountsOnEveryRoute(t *testing.T) {
	h := newUsageHarness(t)
	c := anthropicClient(h.g, option.WithAPIKey(usageKey))
	ctx := context.Background()
	estimate := gateway.EstimateMessagesTokens(usageBody("m"))
	for _, rt := range h.routes {
		t.Run(rt.name, func(t *testing.T) {
			rt.script()
			whole, err := c.Messages.New(ctx, usageParams(rt.model))
			if err != nil {
				t.Fatal(err)
			}
			rt.check(t, "whole answer", whole.Usage)

			rt.script()
			stream := c.Messages.NewStreaming(ctx, usageParams(rt.model))
			var acc anthropic.Message
			startIn := -1
			for stream.Next() {
				ev := stream.Current()
				if ev.Type == "message_start" {
					var out int
					startIn, out = startCounts(t, ev)
					if out < 0 || out > rt.output {
						t.Errorf("message_start output_tokens %d", out)
					}
				}
				if err := acc.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if startIn < 0 {
				t.Fatal("no message_start")
			}
			rt.check(t, "streamed", acc.Usage)
			switch {
			case rt.reportsPromptAtStart && startIn != rt.input-rt.cacheRead-rt.cacheWrite:
				t.Errorf("message_start input_tokens %d, want the backend's %d", startIn, rt.input-rt.cacheRead-rt.cacheWrite)
			case !rt.reportsPromptAtStart && startIn != estimate:
				t.Errorf("message_start input_tokens %d, want the estimate %d", startIn, estimate)
			}

			rt.script()
			r := h.g.Do(t, http.MethodPost, "/v1/messages/count_tokens", `{"model":"`+rt.model+`",`+usagePrompt+`}`, "X-Api-Key", usageKey, "Anthropic-Version", "2023-06-01")
			var counted struct {
				InputTokens int `json:"input_tokens"`
			}
			if err := json.Unmarshal(r.Body, &counted); err != nil || r.Header.Get(gateway.HeaderTokenCount) != rt.count {
				t.Fatalf("count_tokens %d %s %v", r.Status, r.Body, r.Header)
			}
			// Where count_tokens estimates, message_start says the same; where it would ask
			// the backend (Bedrock's CountTokens), the stream does not wait for that call.
			if rt.count == "estimate" && counted.InputTokens != startIn {
				t.Errorf("count_tokens %d, message_start %d", counted.InputTokens, startIn)
			}
		})
	}
}

// TestMessagesStartEstimateIsNeverLoggedChargedOrTraced: where message_start carries the
// gateway's estimate (the backend reports the prompt only at the end), the attempt's log
// line, its trace and what the key is charged are the backend's numbers, which differ from
// the estimate.
func TestMessagesStartEstimateIsNeverLoggedChargedOrTraced(t *testing.T) {
	h := newUsageHarness(t)
	estimate := gateway.EstimateMessagesTokens(usageBody("m"))
	for _, rt := range h.routes {
		if rt.reportsPromptAtStart {
			continue
		}
		t.Run(rt.name, func(t *testing.T) {
			if rt.input == estimate {
				t.Fatalf("the backend's count equals the estimate (%d): the test cannot tell them apart", estimate)
			}
			before := h.store.read(t, "app").Value("", counters.Tokens)
			h.g.logs.Reset()
			rt.script()
			r := h.g.Do(t, http.MethodPost, "/v1/messages", usageBody(rt.model), "X-Api-Key", usageKey, "Anthropic-Version", "2023-06-01")
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			h.store.wait(t)
			a := h.g.logs.Attempts(t, 1)
			u, _ := a[0]["usage"].(map[string]any)
			if u["prompt_tokens"] != float64(rt.input) || u["completion_tokens"] != float64(rt.output) {
				t.Errorf("attempt logged usage %v, want the backend's %d in, %d out (estimate %d)", a[0]["usage"], rt.input, rt.output, estimate)
			}
			if got := h.store.read(t, "app").Value("", counters.Tokens) - before; got != int64(rt.input+rt.output) {
				t.Errorf("charged %d tokens, want the backend's %d (estimate %d in)", got, rt.input+rt.output, estimate)
			}
			rec := h.traces.last(t)
			if rec.Usage.InputTokens == nil || *rec.Usage.InputTokens != rt.input || rec.Usage.OutputTokens == nil || *rec.Usage.OutputTokens != rt.output {
				t.Errorf("traced usage %+v, want the backend's", rec.Usage)
			}
		})
	}
}

// attemptTraces is a tracer that keeps the record each attempt's trace ends with.
type attemptTraces struct {
	mu   sync.Mutex
	ends []record.Attempt
}

func (a *attemptTraces) Request(*http.Request, string) record.RequestTrace { return requestTrace{a} }

func (a *attemptTraces) Transport(next http.RoundTripper) http.RoundTripper { return next }

func (a *attemptTraces) last(t *testing.T) record.Attempt {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ends) == 0 {
		t.Fatal("no attempt was traced")
	}
	return a.ends[len(a.ends)-1]
}

type requestTrace struct{ a *attemptTraces }

func (requestTrace) Decoded(*llm.Request) {}
func (requestTrace) TraceID() string      { return "" }
func (requestTrace) End(*record.Request)  {}
func (r requestTrace) Attempt(ctx context.Context, _ *record.Attempt) (context.Context, record.AttemptTrace) {
	return ctx, attemptTrace(r)
}

type attemptTrace struct{ a *attemptTraces }

func (attemptTrace) Answer(*llm.Answer) {}
func (attemptTrace) Delta(*llm.Delta)   {}
func (t attemptTrace) End(rec *record.Attempt) {
	t.a.mu.Lock()
	t.a.ends = append(t.a.ends, *rec)
	t.a.mu.Unlock()
}

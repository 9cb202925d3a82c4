package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

func chunkJSON(t *testing.T, ev string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev), &m); err != nil {
		t.Fatalf("chunk is not JSON: %q", ev)
	}
	return m
}

func TestStreamShape(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{Text: "alpha beta gamma", PromptTokens: 11, CompletionTokens: 3, CachedTokens: 4})
	r := g.Chat(t, `{`+hello+`,"stream":true,"stream_options":{"include_usage":true}}`)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" || r.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("status %d headers %v", r.Status, r.Header)
	}
	if r.Header.Get("X-Fngate-Overhead-Ms") == "" || r.Header.Get("X-Fngate-Route") != "a/model-a" {
		t.Errorf("route and overhead headers missing: %v", r.Header)
	}
	events := gatewaytest.SSEData(t, r.Body)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %v", events)
	}
	var text strings.Builder
	var id string
	for i, ev := range events[:len(events)-1] {
		c := chunkJSON(t, ev)
		if c["object"] != "chat.completion.chunk" || c["model"] != "m" {
			t.Errorf("chunk %d: %v", i, c)
		}
		if id == "" {
			id = c["id"].(string)
		} else if c["id"] != id {
			t.Errorf("chunk ids differ: %v vs %v", c["id"], id)
		}
		if _, ok := c["usage"]; !ok {
			t.Errorf("chunk %d lacks the usage key that include_usage promises", i)
		}
		choices := c["choices"].([]any)
		if i == 0 {
			d := choices[0].(map[string]any)["delta"].(map[string]any)
			if d["role"] != "assistant" {
				t.Errorf("first chunk has no role: %v", d)
			}
		}
		if len(choices) > 0 {
			if s, ok := choices[0].(map[string]any)["delta"].(map[string]any)["content"].(string); ok {
				text.WriteString(s)
			}
		}
	}
	if text.String() != "alpha beta gamma" {
		t.Errorf("streamed text %q", text.String())
	}
	fin := chunkJSON(t, events[len(events)-3])
	if fin["choices"].([]any)[0].(map[string]any)["finish_reason"] != "stop" {
		t.Errorf("finish chunk: %v", fin)
	}
	usage := chunkJSON(t, events[len(events)-2])
	if len(usage["choices"].([]any)) != 0 {
		t.Errorf("usage chunk has choices: %v", usage)
	}
	u := usage["usage"].(map[string]any)
	if u["prompt_tokens"] != float64(11) || u["completion_tokens"] != float64(3) || u["total_tokens"] != float64(14) ||
		u["prompt_tokens_details"].(map[string]any)["cached_tokens"] != float64(4) {
		t.Errorf("usage %v", u)
	}
	// The attempt is charged: (11-4)*2 + 4*2 (no cached price: input price) + 3*10, per million.
	att := g.logs.Lines(t, "attempt")[0]
	if got, want := att["cost_usd"].(float64), (7*2.0+4*2.0+3*10.0)/1e6; fmt.Sprintf("%.12f", got) != fmt.Sprintf("%.12f", want) {
		t.Errorf("cost %v, want %v", got, want)
	}
	if att["ttft_ms"] == nil {
		t.Error("no ttft_ms on a streamed attempt")
	}
}

// Without include_usage the client gets no usage chunk and no usage keys, though the gateway
// still asks the upstream for usage to log and charge the attempt.
func TestStreamWithoutUsage(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{Text: "alpha", PromptTokens: 2, CompletionTokens: 1})
	r := g.Chat(t, `{`+hello+`,"stream":true}`)
	if strings.Contains(string(r.Body), `"usage"`) {
		t.Errorf("usage sent without include_usage: %s", r.Body)
	}
	up := a.Requests()[0].Body
	if so, _ := up["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("upstream not asked for usage: %v", up)
	}
	if u, _ := g.logs.Lines(t, "attempt")[0]["usage"].(map[string]any); u["completion_tokens"] != float64(1) {
		t.Errorf("attempt usage not logged: %v", u)
	}
}

// A count the provider did not report is left out, never sent as 0.
func TestUnreportedUsageIsOmitted(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{Text: "x", PromptTokens: -1, CompletionTokens: 4})
	r := g.Chat(t, `{`+hello+`,"stream":true,"stream_options":{"include_usage":true}}`)
	events := gatewaytest.SSEData(t, r.Body)
	u := chunkJSON(t, events[len(events)-2])["usage"].(map[string]any)
	if _, ok := u["prompt_tokens"]; ok {
		t.Errorf("unreported prompt_tokens sent: %v", u)
	}
	if _, ok := u["total_tokens"]; ok {
		t.Errorf("total_tokens made up: %v", u)
	}
	if u["completion_tokens"] != float64(4) {
		t.Errorf("usage %v", u)
	}
	a.Enqueue(openaifake.Reply{Text: "x", PromptTokens: -1, CompletionTokens: 4})
	nr := g.Chat(t, `{`+hello+`}`).JSON(t)
	if _, ok := nr["usage"].(map[string]any)["prompt_tokens"]; ok {
		t.Errorf("unreported prompt_tokens in a JSON answer: %v", nr["usage"])
	}
	if att := g.logs.Lines(t, "attempt"); att[0]["cost_usd"] != nil {
		t.Errorf("cost computed from incomplete usage: %v", att[0])
	}
}

// Streamed tool calls keep their index, id and name; arguments arrive as fragments.
func TestStreamedToolCalls(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{ToolCalls: []openaifake.ToolCall{
		{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		{ID: "call_b", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`},
	}})
	r := g.Chat(t, `{`+hello+`,"stream":true,"tools":[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"get_time"}}]}`)
	args := map[int]string{}
	ids := map[int]string{}
	finish := ""
	for _, ev := range gatewaytest.SSEData(t, r.Body) {
		if ev == "[DONE]" {
			continue
		}
		ch := chunkJSON(t, ev)["choices"].([]any)[0].(map[string]any)
		if f, ok := ch["finish_reason"].(string); ok {
			finish = f
		}
		calls, _ := ch["delta"].(map[string]any)["tool_calls"].([]any)
		for _, c := range calls {
			m := c.(map[string]any)
			i := int(m["index"].(float64))
			if id, ok := m["id"].(string); ok {
				ids[i] = id
			}
			args[i] += m["function"].(map[string]any)["arguments"].(string)
		}
	}
	if ids[0] != "call_a" || ids[1] != "call_b" || args[0] != `{"city":"Paris"}` || args[1] != `{"tz":"Europe/Paris"}` || finish != "tool_calls" {
		t.Errorf("ids %v args %v finish %q\n%s", ids, args, finish, r.Body)
	}
}

// Tokens reach the client one by one as the upstream produces them: nothing buffers.
func TestStreamIsIncremental(t *testing.T) {
	a, b := openaifake.New(), openaifake.New()
	defer a.Close()
	defer b.Close()
	g := newGateway(t, fmt.Sprintf(strings.Replace(twoUpstreams, "first_byte: 300ms, idle: 300ms", "first_byte: 5s, idle: 5s", 1), a.BaseURL(), b.BaseURL()))
	a.Enqueue(openaifake.Reply{Text: "one two three", ChunkDelay: 150 * time.Millisecond})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(`{`+hello+`,"stream":true}`))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var firstAt time.Duration
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"content":"one"`) {
			firstAt = time.Since(start)
		}
	}
	total := time.Since(start)
	// The upstream needs 5 chunk delays (role, 3 words, finish) to finish.
	if firstAt == 0 || total-firstAt < 300*time.Millisecond {
		t.Errorf("first token at %v of %v: the stream was buffered", firstAt, total)
	}
}

// A client that goes away cancels the upstream request at once.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{Text: strings.Repeat("word ", 50), ChunkDelay: 50 * time.Millisecond})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(`{`+hello+`,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Scan()
	resp.Body.Close()
	waitFor(t, func() bool { return a.Canceled() == 1 }, "the upstream did not observe the cancellation")
	waitFor(t, func() bool {
		att := g.logs.Lines(t, "attempt")
		return len(att) == 1 && att[0]["outcome"] == "client_closed"
	}, "the attempt was not logged as client_closed")
}

func TestRefusalIsRelayed(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{Status: 200, Text: ""})
	r := g.Chat(t, `{`+hello+`}`)
	c := r.JSON(t)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if _, ok := c["refusal"]; !ok {
		t.Errorf("message lacks the refusal key: %v", c)
	}
}

// A stream that ends at [DONE] without a finish_reason (OpenRouter's Novita provider ends a
// tool call so) still tells the client why it ended: tool_calls after calls, else stop.
func TestStreamEndedWithoutFinishReasonGetsOne(t *testing.T) {
	const head = `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":`
	for _, tc := range []struct {
		name, delta, finish string
	}{
		{"text", `{"content":"hello"}`, "stop"},
		{"tool call", `{"tool_calls":[{"index":0,"id":"0","type":"function","function":{"name":"llm_version","arguments":"{}"}}]}`, "tool_calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := rawUpstream(t, head+tc.delta+`,"finish_reason":null}]}`+"\n\ndata: [DONE]\n\n")
			g := newGateway(t, fmt.Sprintf("connections:\n  up: {kind: openai-compatible, base_url: %q}\nmodels:\n  m: {routes: [{connection: up, model: up}]}\n", up.URL))
			events := gatewaytest.SSEData(t, g.Chat(t, `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`).Body)
			n := len(events)
			if n < 3 || events[n-1] != "[DONE]" || !strings.Contains(events[n-2], `"delta":{},"logprobs":null,"finish_reason":"`+tc.finish+`"`) {
				t.Errorf("stream tail:\n%s", strings.Join(events, "\n"))
			}
		})
	}
}

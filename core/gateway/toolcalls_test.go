package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// rawUpstream answers every chat request with body, byte for byte, as an OpenAI-compatible
// server: an event stream when body starts with "data:", JSON otherwise.
func rawUpstream(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(body, "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chunks renders the tool_calls arrays of an answer as OpenAI SSE, then a tool_calls finish
// and [DONE].
func chunks(toolCalls ...string) string {
	var b strings.Builder
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for _, tc := range toolCalls {
		fmt.Fprintf(&b, `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"tool_calls":%s},"finish_reason":null}]}`+"\n\n", tc)
	}
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	return b.String()
}

// answer renders a non-streamed answer with these tool calls.
func answer(toolCalls string) string {
	return `{"id":"x","object":"chat.completion","created":1,"model":"up","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":` +
		toolCalls + `},"finish_reason":"tool_calls"}]}`
}

type wantCall struct{ id, name, args string } // id "" means "made up by the gateway"

// toolCallQuirk is an upstream's answer with tool calls in a shape a real upstream sent, and
// the calls a client must see.
type toolCallQuirk struct {
	name   string
	stream bool
	body   string
	want   []wantCall
}

// toolCallQuirks are the shapes of tool calls real upstreams send (each quirk recorded from
// a live API), streamed and whole, that every door must turn into well-formed calls.
var toolCallQuirks = []toolCallQuirk{
	{"the only call at index 1", true, chunks( // an OpenAI-compatible server in front of Claude
		`[{"index":1,"id":"toolu_a","type":"function","function":{"name":"read_file","arguments":""}}]`,
		`[{"index":1,"function":{"arguments":"{\"pa"}}]`,
		`[{"index":1,"function":{"arguments":"th\": \"a.txt\"}"}}]`),
		[]wantCall{{"toolu_a", "read_file", `{"path": "a.txt"}`}}},
	{"id, type and name repeated in every fragment", true, chunks( // OpenRouter's Novita
		`[{"index":0,"id":"0","type":"function","function":{"name":"llm_version","arguments":""}}]`,
		`[{"index":0,"id":"0","type":"function","function":{"name":"llm_version","arguments":"{}"}}]`),
		[]wantCall{{"0", "llm_version", `{}`}}},
	{"an empty id in the first fragment", true, chunks(
		`[{"index":0,"id":"","type":"function","function":{"name":"get_current_time","arguments":"{}"}}]`),
		[]wantCall{{"", "get_current_time", `{}`}}},
	{"no id at all, no index (Mistral's shape)", true, chunks(
		`[{"function":{"name":"weather","arguments":"{\"location\": \"Paris\"}"}}]`),
		[]wantCall{{"", "weather", `{"location": "Paris"}`}}},
	{"sparse indexes, interleaved", true, chunks(
		`[{"index":3,"id":"c3","type":"function","function":{"name":"a","arguments":"{\"x\":"}}]`,
		`[{"index":7,"id":"c7","type":"function","function":{"name":"b","arguments":"{\"y\":"}}]`,
		`[{"index":3,"function":{"arguments":"1}"}},{"index":7,"function":{"arguments":"2}"}}]`),
		[]wantCall{{"c3", "a", `{"x":1}`}, {"c7", "b", `{"y":2}`}}},
	{"two calls with one id", true, chunks(
		`[{"index":0,"id":"dup","type":"function","function":{"name":"a","arguments":"{}"}}]`,
		`[{"index":1,"id":"dup","type":"function","function":{"name":"b","arguments":"{}"}}]`),
		[]wantCall{{"dup", "a", `{}`}, {"", "b", `{}`}}},
	{"the name after the id", true, chunks(
		`[{"index":0,"id":"c1","type":"function","function":{"arguments":""}}]`,
		`[{"index":0,"function":{"name":"late","arguments":"{}"}}]`),
		[]wantCall{{"c1", "late", `{}`}}},
	{"an empty id in a whole answer", false, answer( // Google's OpenAI-compatible endpoint
		`[{"function":{"arguments":"{}","name":"get_current_time"},"id":"","type":"function"}]`),
		[]wantCall{{"", "get_current_time", `{}`}}},
	{"no id key in a whole answer", false, answer(
		`[{"function":{"arguments":"{}","name":"get_current_time"},"type":"function"}]`),
		[]wantCall{{"", "get_current_time", `{}`}}},
	{"two calls with one id in a whole answer", false, answer(
		`[{"id":"dup","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"dup","type":"function","function":{"name":"b","arguments":"{}"}}]`),
		[]wantCall{{"dup", "a", `{}`}, {"", "b", `{}`}}},
}

// TestToolCallsReachClientsWellFormed replays tool calls in the shapes real upstreams send
// (each quirk recorded from a live API) and checks what the official SDK assembles: every
// call has a unique id, its name once and its arguments whole, the calls are numbered
// densely from 0, and the conversation sent back with their results is accepted.
func TestToolCallsReachClientsWellFormed(t *testing.T) {
	for _, tc := range toolCallQuirks {
		t.Run(tc.name, func(t *testing.T) {
			up := rawUpstream(t, tc.body)
			g := newGateway(t, fmt.Sprintf("connections:\n  up: {kind: openai-compatible, base_url: %q}\nmodels:\n  m: {routes: [{connection: up, model: up}]}\n", up.URL))
			client := g.OpenAI()
			params := gatewaytest.UserOnly("m", "go")
			var msg oai.ChatCompletionMessage
			if tc.stream {
				checkFragments(t, g.Chat(t, `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`).Body)
				acc, _ := gatewaytest.Accumulate(t, client.Chat.Completions.NewStreaming(context.Background(), params))
				msg = acc.Choices[0].Message
			} else {
				c, err := client.Chat.Completions.New(context.Background(), params)
				if err != nil {
					t.Fatal(err)
				}
				msg = c.Choices[0].Message
			}
			var got []wantCall
			for _, c := range msg.ToolCalls {
				if c.Type != "function" {
					t.Errorf("call %s has type %q", c.ID, c.Type)
				}
				got = append(got, wantCall{c.ID, c.Function.Name, c.Function.Arguments})
			}
			checkCalls(t, got, tc.want)
			// The client sends the conversation back, as any tool loop does.
			params.Messages = append(params.Messages, msg.ToParam())
			for _, c := range msg.ToolCalls {
				params.Messages = append(params.Messages, oai.ToolMessage("done", c.ID))
			}
			var err error
			if tc.stream {
				s := client.Chat.Completions.NewStreaming(context.Background(), params)
				for s.Next() {
				}
				err = s.Err()
			} else {
				_, err = client.Chat.Completions.New(context.Background(), params)
			}
			if err != nil {
				t.Errorf("the gateway refused the conversation with its own answer: %v", err)
			}
		})
	}
}

// checkCalls compares the calls a client assembled with the calls it must see: each with
// the upstream's id, or one the gateway made up ("call_...") where the upstream gave none or
// a duplicate; ids unique; names and arguments whole.
func checkCalls(t *testing.T, got, want []wantCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d tool calls, want %d: %+v", len(got), len(want), got)
	}
	seen := map[string]bool{}
	for i, w := range want {
		g := got[i]
		if g.name != w.name || !openaifake.JSONEqual(g.args, w.args) {
			t.Errorf("call %d: %s(%s), want %s(%s)", i, g.name, g.args, w.name, w.args)
		}
		switch {
		case w.id != "" && g.id != w.id:
			t.Errorf("call %d: id %q, want the upstream's %q", i, g.id, w.id)
		case w.id == "" && !strings.HasPrefix(g.id, "call_"):
			t.Errorf("call %d: id %q, want one made up by the gateway", i, g.id)
		case seen[g.id]:
			t.Errorf("call %d: id %q is not unique", i, g.id)
		}
		seen[g.id] = true
	}
}

// checkFragments checks the raw stream against the chunk encoder's rule: indexes dense from 0
// in the order calls start, a call's id in its first fragment and its name only once.
func checkFragments(t *testing.T, body []byte) {
	t.Helper()
	started := 0
	names := map[int]int{}
	for _, ev := range gatewaytest.SSEData(t, body) {
		if ev == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int     `json:"index"`
						ID       *string `json:"id"`
						Function struct {
							Name *string `json:"name"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("%v: %s", err, ev)
		}
		for _, ch := range c.Choices {
			for _, f := range ch.Delta.ToolCalls {
				switch {
				case f.Index > started:
					t.Errorf("call index %d after %d calls: not dense\n%s", f.Index, started, body)
				case f.Index == started:
					started++
					if f.ID == nil || *f.ID == "" {
						t.Errorf("the first fragment of call %d has no id: %s", f.Index, ev)
					}
				}
				if f.Function.Name != nil && *f.Function.Name != "" {
					names[f.Index]++
				}
			}
		}
	}
	for i, n := range names {
		if n != 1 {
			t.Errorf("call %d: its name went out %d times\n%s", i, n, body)
		}
	}
}

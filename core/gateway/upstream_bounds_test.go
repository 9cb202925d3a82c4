package gateway_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// oneUpstream is a priced model with a single OpenAI route, so an attempt's failure is the
// client's answer.
const oneUpstream = `
timeouts: {first_byte: 2s, idle: 2s}
connections:
  a: {kind: openai, api_key: sk-test-key-aaaaaaaa, base_url: %s}
models:
  m:
    price: {input_per_mtok: 2, output_per_mtok: 10}
    routes:
      - {connection: a, model: model-a}
`

func newSingle(t *testing.T) (*testGateway, *openaifake.Server) {
	t.Helper()
	a := openaifake.New()
	t.Cleanup(a.Close)
	return newGateway(t, fmt.Sprintf(oneUpstream, a.BaseURL())), a
}

// hostileCase is an upstream answer the gateway must turn into a failed attempt: before any
// output the client gets status and code; after output began, a 200 stream that ends with an
// error event of that code and no [DONE].
type hostileCase struct {
	name   string
	reply  openaifake.Reply
	stream bool
	status int
	code   string
	class  string // the attempt's error_class
}

// checkHostile plays each case and then a plain request on the same gateway, which must still
// serve: a fatal error in the process (a stack overflow, running out of memory) would have
// ended the test binary instead.
func checkHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, a := newSingle(t)
			a.Enqueue(tc.reply)
			r := g.Chat(t, fmt.Sprintf(`{%s,"stream":%v}`, hello, tc.stream))
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %.300s", r.Status, tc.status, r.Body)
			}
			if tc.status != 200 {
				if e := r.ErrorObject(t); e["code"] != tc.code || e["type"] != "server_error" {
					t.Errorf("error %v, want code %s", e, tc.code)
				}
			} else {
				events := gatewaytest.SSEData(t, r.Body)
				if !strings.Contains(string(r.Body), `"content":"one"`) {
					t.Errorf("content before the failure was not streamed: %.300s", r.Body)
				}
				last := events[len(events)-1]
				if !strings.HasPrefix(last, `{"error":`) || !strings.Contains(last, `"code":"`+tc.code+`"`) {
					t.Errorf("last event %.300s, want an error event with code %s", last, tc.code)
				}
				if strings.Contains(string(r.Body), "[DONE]") {
					t.Errorf("a failed stream ended with [DONE]")
				}
			}
			errs := g.logs.WaitLines(t, "provider_error", 1)
			if len(errs) != 1 || errs[0]["error_class"] != tc.class {
				t.Errorf("provider_error lines %v, want one of class %s", errs, tc.class)
			}
			if r := g.Chat(t, `{`+hello+`}`); r.Status != 200 {
				t.Errorf("the gateway no longer serves: status %d: %s", r.Status, r.Body)
			}
		})
	}
}

// An answer nested three million levels deep (6 MB, under every size cap) used to overflow
// the goroutine stack in the OpenAI-wire parser, a fatal error that ended the process and every
// request in it. It is a malformed answer like any other.
func TestDeeplyNestedAnswerFailsTheAttempt(t *testing.T) {
	const levels = 3_000_000
	nested := strings.Repeat("[", levels) + strings.Repeat("]", levels)
	chunk := []byte(`data: {"choices":[{"index":0,"delta":{"content":" x","extra":` + nested + `},"finish_reason":null}]}` + "\n\n")
	answer := []byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"x","extra":` + nested + `},"finish_reason":"stop"}]}`)
	checkHostile(t, []hostileCase{
		{"answer", openaifake.Reply{Body: answer}, false, 502, "upstream_error", "unavailable"},
		{"chunk before output", openaifake.Reply{Text: "one two", Inject: chunk, InjectAfter: -1}, true, 502, "upstream_stream_broken", "stream_broken"},
		{"chunk after output", openaifake.Reply{Text: "one two three", Inject: chunk, InjectAfter: 1}, true, 200, "upstream_stream_broken", "stream_broken"},
	})
}

// Lines that never end an event (here "event: <1 MB>" repeated, which once grew the SSE
// reader's name without limit) break the stream off once past the reader's bounds.
func TestEndlessSSEEventFailsTheAttempt(t *testing.T) {
	flood := []byte(strings.Repeat("event: "+strings.Repeat("e", 1<<20)+"\n", 16))
	checkHostile(t, []hostileCase{
		{"before output", openaifake.Reply{Text: "one two", Inject: flood, InjectAfter: -1}, true, 502, "upstream_stream_broken", "stream_broken"},
		{"after output", openaifake.Reply{Text: "one two three", Inject: flood, InjectAfter: 1}, true, 200, "upstream_stream_broken", "stream_broken"},
	})
}

// Impossible usage from an upstream (negative counts once became a negative cost_usd and
// negative counts to the client) reads as unreported: left out of the client's usage and of
// the cost, with a WARN line naming the route and the field.
func TestImpossibleUsageIsUnreported(t *testing.T) {
	cases := []struct {
		name, usage string
		want        string // the client's usage
		cost        bool   // whether the attempt is charged
		dropped     []string
	}{
		{"negative counts", `{"prompt_tokens":-5000,"completion_tokens":4,"total_tokens":-4996}`,
			`{"completion_tokens":4}`, false, []string{"prompt_tokens", "total_tokens"}},
		{"beyond 2^31-1", `{"prompt_tokens":3000000000000,"completion_tokens":2,"total_tokens":3000000000002}`,
			`{"completion_tokens":2}`, false, []string{"prompt_tokens", "total_tokens"}},
		{"more cached than prompt", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":50}}`,
			`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`, true, []string{"prompt_tokens_details.cached_tokens"}},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", tc.name, stream), func(t *testing.T) {
				g, a := newSingle(t)
				a.Enqueue(openaifake.Reply{Text: "one two", RawUsage: json.RawMessage(tc.usage)})
				var usage any
				if stream {
					r := g.Chat(t, `{`+hello+`,"stream":true,"stream_options":{"include_usage":true}}`)
					events := gatewaytest.SSEData(t, r.Body)
					if len(events) < 2 || events[len(events)-1] != "[DONE]" {
						t.Fatalf("stream %s", r.Body)
					}
					usage = chunkJSON(t, events[len(events)-2])["usage"]
				} else {
					r := g.Chat(t, `{`+hello+`}`)
					if r.Status != 200 {
						t.Fatalf("status %d: %s", r.Status, r.Body)
					}
					usage = r.JSON(t)["usage"]
				}
				var want any
				_ = json.Unmarshal([]byte(tc.want), &want)
				if !reflect.DeepEqual(usage, want) {
					t.Errorf("client usage %v, want %v", usage, want)
				}
				lines := g.logs.AfterRequests(t, 1)
				var warned []string
				for _, l := range lines {
					switch l["msg"] {
					case "attempt", "request":
						cost, charged := l["cost_usd"].(float64)
						if charged != tc.cost || cost < 0 {
							t.Errorf("%s line cost_usd %v, want charged=%v and never negative", l["msg"], l["cost_usd"], tc.cost)
						}
						if !reflect.DeepEqual(l["usage"], logUsage(want)) {
							t.Errorf("%s line usage %v, want %v", l["msg"], l["usage"], logUsage(want))
						}
					case record.MsgImpossibleUsage:
						if l["level"] != "WARN" || l["route"] != "a/model-a" {
							t.Errorf("impossible_usage line %v", l)
						}
						warned = append(warned, l["field"].(string))
					}
				}
				if !reflect.DeepEqual(warned, tc.dropped) {
					t.Errorf("WARN lines for %v, want %v", warned, tc.dropped)
				}
			})
		}
	}
}

// logUsage is a client usage object as the log lines render it: cached tokens at the top.
func logUsage(u any) any {
	m, _ := u.(map[string]any)
	out := map[string]any{}
	for k, v := range m {
		if d, ok := v.(map[string]any); ok && k == "prompt_tokens_details" {
			out["cached_tokens"] = d["cached_tokens"]
			continue
		}
		out[k] = v
	}
	return out
}

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/openaifake"
)

// Where guardrails sit among the rest: input before the cache and any route (a blocked
// request is not looked up, not planned, not failed over), the cache holding answers as the
// output guardrails left them, stored responses holding the masked input, and a key's
// guardrails added to the model's, never instead of them.
const guardScopeConfig = `
keys:
  - {name: plain, value: sk-plain}
  - {name: strict, value: sk-strict, guardrails: [{name: words, on: output}]}
  - {name: empty, value: sk-empty, guardrails: []}
response_cache: {store: memory}
connections:
  mock: {kind: mock}
  second: {kind: mock}
guardrails:
  pii: {kind: local, mask: [email], block: ["(?i)ignore previous instructions"]}
  words: {kind: local, block: ["FORBIDDEN"]}
models:
  guarded:
    cache: {ttl: 1h}
    guardrails: [{name: pii, on: both, mode: mask}]
    routing: {max_attempts: 2}
    routes: [{connection: mock, model: echo}, {connection: second, model: echo}]
`

func TestGuardrailsOrderAndScope(t *testing.T) {
	store := responsestore.NewMemory()
	gw := newGateway(t, guardScopeConfig, func(o *gateway.Options) {
		o.Cache = responsecache.NewMemory()
		o.ResponseStore = store
	})
	post := func(key, path, body string) (int, http.Header, string) {
		t.Helper()
		r := gw.Do(t, http.MethodPost, path, body, "Authorization", "Bearer "+key)
		return r.Status, r.Header, string(r.Body)
	}

	// The cache holds the masked answer: the hit is masked too, and the key that adds a
	// guardrail has its own entry (the guardrails that apply are part of the cache's key).
	chat := `{"model":"guarded","messages":[{"role":"user","content":"mail dave@example.com"}]}`
	for i, want := range []string{"miss", "hit"} {
		status, h, body := post("sk-plain", "/v1/chat/completions", chat)
		if status != 200 || h.Get(gateway.HeaderCache) != want || strings.Contains(body, "dave@example.com") || !strings.Contains(body, "[EMAIL]") {
			t.Fatalf("request %d: %d %q %s", i, status, h.Get(gateway.HeaderCache), body)
		}
	}
	if _, h, _ := post("sk-strict", "/v1/chat/completions", chat); h.Get(gateway.HeaderCache) != "miss" {
		t.Errorf("a key with other guardrails shared the entry: %q", h.Get(gateway.HeaderCache))
	}

	// A blocked request is neither looked up in the cache nor tried on any route.
	status, h, body := post("sk-plain", "/v1/chat/completions", `{"model":"guarded","messages":[{"role":"user","content":"ignore previous instructions"}]}`)
	if status != 400 || h.Get(gateway.HeaderCache) != "" || !strings.Contains(body, "guardrail_blocked") {
		t.Fatalf("blocked: %d %q %s", status, h.Get(gateway.HeaderCache), body)
	}
	lines := gw.logs.Lines(t, "request")
	last := lines[len(lines)-1]
	if n, ok := lines[0]["attempts"].(float64); !ok || n != 1 {
		t.Fatalf("the request line has no attempts count: %v", lines[0])
	}
	if n, _ := last["attempts"].(float64); n != 0 {
		t.Errorf("a blocked request was tried on %v routes: %v", n, last)
	}
	if len(gw.logs.Lines(t, "attempt")) != 3 {
		t.Errorf("attempts: %d lines, want 3 (two misses and the strict key's)", len(gw.logs.Lines(t, "attempt")))
	}

	// A key adds its guardrails to the model's; an empty list drops none of them.
	forbidden := `{"model":"guarded","messages":[{"role":"user","content":"FORBIDDEN and erin@example.com"}]}`
	if _, _, body := post("sk-strict", "/v1/chat/completions", forbidden); !strings.Contains(body, `"finish_reason":"content_filter"`) || strings.Contains(body, "FORBIDDEN") {
		t.Errorf("the key's output guardrail did not apply: %s", body)
	}
	if _, _, body := post("sk-empty", "/v1/chat/completions", forbidden); strings.Contains(body, "erin@example.com") || !strings.Contains(body, "FORBIDDEN") {
		t.Errorf("guardrails: [] on a key dropped the model's mask, or added a block: %s", body)
	}

	// A stored response holds the masked input, which previous_response_id continues.
	status, _, body = post("sk-plain", "/v1/responses", `{"model":"guarded","store":true,"input":"reach frank@example.com"}`)
	var created struct {
		ID string `json:"id"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &created) != nil || created.ID == "" {
		t.Fatalf("stored response: %d %s", status, body)
	}
	st, err := store.Get(context.Background(), created.ID, "plain")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(st.Input), "frank@example.com") || !strings.Contains(string(st.Input), "[EMAIL]") ||
		strings.Contains(string(st.Response), "frank@example.com") {
		t.Errorf("the store holds the unmasked conversation: input %s response %s", st.Input, st.Response)
	}
}

// TestGuardrailsCoverEveryInputText: input guardrails mask the system instructions, the
// arguments of tool calls the client sends back and the tool results, as well as the
// messages, on every door: the upstream (a capturing fake) never sees what was masked. And
// output guardrails mask a whole answer's tool-call arguments.
func TestGuardrailsCoverEveryInputText(t *testing.T) {
	up := openaifake.New()
	t.Cleanup(up.Close)
	gw := newGateway(t, fmt.Sprintf(`
auth: none
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
guardrails:
  pii: {kind: local, mask: [email]}
models:
  in: {guardrails: [{name: pii, on: input, mode: mask}], routes: [{connection: up, model: m}]}
  out: {guardrails: [{name: pii, on: output, mode: mask}], routes: [{connection: up, model: m}]}
`, up.URL))
	const tool = `{"type":"function","function":{"name":"send","parameters":{"type":"object"}}}`
	for _, tc := range []struct{ door, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"in","tools":[` + tool + `],"messages":[
			{"role":"system","content":"you serve sys@example.com"},
			{"role":"user","content":"mail user@example.com"},
			{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"send","arguments":"{\"to\":\"args@example.com\"}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"sent to result@example.com"}]}`},
		{"messages", "/v1/messages", `{"model":"in","max_tokens":50,"system":"you serve sys@example.com",
			"tools":[{"name":"send","input_schema":{"type":"object"}}],"messages":[
			{"role":"user","content":"mail user@example.com"},
			{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"send","input":{"to":"args@example.com"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"sent to result@example.com"}]}]}]}`},
		{"responses", "/v1/responses", `{"model":"in","instructions":"you serve sys@example.com",
			"tools":[{"type":"function","name":"send","parameters":{"type":"object"}}],"input":[
			{"role":"user","content":"mail user@example.com"},
			{"type":"function_call","call_id":"c1","name":"send","arguments":"{\"to\":\"args@example.com\"}"},
			{"type":"function_call_output","call_id":"c1","output":"sent to result@example.com"}]}`},
	} {
		t.Run(tc.door, func(t *testing.T) {
			before := len(up.Requests())
			r := gw.Do(t, http.MethodPost, tc.path, tc.body, "anthropic-version", "2023-06-01")
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			reqs := up.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("%d upstream requests", len(reqs))
			}
			sent := string(reqs[0].Raw)
			for _, who := range []string{"sys", "user", "args", "result"} {
				if strings.Contains(sent, who+"@example.com") {
					t.Errorf("the upstream was sent %s@example.com: %s", who, sent)
				}
			}
			if n := strings.Count(sent, "[EMAIL]"); n != 4 {
				t.Errorf("%d masks in what the upstream was sent, want 4: %s", n, sent)
			}
		})
	}

	// Output: a whole answer's tool-call arguments, on every door.
	up.Default = openaifake.Reply{ToolCalls: []openaifake.ToolCall{{ID: "c9", Name: "send", Arguments: `{"to":"out@example.com"}`}}, PromptTokens: 5, CompletionTokens: 3}
	for _, d := range guardDoors {
		t.Run(d.name+"/answer tool call", func(t *testing.T) {
			body := strings.Replace(d.body("out", "send it", false), `"model":"out",`, `"model":"out","tools":[`+map[string]string{
				"chat":      tool,
				"messages":  `{"name":"send","input_schema":{"type":"object"}}`,
				"responses": `{"type":"function","name":"send","parameters":{"type":"object"}}`,
			}[d.name]+`],`, 1)
			r := gw.Do(t, http.MethodPost, d.path, body, "anthropic-version", "2023-06-01")
			if r.Status != 200 || strings.Contains(string(r.Body), "out@example.com") || !strings.Contains(string(r.Body), "[EMAIL]") || !strings.Contains(string(r.Body), "send") {
				t.Errorf("%d %s", r.Status, r.Body)
			}
		})
	}
}

// TestKeyDefaultsGuardrails: key_defaults' guardrails apply to a key without its own, on top
// of the model's; a key's own list (even empty) replaces them, never the model's.
func TestKeyDefaultsGuardrails(t *testing.T) {
	gw := newGateway(t, `
keys:
  - {name: plain, value: sk-plain}
  - {name: own, value: sk-own, guardrails: [{name: mail, on: input, mode: mask}]}
  - {name: none, value: sk-none, guardrails: []}
key_defaults: {guardrails: [{name: words, on: output}]}
connections: {mock: {kind: mock}}
guardrails:
  words: {kind: local, block: ["FORBIDDEN"]}
  mail: {kind: local, mask: [email]}
  card: {kind: local, mask: [card]}
models:
  m: {guardrails: [{name: card, on: input, mode: mask}], routes: [{connection: mock, model: echo}]}
`)
	const text = "FORBIDDEN, ana@example.com, 4111 1111 1111 1111"
	for _, tc := range []struct {
		key         string
		has, hasNot []string
	}{
		{"sk-plain", []string{`"finish_reason":"content_filter"`}, []string{"FORBIDDEN", "4111"}},
		{"sk-own", []string{"FORBIDDEN", "[EMAIL]", "[CARD]"}, []string{"content_filter", "ana@example.com", "4111"}},
		{"sk-none", []string{"FORBIDDEN", "ana@example.com", "[CARD]"}, []string{"content_filter", "4111"}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			r := gw.Chat(t, `{"model":"m","messages":[{"role":"user","content":"`+text+`"}]}`, "Authorization", "Bearer "+tc.key)
			body := string(r.Body)
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, body)
			}
			for _, s := range tc.has {
				if !strings.Contains(body, s) {
					t.Errorf("no %q in %s", s, body)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(body, s) {
					t.Errorf("%q in %s", s, body)
				}
			}
		})
	}
}

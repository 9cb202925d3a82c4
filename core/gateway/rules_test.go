package gateway_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/openaifake"
)

const rulesConfig = `
limits: {max_body_bytes: 4096}
connections:
  mock: {kind: mock}
  up: {kind: openai, api_key: sk-test-upstream-key, base_url: %s}
models:
  mock/echo:
    routes: [{connection: mock, model: echo}]
  priced:
    price: {input_per_mtok: 1, output_per_mtok: 2}
    max_output_tokens: 100
    routes: [{connection: mock, model: echo}]
  capped:
    max_output_tokens: 50
    routes: [{connection: mock, model: echo}]
  upstream:
    routes: [{connection: up, model: gpt-test}]
`

// TestRequestRules has one row per rule of the request table in issue 2: each accepted form is
// served, each refused one gets the documented status and names its param.
func TestRequestRules(t *testing.T) {
	fake := openaifake.New()
	defer fake.Close()
	g := newGateway(t, fmt.Sprintf(rulesConfig, fake.BaseURL()))

	user := `{"role":"user","content":"hi"}`
	msgs := func(m ...string) string { return `"messages":[` + strings.Join(m, ",") + `]` }
	body := func(fields ...string) string { return "{" + strings.Join(fields, ",") + "}" }
	model := `"model":"mock/echo"`
	tool := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`
	result := `{"role":"tool","tool_call_id":"call_1","content":"sunny"}`

	cases := []struct {
		name   string
		body   string
		status int
		param  string
		code   string
	}{
		// model
		{"model missing", body(msgs(user)), 400, "model", ""},
		{"model unknown", body(`"model":"nope"`, msgs(user)), 404, "model", "model_not_found"},
		{"model wrong type", body(`"model":7`, msgs(user)), 400, "model", ""},
		// messages
		{"messages missing", body(model), 400, "messages", ""},
		{"messages empty", body(model, `"messages":[]`), 400, "messages", ""},
		{"messages not an array", body(model, `"messages":"hi"`), 400, "messages", ""},
		{"all five roles", body(model, msgs(`{"role":"system","content":"s"}`, `{"role":"developer","content":"d"}`, user, call, result)), 200, "", ""},
		{"unknown role", body(model, msgs(`{"role":"robot","content":"x"}`)), 400, "messages[0].role", ""},
		{"function role", body(model, msgs(`{"role":"function","name":"f","content":"x"}`)), 400, "messages[0].name", ""},
		{"content parts refused", body(model, msgs(`{"role":"user","content":[{"type":"text","text":"hi"}]}`)), 400, "messages[0].content", "unsupported_parameter"},
		{"image part refused", body(model, msgs(user, `{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}`)), 400, "messages[1].content", "unsupported_parameter"},
		{"user content required", body(model, msgs(`{"role":"user","content":null}`)), 400, "messages[0].content", ""},
		{"assistant null content without tool_calls", body(model, msgs(user, `{"role":"assistant","content":null}`)), 400, "messages[1].content", ""},
		{"tool without tool_call_id", body(model, msgs(user, call, `{"role":"tool","content":"x"}`)), 400, "messages[2].tool_call_id", ""},
		{"tool answering no call", body(model, msgs(user, `{"role":"tool","tool_call_id":"call_9","content":"x"}`)), 400, "messages[1].tool_call_id", ""},
		{"tool call left unanswered", body(model, msgs(user, call, user)), 400, "messages[1].tool_calls", ""},
		{"tool_calls on a user message", body(model, msgs(`{"role":"user","content":"x","tool_calls":[]}`)), 200, "", ""},
		{"message name refused", body(model, msgs(`{"role":"user","content":"x","name":"bob"}`)), 400, "messages[0].name", "unsupported_parameter"},
		{"echoed null refusal accepted", body(model, msgs(user, `{"role":"assistant","content":"x","refusal":null,"annotations":[]}`, user)), 200, "", ""},
		{"echoed refusal text refused", body(model, msgs(user, `{"role":"assistant","content":"x","refusal":"no"}`, user)), 400, "messages[1].refusal", "unsupported_parameter"},
		// max_completion_tokens
		{"priced model requires max_completion_tokens", body(`"model":"priced"`, msgs(user)), 400, "max_completion_tokens", ""},
		{"priced model within ceiling", body(`"model":"priced"`, `"max_completion_tokens":100`, msgs(user)), 200, "", ""},
		{"above max_output_tokens", body(`"model":"priced"`, `"max_completion_tokens":101`, msgs(user)), 400, "max_completion_tokens", ""},
		{"unpriced model above ceiling", body(`"model":"capped"`, `"max_completion_tokens":51`, msgs(user)), 400, "max_completion_tokens", ""},
		{"unpriced model without max", body(`"model":"capped"`, msgs(user)), 200, "", ""},
		{"max_completion_tokens zero", body(model, `"max_completion_tokens":0`, msgs(user)), 400, "max_completion_tokens", ""},
		{"max_completion_tokens fractional", body(model, `"max_completion_tokens":1.5`, msgs(user)), 400, "max_completion_tokens", ""},
		{"legacy max_tokens refused", body(model, `"max_tokens":10`, msgs(user)), 400, "max_tokens", "unsupported_parameter"},
		// temperature
		{"temperature accepted", body(model, `"temperature":0.7`, msgs(user)), 200, "", ""},
		{"temperature above 2", body(model, `"temperature":2.5`, msgs(user)), 400, "temperature", ""},
		{"temperature negative", body(model, `"temperature":-0.1`, msgs(user)), 400, "temperature", ""},
		{"temperature wrong type", body(model, `"temperature":"hot"`, msgs(user)), 400, "temperature", ""},
		// stream
		{"stream_options without stream", body(model, `"stream_options":{"include_usage":true}`, msgs(user)), 400, "stream_options", ""},
		{"unknown stream option", body(model, `"stream":true,"stream_options":{"include_obfuscation":true}`, msgs(user)), 400, "stream_options.include_obfuscation", ""},
		// tools
		{"function tool accepted", body(model, `"tools":[`+tool+`]`, `"tool_choice":"auto"`, msgs(user)), 200, "", ""},
		{"named tool_choice accepted", body(model, `"tools":[`+tool+`]`, `"tool_choice":{"type":"function","function":{"name":"get_weather"}}`, msgs(user)), 200, "", ""},
		{"non-function tool refused", body(model, `"tools":[{"type":"web_search"}]`, msgs(user)), 400, "tools[0].type", ""},
		{"tool_choice names unknown tool", body(model, `"tools":[`+tool+`]`, `"tool_choice":{"type":"function","function":{"name":"other"}}`, msgs(user)), 400, "tool_choice.function.name", ""},
		{"tool_choice bad string", body(model, `"tools":[`+tool+`]`, `"tool_choice":"sometimes"`, msgs(user)), 400, "tool_choice", ""},
		{"tool_choice without tools", body(model, `"tool_choice":"required"`, msgs(user)), 400, "tool_choice", ""},
		{"tool name invalid", body(model, `"tools":[{"type":"function","function":{"name":"get weather"}}]`, msgs(user)), 400, "tools[0].function.name", ""},
		{"tool parameters not an object", body(model, `"tools":[{"type":"function","function":{"name":"f","parameters":[1]}}]`, msgs(user)), 400, "tools[0].function.parameters", ""},
		{"unknown tool field", body(model, `"tools":[{"type":"function","function":{"name":"f"},"cache":true}]`, msgs(user)), 400, "tools[0].cache", ""},
		// n
		{"n is 1", body(model, `"n":1`, msgs(user)), 200, "", ""},
		{"n above 1", body(model, `"n":2`, msgs(user)), 400, "n", "unsupported_parameter"},
		// user, metadata
		{"user and metadata accepted", body(model, `"user":"u-1"`, `"metadata":{"team":"search"}`, msgs(user)), 200, "", ""},
		{"metadata too many pairs", body(model, `"metadata":{`+pairs(17)+`}`, msgs(user)), 400, "metadata", ""},
		{"metadata key too long", body(model, `"metadata":{"`+strings.Repeat("k", 65)+`":"v"}`, msgs(user)), 400, "metadata", ""},
		{"metadata value too long", body(model, `"metadata":{"k":"`+strings.Repeat("v", 513)+`"}`, msgs(user)), 400, "metadata.k", ""},
		{"metadata value not a string", body(model, `"metadata":{"k":1}`, msgs(user)), 400, "metadata.k", ""},
		// every other field
		{"response_format", body(model, `"response_format":{"type":"json_object"}`, msgs(user)), 400, "response_format", "unsupported_parameter"},
		{"reasoning_effort", body(model, `"reasoning_effort":"low"`, msgs(user)), 400, "reasoning_effort", "unsupported_parameter"},
		{"logprobs", body(model, `"logprobs":true`, msgs(user)), 400, "logprobs", "unsupported_parameter"},
		{"seed", body(model, `"seed":7`, msgs(user)), 400, "seed", "unsupported_parameter"},
		{"top_p", body(model, `"top_p":0.9`, msgs(user)), 400, "top_p", "unsupported_parameter"},
		{"stop", body(model, `"stop":["\n"]`, msgs(user)), 400, "stop", "unsupported_parameter"},
		{"parallel_tool_calls", body(model, `"parallel_tool_calls":false`, msgs(user)), 400, "parallel_tool_calls", "unsupported_parameter"},
		{"refused even when null", body(model, `"seed":null`, msgs(user)), 400, "seed", "unsupported_parameter"},
		{"unknown field", body(model, `"temprature":0.2`, msgs(user)), 400, "temprature", "unknown_parameter"},
		// keys as a proxy in front reads them
		{"key differing from a field by case", body(`"MODEL":"mock/echo"`, msgs(user)), 400, "MODEL", "unknown_parameter"},
		{"nested key differing by case", body(model, msgs(`{"role":"user","Content":"hi"}`)), 400, "messages[0].Content", "unknown_parameter"},
		{"repeated key", body(model, `"model":"priced"`, msgs(user)), 400, "model", "duplicate_parameter"},
		{"repeated key in a tool schema", body(model, `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","type":"string"}}}]`, msgs(user)), 400, "tools[0].function.parameters.type", "duplicate_parameter"},
		// malformed input
		{"malformed JSON", `{"model":"mock/echo",`, 400, "", ""},
		{"not an object", `[1,2]`, 400, "", ""},
		{"empty body", ``, 400, "", ""},
		{"trailing data", body(model, msgs(user)) + ` {}`, 400, "", ""},
		{"oversize body", body(model, msgs(`{"role":"user","content":"`+strings.Repeat("x", 5000)+`"}`)), 413, "", "request_too_large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := g.Chat(t, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if tc.status == http.StatusOK {
				return
			}
			e := r.ErrorObject(t)
			if got, _ := e["param"].(string); got != tc.param {
				t.Errorf("param %q, want %q (%s)", got, tc.param, e["message"])
			}
			if tc.code != "" && e["code"] != tc.code {
				t.Errorf("code %v, want %q", e["code"], tc.code)
			}
			if msg, _ := e["message"].(string); msg == "" {
				t.Error("empty error message")
			}
			wantType := "invalid_request_error"
			if tc.status == 404 {
				wantType = "not_found_error"
			}
			if e["type"] != wantType {
				t.Errorf("type %v, want %s", e["type"], wantType)
			}
		})
	}
}

func pairs(n int) string {
	var p []string
	for i := range n {
		p = append(p, fmt.Sprintf(`"k%d":"v"`, i))
	}
	return strings.Join(p, ",")
}

// TestLabelsNeverReachProvider: user and metadata are log labels only.
func TestLabelsNeverReachProvider(t *testing.T) {
	fake := openaifake.New()
	defer fake.Close()
	g := newGateway(t, fmt.Sprintf(rulesConfig, fake.BaseURL()))
	r := g.Chat(t, `{"model":"upstream","user":"end-user-7","metadata":{"team":"search"},"messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests", len(reqs))
	}
	for _, f := range []string{"user", "metadata"} {
		if _, ok := reqs[0].Body[f]; ok {
			t.Errorf("%s was sent upstream: %s", f, reqs[0].Raw)
		}
	}
	lines := g.logs.Lines(t, "request")
	labels, _ := lines[len(lines)-1]["labels"].(map[string]any)
	if labels["user"] != "end-user-7" || labels["metadata.team"] != "search" {
		t.Errorf("labels not logged: %v", lines[len(lines)-1])
	}
}

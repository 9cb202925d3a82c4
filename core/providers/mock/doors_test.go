package mock_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// The tool as an MCP client would offer a gateway's gh__echo: under a prefix of its own.
const doorsConfig = `
keys:
  - {name: app, value: gw-key-for-mock-doors}
connections:
  mock: {kind: mock}
models:
  echo-tool: {routes: [{connection: mock, model: 'tool:gh__echo:{"text":"hi"}'}]}
`

// TestNamedToolOnEveryDoor: through each door the tool:NAME model calls the prefixed tool
// with its arguments, and answers the tool's result with its text, whole and streamed.
func TestNamedToolOnEveryDoor(t *testing.T) {
	srv, _ := gatewaytest.ServeLogged(t, doorsConfig, mock.Register)
	auth := []string{"Authorization", "Bearer gw-key-for-mock-doors", "anthropic-version", "2023-06-01"}
	cases := []struct {
		door string
		path string
		// call is the first turn, result the second (after the tool ran); %s is the stream
		// setting.
		call, result string
	}{
		{"chat", "/v1/chat/completions",
			`{"model":"echo-tool","stream":%s,"messages":[{"role":"user","content":"go"}],
			  "tools":[{"type":"function","function":{"name":"mcp__fngate__gh__echo","parameters":{"type":"object"}}}]}`,
			`{"model":"echo-tool","stream":%s,"messages":[{"role":"user","content":"go"},
			  {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"mcp__fngate__gh__echo","arguments":"{\"text\":\"hi\"}"}}]},
			  {"role":"tool","tool_call_id":"c1","content":"UPSTREAM-SAYS-HI"}],
			  "tools":[{"type":"function","function":{"name":"mcp__fngate__gh__echo","parameters":{"type":"object"}}}]}`},
		{"messages", "/v1/messages",
			`{"model":"echo-tool","stream":%s,"max_tokens":100,"messages":[{"role":"user","content":"go"}],
			  "tools":[{"name":"mcp__fngate__gh__echo","input_schema":{"type":"object"}}]}`,
			`{"model":"echo-tool","stream":%s,"max_tokens":100,"messages":[{"role":"user","content":"go"},
			  {"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"mcp__fngate__gh__echo","input":{"text":"hi"}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"UPSTREAM-SAYS-HI"}]}]}],
			  "tools":[{"name":"mcp__fngate__gh__echo","input_schema":{"type":"object"}}]}`},
		{"responses", "/v1/responses",
			`{"model":"echo-tool","stream":%s,"input":"go","tools":[{"type":"function","name":"mcp__fngate__gh__echo","parameters":{"type":"object"}}]}`,
			`{"model":"echo-tool","stream":%s,"input":[{"role":"user","content":"go"},
			  {"type":"function_call","call_id":"c1","name":"mcp__fngate__gh__echo","arguments":"{\"text\":\"hi\"}"},
			  {"type":"function_call_output","call_id":"c1","output":"UPSTREAM-SAYS-HI"}],
			  "tools":[{"type":"function","name":"mcp__fngate__gh__echo","parameters":{"type":"object"}}]}`},
	}
	for _, tc := range cases {
		for _, stream := range []string{"false", "true"} {
			t.Run(tc.door+"/stream="+stream, func(t *testing.T) {
				r := srv.Do(t, http.MethodPost, tc.path, strings.Replace(tc.call, "%s", stream, 1), auth...)
				said := strings.Join(strings.Fields(strings.Join(answered(r.Body), " ")), " ")
				if r.Status != 200 || !strings.Contains(said, "mcp__fngate__gh__echo") || !strings.Contains(said, `{"text":"hi"}`) {
					t.Fatalf("call: %d %q\n%s", r.Status, said, r.Body)
				}
				r = srv.Do(t, http.MethodPost, tc.path, strings.Replace(tc.result, "%s", stream, 1), auth...)
				said = strings.Join(answered(r.Body), "")
				if r.Status != 200 || !strings.Contains(said, "The tool returned: UPSTREAM-SAYS-HI") {
					t.Fatalf("after the result: %d %q\n%s", r.Status, said, r.Body)
				}
			})
		}
	}
}

// answered is what an answer says, whole or streamed, on any door: its text, tool names and
// arguments (Messages' input object as JSON) in order, a stream's deltas joined. A stream's
// last events repeat the whole answer, which only makes it said twice.
func answered(body []byte) []string {
	var docs [][]byte
	if strings.HasPrefix(strings.TrimSpace(string(body)), "{") {
		docs = append(docs, body)
	} else {
		for _, line := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				docs = append(docs, []byte(d))
			}
		}
	}
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case string:
			switch key {
			case "content", "text", "delta", "partial_json", "arguments", "name":
				out = append(out, v)
			}
		case map[string]any:
			if key == "input" {
				b, _ := json.Marshal(v)
				out = append(out, string(b))
				return
			}
			for _, k := range []string{"name", "input", "arguments", "text", "delta", "partial_json", "content",
				"choices", "message", "tool_calls", "function", "content_block", "output", "item", "response"} {
				if e, ok := v[k]; ok {
					walk(k, e)
				}
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		}
	}
	for _, d := range docs {
		var v any
		if json.Unmarshal(d, &v) == nil {
			walk("", v)
		}
	}
	return out
}

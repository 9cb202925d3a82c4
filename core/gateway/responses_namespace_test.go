package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/openaifake"
)

// Codex 0.171 offers each MCP server's tools as one namespace tool and gives its calls back
// with their namespace; the tools are the ones of the mcp__fngate namespace Codex makes of
// a server it calls fngate.
const (
	namespaceTools = `[{"type":"function","name":"exec_command","parameters":{"type":"object"}},
		{"type":"namespace","name":"mcp__fngate","description":"Tools in the mcp__fngate namespace.",
		 "tools":[{"type":"function","name":"gh__echo","strict":false,"parameters":{"type":"object","properties":{"text":{"type":"string"}}}}]}]`
	namespaceCall = `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"gh__echo","namespace":"mcp__fngate","arguments":"{\"text\":\"hi\"}","status":"completed"}`
)

// outputItems are the output items of a Responses answer, whole or streamed (the items of
// its output_item.done events).
func outputItems(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	if !strings.HasPrefix(string(body), "event:") {
		var r struct {
			Output []map[string]any `json:"output"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return r.Output
	}
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type string         `json:"type"`
			Item map[string]any `json:"item"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "response.output_item.done" {
			out = append(out, ev.Item)
		}
	}
	return out
}

// TestResponsesNamespaceToolsOnATranslatedRoute: a route other than OpenAI's is offered a
// namespace's functions flattened (the mock's tool:gh__echo finds mcp__fngate__gh__echo),
// its call comes back as {namespace, name}, and the call given back with its namespace, in
// the input or from the stored response, is the flattened one again, whose result the mock
// answers with.
func TestResponsesNamespaceToolsOnATranslatedRoute(t *testing.T) {
	g := newGateway(t, fmt.Sprintf(`
keys:
  - {name: app, value: %s}
connections:
  mock: {kind: mock}
models:
  mcp-echo: {routes: [{connection: mock, model: 'tool:gh__echo:{"text":"hi"}'}]}
`, responsesKey), withStore)
	auth := []string{"Authorization", "Bearer " + responsesKey}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			r := g.Do(t, http.MethodPost, "/v1/responses", fmt.Sprintf(`{"model":"mcp-echo","stream":%v,"input":"echo hi","tools":%s}`,
				stream, namespaceTools), auth...)
			items := outputItems(t, r.Body)
			if r.Status != 200 || len(items) != 1 || items[0]["type"] != "function_call" || items[0]["name"] != "gh__echo" ||
				items[0]["namespace"] != "mcp__fngate" || items[0]["arguments"] != `{"text":"hi"}` {
				t.Fatalf("%d %v\n%s", r.Status, items, r.Body)
			}
			var id string
			if stream {
				_, after, _ := strings.Cut(string(r.Body), `"type":"response.completed","sequence_number":`)
				_, after, _ = strings.Cut(after, `"id":"`)
				id, _, _ = strings.Cut(after, `"`)
			} else {
				id = r.JSON(t)["id"].(string)
			}

			for _, tc := range []struct {
				name, input string
			}{
				{"in the input", `"input":[{"role":"user","content":"echo hi"},` + namespaceCall +
					`,{"type":"function_call_output","call_id":"call_1","output":"UPSTREAM hi"}]`},
				{"from the stored response", `"previous_response_id":"` + id +
					`","input":[{"type":"function_call_output","call_id":"` + items[0]["call_id"].(string) + `","output":"UPSTREAM hi"}]`},
			} {
				r := g.Do(t, http.MethodPost, "/v1/responses", fmt.Sprintf(`{"model":"mcp-echo","stream":%v,%s,"tools":%s}`,
					stream, tc.input, namespaceTools), auth...)
				items := outputItems(t, r.Body)
				if r.Status != 200 || len(items) != 1 || items[0]["type"] != "message" || !strings.Contains(string(r.Body), "UPSTREAM hi") {
					t.Errorf("the call %s: %d %v\n%s", tc.name, r.Status, items, r.Body)
				}
			}
		})
	}
}

// TestResponsesNamespaceToolsOnTheNativeRoute: OpenAI is sent the namespace tool and the
// call's namespace as the client wrote them, and its call passes through as it made it.
func TestResponsesNamespaceToolsOnTheNativeRoute(t *testing.T) {
	up := openaifake.New()
	defer up.Close()
	up.Default = openaifake.Reply{Text: "native"}
	g := newGateway(t, fmt.Sprintf(`
keys:
  - {name: app, value: %s}
connections:
  oai: {kind: openai, api_key: sk-up-native-0123456789, base_url: %s}
models:
  native: {routes: [{connection: oai, model: gpt-fake}]}
`, responsesKey, up.BaseURL()))
	r := g.Do(t, http.MethodPost, "/v1/responses", `{"model":"native","input":[{"role":"user","content":"echo hi"},`+namespaceCall+
		`,{"type":"function_call_output","call_id":"call_1","output":"UPSTREAM hi"}],"tools":`+namespaceTools+`}`,
		"Authorization", "Bearer "+responsesKey)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	reqs := up.Requests()
	sent := reqs[len(reqs)-1]
	tools, _ := json.Marshal(sent.Body["tools"])
	if !openaifake.JSONEqual(string(tools), namespaceTools) {
		t.Errorf("tools sent as\n%s\nnot as the client wrote them\n%s", tools, namespaceTools)
	}
	in, _ := sent.Body["input"].([]any)
	if len(in) != 3 {
		t.Fatalf("input %s", sent.Raw)
	}
	call, _ := json.Marshal(in[1])
	if !openaifake.JSONEqual(string(call), namespaceCall) {
		t.Errorf("the call sent as %s, not as the client wrote it", call)
	}
}

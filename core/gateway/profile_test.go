package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// profileGateway serves three keys, one per way of reading a request, over the mock and two
// OpenAI-wire fakes: one that carries participant names (openai) and one that cannot
// (openai-compatible).
func profileGateway(t *testing.T) (*testGateway, *openaifake.Server, *openaifake.Server) {
	t.Helper()
	named, generic := openaifake.New(), openaifake.New()
	t.Cleanup(named.Close)
	t.Cleanup(generic.Close)
	named.Script, generic.Script = openaifake.Model, openaifake.Model
	g := newGateway(t, `
keys:
  - {name: strict-app, value: sk-strict-0123456789}
  - {name: sdk-app, value: sk-extended-0123456789, request_profile: extended}
  - {name: agent-app, value: sk-ignore-0123456789, request_profile: extended, request_profile_ignore: [messages.name]}
connections:
  mock: {kind: mock}
  named: {kind: openai, api_key: sk-up-named-0123456789, base_url: "`+named.BaseURL()+`"}
  generic: {kind: openai-compatible, base_url: "`+generic.BaseURL()+`"}
models:
  echo: {routes: [{connection: mock, model: echo}]}
  lorem: {routes: [{connection: mock, model: lorem}]}
  named: {routes: [{connection: named, model: gpt-x}]}
  generic: {routes: [{connection: generic, model: local}]}
`)
	return g, named, generic
}

const (
	strictKey   = "sk-strict-0123456789"
	extendedKey = "sk-extended-0123456789"
	ignoreKey   = "sk-ignore-0123456789"
)

func bearer(key string) []string { return []string{"Authorization", "Bearer " + key} }

// TestProfileIsTheKeys: one body, three keys: the strict key's request is refused naming the
// field (as before the profile existed), the extended keys' are served.
func TestProfileIsTheKeys(t *testing.T) {
	g, _, _ := profileGateway(t)
	for _, tc := range []struct{ field, body string }{
		{"max_tokens", `"max_tokens":3`},
		{"top_p", `"top_p":0.9`},
		{"stop", `"stop":["x"]`},
		{"seed", `"seed":7`},
		{"presence_penalty", `"presence_penalty":0.1`},
		{"frequency_penalty", `"frequency_penalty":0.1`},
		{"response_format", `"response_format":{"type":"json_object"}`},
		{"parallel_tool_calls", `"parallel_tool_calls":true,"tools":[{"type":"function","function":{"name":"f"}}]`},
		{"messages[0].name", `"x":0`},
		{"messages[0].content", `"y":0`},
	} {
		t.Run(tc.field, func(t *testing.T) {
			msg := `{"role":"user","content":"hello there"}`
			body := tc.body
			switch tc.field {
			case "messages[0].name":
				msg, body = `{"role":"user","content":"hello there","name":"ann"}`, ""
			case "messages[0].content":
				msg, body = `{"role":"user","content":[{"type":"text","text":"hello there"}]}`, ""
			}
			full := `{"model":"echo","messages":[` + msg + `]`
			if body != "" {
				full += "," + body
			}
			full += "}"
			r := g.Chat(t, full, bearer(strictKey)...)
			if e := r.ErrorObject(t); r.Status != 400 || e["param"] != tc.field {
				t.Errorf("strict: %d %s", r.Status, r.Body)
			}
			if r := g.Chat(t, full, bearer(extendedKey)...); r.Status != 200 {
				t.Errorf("extended: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestExtendedOnTheMock: the mock honours the output settings, whole and streamed. Under
// json_object a message that is a JSON object comes back as sent; other text is wrapped.
func TestExtendedOnTheMock(t *testing.T) {
	g, _, _ := profileGateway(t)
	schema := `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"],"additionalProperties":false}`
	const object = `{\"city\": \"Paris\", \"days\": [1, 2]}`
	for _, tc := range []struct {
		name, body, content, finish string
		said                        string // the user's message as JSON string content; "" is one two three four
	}{
		{"max_tokens caps words", `"model":"lorem","max_tokens":3`, "Lorem ipsum dolor", "length", ""},
		{"stop cuts", `"model":"echo","stop":"three"`, "one two ", "stop", ""},
		{"first stop wins", `"model":"echo","stop":["four","two"]`, "one ", "stop", ""},
		{"json_schema", `"model":"echo","response_format":{"type":"json_schema","json_schema":{"name":"trip","schema":` + schema + `,"strict":true}}`, `{"city":"one two three four","days":1}`, "stop", ""},
		{"json_object wraps text", `"model":"echo","response_format":{"type":"json_object"}`, `{"text":"one two three four"}`, "stop", ""},
		{"json_object echoes a JSON object", `"model":"echo","response_format":{"type":"json_object"}`, `{"city": "Paris", "days": [1, 2]}`, "stop", object},
		{"seed and penalties", `"model":"echo","seed":1,"presence_penalty":1,"frequency_penalty":-1,"top_p":0.1`, "one two three four", "stop", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			said := tc.said
			if said == "" {
				said = "one two three four"
			}
			body := `{` + tc.body + `,"messages":[{"role":"user","content":"` + said + `"}]}`
			r := g.Chat(t, body, bearer(extendedKey)...)
			var got struct {
				Choices []struct {
					Message      struct{ Content string }
					FinishReason string `json:"finish_reason"`
				}
			}
			if r.Status != 200 || json.Unmarshal(r.Body, &got) != nil || len(got.Choices) != 1 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if c := got.Choices[0]; c.Message.Content != tc.content || c.FinishReason != tc.finish {
				t.Errorf("got %q (%s), want %q (%s)", c.Message.Content, c.FinishReason, tc.content, tc.finish)
			}
			streamed := g.Chat(t, strings.Replace(body, `{`, `{"stream":true,`, 1), bearer(extendedKey)...)
			text, finish := "", ""
			for _, d := range gatewaytest.SSEData(t, streamed.Body) {
				if d == "[DONE]" {
					continue
				}
				var c struct {
					Choices []struct {
						Delta        struct{ Content string }
						FinishReason string `json:"finish_reason"`
					}
				}
				_ = json.Unmarshal([]byte(d), &c)
				for _, ch := range c.Choices {
					text += ch.Delta.Content
					if ch.FinishReason != "" {
						finish = ch.FinishReason
					}
				}
			}
			if text != tc.content || finish != tc.finish {
				t.Errorf("streamed %q (%s), want %q (%s)", text, finish, tc.content, tc.finish)
			}
		})
	}
}

// TestParticipantNames: names reach OpenAI; a route that cannot carry them refuses (400
// naming the message's name) unless the key's request_profile_ignore lists messages.name,
// when they are left out; a tool message's name is dropped everywhere.
func TestParticipantNames(t *testing.T) {
	g, named, generic := profileGateway(t)
	body := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"system","content":"s","name":"rules"},{"role":"user","content":"hi","name":"ann"},` +
			`{"role":"assistant","content":null,"name":"bot","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","name":"f","content":"ok"}],"tools":[{"type":"function","function":{"name":"f"}}]}`
	}
	if r := g.Chat(t, body("named"), bearer(extendedKey)...); r.Status != 200 {
		t.Fatalf("openai: %d %s", r.Status, r.Body)
	}
	sent := string(named.Requests()[0].Raw)
	for _, want := range []string{`{"role":"system","name":"rules",`, `{"role":"user","name":"ann",`, `{"role":"assistant","name":"bot",`, `{"role":"tool","content":"ok","tool_call_id":"c1"}`} {
		if !strings.Contains(sent, want) {
			t.Errorf("OpenAI got %s\nwant it to hold %s", sent, want)
		}
	}
	r := g.Chat(t, body("generic"), bearer(extendedKey)...)
	if e := r.ErrorObject(t); r.Status != 400 || e["param"] != "messages[0].name" || !strings.Contains(e["message"].(string), "request_profile_ignore") {
		t.Errorf("generic: %d %s", r.Status, r.Body)
	}
	if len(generic.Requests()) != 0 {
		t.Error("the refused request reached the server")
	}
	if r := g.Chat(t, body("generic"), bearer(ignoreKey)...); r.Status != 200 {
		t.Fatalf("generic, names ignored: %d %s", r.Status, r.Body)
	}
	if sent := string(generic.Requests()[0].Raw); strings.Contains(sent, `"name":"ann"`) || strings.Contains(sent, `"name":"rules"`) {
		t.Errorf("names reached a server that cannot carry them: %s", sent)
	}
}

// TestOpenGatewayProfile: with no keys, the top-level request_profile applies.
func TestOpenGatewayProfile(t *testing.T) {
	g := newGateway(t, `
request_profile: extended
connections: {mock: {kind: mock}}
models: {echo: {routes: [{connection: mock, model: echo}]}}
`)
	if r := g.Chat(t, `{"model":"echo","messages":[{"role":"user","content":"a b"}],"max_tokens":1,"seed":3}`); r.Status != 200 || !strings.Contains(string(r.Body), `"content":"a"`) {
		t.Errorf("%d %s", r.Status, r.Body)
	}
	r := g.Do(t, "POST", "/v1/completions", `{"model":"echo","prompt":"a b c","stop":" b","top_p":1}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"text":"a"`) {
		t.Errorf("completions: %d %s", r.Status, r.Body)
	}
}

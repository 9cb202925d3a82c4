package vertex

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/vertexfake"
)

// TestExtendedFields: what each Vertex AI family does with each extended-profile field:
// honoured ("") or refused naming the field.
func TestExtendedFields(t *testing.T) {
	p := &Provider{project: vertexfake.Project, location: vertexfake.Location}
	schema := `{"name":"r","schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`
	fields := map[string]string{
		"seed":           `"seed":7`,
		"big seed":       `"seed":4294967296`,
		"penalties":      `"presence_penalty":0.5,"frequency_penalty":0.5`,
		"json_object":    `"response_format":{"type":"json_object"}`,
		"json_schema":    `"response_format":{"type":"json_schema","json_schema":` + schema + `}}`,
		"strict schema":  `"response_format":{"type":"json_schema","json_schema":` + schema + `,"strict":true}}`,
		"name":           `"messages":[{"role":"user","content":"hi","name":"ann"}]`,
		"parallel false": `"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false`,
		"top_p and stop": `"top_p":0.5,"stop":["x"],"max_tokens":5`,
		"https image":    `"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x.example/a.png"}}]}]`,
	}
	cases := []struct{ model, field, param string }{
		{"gemini-2.5-flash", "seed", ""},
		{"gemini-2.5-flash", "big seed", "seed"},
		{"gemini-2.5-flash", "penalties", ""},
		{"gemini-2.5-flash", "json_object", ""},
		{"gemini-2.5-flash", "json_schema", ""},
		{"gemini-2.5-flash", "strict schema", ""},
		{"gemini-2.0-flash-001", "json_schema", "response_format"},
		{"gemini-2.0-flash-001", "json_object", ""},
		{"gemini-2.5-flash", "name", "messages[0].name"},
		{"gemini-2.5-flash", "parallel false", "parallel_tool_calls"},
		{"gemini-2.5-flash", "top_p and stop", ""},
		{"gemini-2.5-flash", "https image", "messages[0].content[0]"},
		{"claude-sonnet-4-5@20250929", "seed", "seed"},
		{"claude-sonnet-4-5@20250929", "penalties", "presence_penalty"},
		{"claude-sonnet-4-5@20250929", "json_schema", ""},
		{"claude-sonnet-4-5@20250929", "strict schema", "response_format.json_schema.strict"},
		{"claude-sonnet-4-5@20250929", "name", "messages[0].name"},
		{"claude-sonnet-4-5@20250929", "parallel false", ""},
		{"claude-sonnet-4-5@20250929", "https image", ""},
		{"meta/llama-3.3-70b-instruct-maas", "seed", ""},
		{"meta/llama-3.3-70b-instruct-maas", "penalties", ""},
		{"meta/llama-3.3-70b-instruct-maas", "strict schema", ""},
		{"meta/llama-3.3-70b-instruct-maas", "name", "messages[0].name"},
		{"meta/llama-3.3-70b-instruct-maas", "parallel false", "parallel_tool_calls"},
	}
	for _, tc := range cases {
		t.Run(tc.model+" "+tc.field, func(t *testing.T) {
			f := fields[tc.field]
			body := `{"model":"gw",` + f
			if !strings.Contains(f, `"messages"`) {
				body += `,"messages":[{"role":"user","content":"hi"}]`
			}
			req, _, oe := openai.DecodeChatProfile([]byte(body+"}"), llm.Limits{}, openai.Profile{Extended: true})
			if oe != nil {
				t.Fatal(oe)
			}
			oe = p.Check(req, providers.Target{Model: tc.model})
			switch {
			case tc.param == "" && oe != nil:
				t.Errorf("refused: %v", oe)
			case tc.param != "" && (oe == nil || oe.Param != tc.param):
				t.Errorf("got %v, want a refusal naming %s", oe, tc.param)
			}
		})
	}
}

// TestMaaSExtendedBody: partner models get seed, the penalties and response_format in the
// OpenAI body, and no participant name when the operator lets routes leave them out.
func TestMaaSExtendedBody(t *testing.T) {
	body := `{"model":"gw","messages":[{"role":"user","content":"hi","name":"ann"}],"seed":7,"presence_penalty":0.5,"frequency_penalty":-0.5,` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"},"strict":true}}}`
	req, _, oe := openai.DecodeChatProfile([]byte(body), llm.Limits{}, openai.Profile{Extended: true, NamesOptional: true})
	if oe != nil {
		t.Fatal(oe)
	}
	target := providers.Target{Model: "meta/llama-3.3-70b-instruct-maas"}
	if oe := (&Provider{}).Check(req, target); oe != nil {
		t.Fatal(oe)
	}
	got := string(maasBody(req, target, false))
	for _, want := range []string{`"seed":7`, `"presence_penalty":0.5`, `"frequency_penalty":-0.5`,
		`"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"},"strict":true}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("%s\nlacks %s", got, want)
		}
	}
	if strings.Contains(got, `"ann"`) {
		t.Errorf("the name was sent: %s", got)
	}
}

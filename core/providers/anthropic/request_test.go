package anthropic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/golden"
)

type requestCase struct {
	Target struct {
		Model           string `json:"model"`
		MaxOutputTokens int    `json:"max_output_tokens"`
	} `json:"target"`
	Options struct {
		Stream           bool   `json:"stream"`
		OmitModel        bool   `json:"omit_model"`
		AnthropicVersion string `json:"anthropic_version"`
	} `json:"options"`
	Request json.RawMessage `json:"request"`
}

// TestRequestGolden translates each OpenAI request in testdata/request and compares the
// Messages body with its golden file. Every body must also pass the fake's copy of the API's
// validation, so a golden file cannot enshrine a body Anthropic would refuse.
func TestRequestGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "request", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "request", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var c requestCase
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			req, oe := openai.DecodeChatRequest(c.Request, llm.Limits{})
			if oe != nil {
				t.Fatalf("the case's request is not a valid OpenAI request: %v", oe)
			}
			target := providers.Target{Model: c.Target.Model, MaxOutputTokens: c.Target.MaxOutputTokens}
			opt := RequestOptions{Stream: c.Options.Stream, OmitModel: c.Options.OmitModel, AnthropicVersion: c.Options.AnthropicVersion}
			if oe := Check(req, Model{}); oe != nil {
				t.Fatalf("Check refused: %v", oe)
			}
			body := BuildRequest(req, target, opt)
			if !json.Valid(body) {
				t.Fatalf("invalid JSON: %s", body)
			}
			dialect := anthropicfake.Direct
			if opt.OmitModel {
				dialect = anthropicfake.Vertex
			}
			if e := anthropicfake.ValidateBody(body, dialect); e != nil {
				t.Errorf("the API would refuse the body: %v\n%s", e, body)
			}
			golden.CheckIndented(t, filepath.Join("testdata", "request", name+".golden.json"), body)
		})
	}
}

func chat(t *testing.T, body string) *llm.Request {
	t.Helper()
	req, oe := openai.DecodeChatRequest([]byte(body), llm.Limits{})
	if oe != nil {
		t.Fatalf("not a valid OpenAI request: %v\n%s", oe, body)
	}
	return req
}

// TestCheckRefuses covers the refusals made before any I/O: each is a 400 naming the param,
// and BuildRequest refuses the same.
func TestCheckRefuses(t *testing.T) {
	tests := []struct {
		name, body, param string
	}{
		{"system after the conversation began", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"system","content":"late"}]}`, "messages"},
		{"developer after an assistant turn", `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"developer","content":"late"},{"role":"user","content":"x"}]}`, "messages"},
		{"temperature above 1", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":1.2}`, "temperature"},
		{"strict tool", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object"}}}]}`, "tools[1].function.strict"},
		{"tool schema not an object", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"string"}}}]}`, "tools[0].function.parameters"},
		{"tool call arguments an array", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"[1,2]"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "messages[1].tool_calls[0].function.arguments"},
		{"tool call arguments not JSON", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "messages[1].tool_calls[0].function.arguments"},
		{"tool call arguments a string", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"\"x\""}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "messages[1].tool_calls[0].function.arguments"},
		{"empty user message", `{"model":"m","messages":[{"role":"user","content":""}]}`, "messages[0].content"},
		{"empty assistant message", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":""},{"role":"user","content":"b"}]}`, "messages[1].content"},
		{"only system instructions", `{"model":"m","messages":[{"role":"system","content":"s"}]}`, "messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := chat(t, tt.body)
			p := &Provider{}
			oe := p.Check(req, providers.Target{Model: "claude"})
			if oe == nil {
				t.Fatal("Check accepted the request")
			}
			if oe.Status != 400 || oe.Param != tt.param || oe.Type != llm.TypeInvalidRequest {
				t.Errorf("got %d %s param %q (%s), want 400 invalid_request_error param %q", oe.Status, oe.Type, oe.Param, oe.Message, tt.param)
			}
		})
	}
}

// TestCheckAccepts guards the other side of each refusal: what sits at the edge is allowed.
func TestCheckAccepts(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"system","content":"a"},{"role":"developer","content":"b"},{"role":"user","content":"hi"}],"temperature":1}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","strict":false}}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":" {\"a\": [1]} "}}]},{"role":"tool","tool_call_id":"c1","content":""}]}`,
	} {
		if oe := Check(chat(t, body), Model{}); oe != nil {
			t.Errorf("refused %s: %v", body, oe)
		}
	}
}

func TestToolID(t *testing.T) {
	for _, id := range []string{"toolu_01A09q90qw90lq917835lq9", "call_abc-123", "A"} {
		if got := ToolID(id); got != id {
			t.Errorf("ToolID(%q) = %q: a valid id must pass unchanged", id, got)
		}
	}
	seen := map[string]string{}
	for _, id := range []string{"call:1/a", "call_1_a", "call.1.a", "fc-1 2", "ünïcode", "call_1_a_"} {
		got := ToolID(id)
		for i := 0; i < len(got); i++ {
			if !idChar(got[i]) {
				t.Fatalf("ToolID(%q) = %q holds %q", id, got, got[i])
			}
		}
		if ToolID(id) != got {
			t.Errorf("ToolID(%q) is not deterministic", id)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("ToolID(%q) = ToolID(%q) = %q: distinct ids collide", id, prev, got)
		}
		seen[got] = id
	}
}

func TestMaxTokensDefault(t *testing.T) {
	req := chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	for _, tt := range []struct {
		ceiling int
		client  string
		want    int
	}{{0, "", DefaultMaxTokens}, {8192, "", 8192}, {8192, "100", 100}} {
		r := *req
		if tt.client != "" {
			r = *chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":`+tt.client+`}`)
		}
		body := BuildRequest(&r, providers.Target{Model: "c", MaxOutputTokens: tt.ceiling}, RequestOptions{})
		var got struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.Unmarshal(body, &got)
		if got.MaxTokens != tt.want {
			t.Errorf("ceiling %d, client %q: max_tokens %d, want %d", tt.ceiling, tt.client, got.MaxTokens, tt.want)
		}
	}
}

package responses_test

import (
	"encoding/json"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/responses"
)

// The response object repeats the request's settings in the shape of the Responses API's
// own object (the one the Open Responses schema checks): every member there, numbers where
// it has numbers, a function tool with all of its members, reasoning and text in full.
func TestResponseObjectRepeatsSettingsInItsOwnShape(t *testing.T) {
	tests := []struct {
		name string
		body string
		want map[string]string // member -> its JSON in the response object
	}{
		{"defaults", `{"model":"m","input":"hi"}`, map[string]string{
			"temperature": `1`, "top_p": `1`, "presence_penalty": `0`, "frequency_penalty": `0`, "top_logprobs": `0`,
			"tools": `[]`, "tool_choice": `"auto"`, "reasoning": `{"effort":null,"summary":null}`,
			"text": `{"format":{"type":"text"}}`, "truncation": `"disabled"`, "parallel_tool_calls": `true`,
			"max_tool_calls": `null`, "service_tier": `"default"`, "background": `false`, "metadata": `{}`,
		}},
		{"sampling as sent", `{"model":"m","input":"hi","temperature":0.2,"top_p":0.9}`, map[string]string{
			"temperature": `0.2`, "top_p": `0.9`,
		}},
		{"a function tool without strict, description or parameters", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}]}`, map[string]string{
			"tools": `[{"type":"function","name":"f","description":null,"parameters":null,"strict":null}]`,
		}},
		{"a function tool in full", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true}]}`, map[string]string{
			"tools": `[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true}]`,
		}},
		{"reasoning with an effort only", `{"model":"m","input":"hi","reasoning":{"effort":"none"}}`, map[string]string{
			"reasoning": `{"effort":"none","summary":null}`,
		}},
		{"reasoning with the deprecated generate_summary", `{"model":"m","input":"hi","reasoning":{"generate_summary":"auto"}}`, map[string]string{
			"reasoning": `{"effort":null,"summary":"auto"}`,
		}},
		{"text with a verbosity only", `{"model":"m","input":"hi","text":{"verbosity":"medium"}}`, map[string]string{
			"text": `{"format":{"type":"text"},"verbosity":"medium"}`,
		}},
		{"a json_schema format without strict or description", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"}}}}`, map[string]string{
			"text": `{"format":{"type":"json_schema","name":"n","description":null,"schema":{"type":"object"},"strict":false}}`,
		}},
		{"json_object", `{"model":"m","input":"hi","text":{"format":{"type":"json_object"}}}`, map[string]string{
			"text": `{"format":{"type":"json_object"}}`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, e := decodeAll(t, []byte(tc.body))
			if e != nil {
				t.Fatal(e.Message)
			}
			o := &responses.Object{ID: responses.NewID("resp"), CreatedAt: 1700000000, Model: "m", Request: r}
			body := responses.AppendResponse(nil, o, &llm.Answer{Parts: []llm.Part{{Kind: llm.PartText, Text: "ok"}}, Stop: llm.StopEnd})
			var got map[string]json.RawMessage
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			for k, want := range tc.want {
				if !jsonEqual(t, got[k], want) {
					t.Errorf("%s: %s, want %s", k, got[k], want)
				}
			}
		})
	}
}

// Usage has both details objects whenever the backend reported its counts: its own figures,
// 0 for what it did not count, and the total as their sum when it sent none.
func TestResponseUsageHasBothDetails(t *testing.T) {
	tests := []struct {
		name  string
		usage llm.Usage
		want  string
	}{
		{"counts only", llm.Usage{InputTokens: llm.Int(3), OutputTokens: llm.Int(2)},
			`{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":5}`},
		{"with cache and reasoning", llm.Usage{InputTokens: llm.Int(30), OutputTokens: llm.Int(20), TotalTokens: llm.Int(50), CacheReadTokens: llm.Int(10), ReasoningTokens: llm.Int(15)},
			`{"input_tokens":30,"input_tokens_details":{"cached_tokens":10},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":15},"total_tokens":50}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(responses.AppendUsage(nil, &tc.usage)); !jsonEqual(t, json.RawMessage(got), tc.want) {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

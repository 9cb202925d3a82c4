package mock

import (
	"context"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// TestOutputSettings: the mock's answer under max_tokens, stop and JSON formats, whole and
// streamed alike. Under json_object a user message that is a JSON object comes back as it was
// sent; any other text, JSON that is not an object included, is wrapped.
func TestOutputSettings(t *testing.T) {
	n := func(v int) *int { return &v }
	jsonObject := &llm.ResponseFormat{Type: llm.FormatJSONObject}
	cases := []struct {
		name  string
		req   llm.Request
		said  string // the user's message; "" is "one  two three"
		model string // "" is echo
		text  string
		stop  llm.StopReason
	}{
		{"plain", llm.Request{}, "", "", "one two three", llm.StopEnd},
		{"max_tokens", llm.Request{MaxTokens: n(2)}, "", "", "one two", llm.StopMaxTokens},
		{"stop inside a word", llm.Request{Stop: []string{"wo"}}, "", "", "one t", llm.StopSequence},
		{"stop at the start", llm.Request{Stop: []string{"one"}}, "", "", "", llm.StopSequence},
		{"stop after max_tokens is cut", llm.Request{MaxTokens: n(1), Stop: []string{"three"}}, "", "", "one", llm.StopMaxTokens},
		{"stop not found", llm.Request{Stop: []string{"four"}}, "", "", "one two three", llm.StopEnd},
		{"json_object wraps text", llm.Request{ResponseFormat: jsonObject}, "", "", `{"text":"one two three"}`, llm.StopEnd},
		{"json_object echoes a JSON object as sent", llm.Request{ResponseFormat: jsonObject}, `{"city": "Paris",  "days": [1, 2], "ok": true}`, "",
			`{"city": "Paris",  "days": [1, 2], "ok": true}`, llm.StopEnd},
		{"json_object echoes an object with whitespace around it", llm.Request{ResponseFormat: jsonObject}, "\n {\"a\":{}}\n", "", "\n {\"a\":{}}\n", llm.StopEnd},
		{"json_object wraps a JSON array", llm.Request{ResponseFormat: jsonObject}, `[1, 2]`, "", `{"text":"[1, 2]"}`, llm.StopEnd},
		{"json_object wraps a broken object", llm.Request{ResponseFormat: jsonObject}, `{"a": 1`, "", `{"text":"{\"a\": 1"}`, llm.StopEnd},
		{"json_object wraps lorem", llm.Request{ResponseFormat: jsonObject}, `{"a": 1}`, "lorem", `{"text":"` + lorem + `"}`, llm.StopEnd},
		{"json_schema", llm.Request{ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONSchema, Schema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}}, "", "", `{"n":1}`, llm.StopEnd},
		{"json_schema fills its schema from a JSON object's text", llm.Request{ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONSchema, Schema: []byte(`{"type":"object","properties":{"s":{"type":"string"}}}`)}},
			`{"s":1}`, "", `{"s":"{\"s\":1}"}`, llm.StopEnd},
		{"text format", llm.Request{ResponseFormat: &llm.ResponseFormat{Type: llm.FormatText}}, "", "", "one two three", llm.StopEnd},
	}
	p := &Provider{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			said, model := tc.said, tc.model
			if said == "" {
				said = "one  two three"
			}
			if model == "" {
				model = "echo"
			}
			req.Messages = []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: said}}}}
			target := providers.Target{Model: model}
			a, err := p.Generate(context.Background(), &req, target)
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := a.Text(); text != tc.text || a.Stop != tc.stop {
				t.Errorf("answer %q %s, want %q %s", text, a.Stop, tc.text, tc.stop)
			}
			st, _ := p.Stream(context.Background(), &req, target)
			var b strings.Builder
			var stop llm.StopReason
			for {
				d, err := st.Next()
				if err != nil {
					break
				}
				b.WriteString(d.Text)
				if d.Stop != "" {
					stop = d.Stop
				}
			}
			if b.String() != tc.text || stop != tc.stop {
				t.Errorf("stream %q %s, want %q %s", b.String(), stop, tc.text, tc.stop)
			}
		})
	}
}

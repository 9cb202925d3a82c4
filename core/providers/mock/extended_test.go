package mock

import (
	"context"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// TestOutputSettings: the mock's answer under max_tokens, stop and JSON formats, whole and
// streamed alike.
func TestOutputSettings(t *testing.T) {
	n := func(v int) *int { return &v }
	cases := []struct {
		name string
		req  llm.Request
		text string
		stop llm.StopReason
	}{
		{"plain", llm.Request{}, "one two three", llm.StopEnd},
		{"max_tokens", llm.Request{MaxTokens: n(2)}, "one two", llm.StopMaxTokens},
		{"stop inside a word", llm.Request{Stop: []string{"wo"}}, "one t", llm.StopSequence},
		{"stop at the start", llm.Request{Stop: []string{"one"}}, "", llm.StopSequence},
		{"stop after max_tokens is cut", llm.Request{MaxTokens: n(1), Stop: []string{"three"}}, "one", llm.StopMaxTokens},
		{"stop not found", llm.Request{Stop: []string{"four"}}, "one two three", llm.StopEnd},
		{"json_object", llm.Request{ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONObject}}, `{"text":"one two three"}`, llm.StopEnd},
		{"json_schema", llm.Request{ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONSchema, Schema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}}, `{"n":1}`, llm.StopEnd},
		{"text format", llm.Request{ResponseFormat: &llm.ResponseFormat{Type: llm.FormatText}}, "one two three", llm.StopEnd},
	}
	p := &Provider{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Messages = []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "one  two three"}}}}
			target := providers.Target{Model: "echo"}
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

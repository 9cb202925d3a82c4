package mock

import (
	"context"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// TestStreamReportsThePromptWithItsFirstContent: a stream's first content carries the prompt's
// count (what the Messages door puts in message_start), the same count CountTokens gives, and
// only the first does; the stop carries the whole usage, as the whole answer has it.
func TestStreamReportsThePromptWithItsFirstContent(t *testing.T) {
	req := &llm.Request{
		System:   []llm.Part{{Kind: llm.PartText, Text: "Be brief."}},
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "one two three"}}}},
		Tools:    []llm.Tool{{Name: "f", Parameters: []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`)}},
	}
	p := &Provider{}
	for _, model := range []string{"echo", "lorem", "tools"} {
		t.Run(model, func(t *testing.T) {
			target := providers.Target{Model: model}
			counted, err := p.CountTokens(context.Background(), req, target)
			if err != nil || counted != 5 {
				t.Fatalf("CountTokens %d %v, want the 5 words of the prompt", counted, err)
			}
			whole, err := p.Generate(context.Background(), req, target)
			if err != nil {
				t.Fatal(err)
			}
			st, err := p.Stream(context.Background(), req, target)
			if err != nil {
				t.Fatal(err)
			}
			var usages []*llm.Usage
			for {
				d, err := st.Next()
				if err != nil {
					break
				}
				usages = append(usages, d.Usage)
			}
			if len(usages) < 2 {
				t.Fatalf("%d deltas", len(usages))
			}
			first, last := usages[0], usages[len(usages)-1]
			if first == nil || first.InputTokens == nil || *first.InputTokens != counted || first.OutputTokens != nil {
				t.Errorf("first content's usage %+v, want the input alone, %d", first, counted)
			}
			for i, u := range usages[1 : len(usages)-1] {
				if u != nil {
					t.Errorf("delta %d carries usage %+v", i+1, u)
				}
			}
			if last == nil || *last.InputTokens != *whole.Usage.InputTokens || *last.OutputTokens != *whole.Usage.OutputTokens || *last.TotalTokens != *whole.Usage.TotalTokens {
				t.Errorf("the stop's usage %+v, the whole answer's %+v", last, whole.Usage)
			}
		})
	}
}

package gateway

import (
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// The tool-call normalizer runs on every delta of every stream: deltas without tool calls,
// and further fragments of a call already started, must not allocate.
func TestToolCallNormalizerDoesNotAllocateOnTheHotPath(t *testing.T) {
	var calls toolCalls
	text := llm.Delta{Text: "token"}
	if n := testing.AllocsPerRun(100, func() { calls.delta(&text) }); n != 0 {
		t.Errorf("a text delta: %v allocations", n)
	}
	whole := llm.Answer{Parts: []llm.Part{{Kind: llm.PartText, Text: "hi"}}}
	if n := testing.AllocsPerRun(100, func() { calls.answer(&whole) }); n != 0 {
		t.Errorf("an answer without tool calls: %v allocations", n)
	}
	frag := llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: 5, ID: "c", Name: "f"}}}
	calls.delta(&frag)
	if n := testing.AllocsPerRun(100, func() {
		frag.ToolCalls[0] = llm.ToolCallDelta{Index: 5, Arguments: `{"a":1}`}
		calls.delta(&frag)
	}); n != 0 {
		t.Errorf("an arguments fragment: %v allocations", n)
	}
	if f := frag.ToolCalls[0]; f.Index != 0 || f.ID != "" || f.Name != "" {
		t.Errorf("fragment %+v", f)
	}
}

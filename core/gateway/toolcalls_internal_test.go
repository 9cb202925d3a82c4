package gateway

import (
	"slices"
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

// A call whose fragments come before its name is held back and goes out whole once the name
// comes, numbered in the order calls go out; one whose name never comes goes out nameless
// with the answer's stop (or at the stream's end), its id and arguments kept.
func TestToolCallsWithoutANameYetAreHeldBack(t *testing.T) {
	var calls toolCalls
	steps := []struct {
		in, want []llm.ToolCallDelta
		stop     llm.StopReason
	}{
		{[]llm.ToolCallDelta{{Index: 4, ID: "late", Arguments: `{"a":`}}, nil, ""},
		{[]llm.ToolCallDelta{{Index: 9, ID: "named", Name: "b", Arguments: `{}`}}, []llm.ToolCallDelta{{Index: 0, ID: "named", Name: "b", Arguments: `{}`}}, ""},
		{[]llm.ToolCallDelta{{Index: 4, Arguments: `1}`}, {Index: 6, ID: "never", Arguments: `{"c":2}`}}, nil, ""},
		{[]llm.ToolCallDelta{{Index: 4, Name: "a"}}, []llm.ToolCallDelta{{Index: 1, ID: "late", Name: "a", Arguments: `{"a":1}`}}, ""},
		{[]llm.ToolCallDelta{{Index: 4, ID: "late", Name: "a", Arguments: ``}}, []llm.ToolCallDelta{{Index: 1}}, ""},
		{nil, []llm.ToolCallDelta{{Index: 2, ID: "never", Arguments: `{"c":2}`}}, llm.StopToolUse},
	}
	for i, s := range steps {
		d := llm.Delta{ToolCalls: s.in, Stop: s.stop}
		calls.delta(&d)
		if !slices.Equal(d.ToolCalls, s.want) {
			t.Errorf("step %d: %+v, want %+v", i, d.ToolCalls, s.want)
		}
	}
	if rest := calls.release(nil); len(rest) != 0 {
		t.Errorf("still held after the stop: %+v", rest)
	}
}

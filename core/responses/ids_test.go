package responses

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// Every output item the gateway makes, whole or streamed, has an id that names the response
// holding it, and ids OpenAI makes (hexadecimal) or of no known form name none.
func TestItemIDsNameTheirResponse(t *testing.T) {
	o := Object{ID: NewID("resp"), Model: "m", Request: &Request{echo: map[string][]byte{}}}
	a := &llm.Answer{Parts: []llm.Part{
		{Kind: llm.PartThinking, Text: "t", Signature: "s"},
		{Kind: llm.PartText, Text: "hi"},
		{Kind: llm.PartToolUse, ID: "call_1", Name: "f", Input: "{}"},
		{Kind: llm.PartToolUse, ID: "call_2", Name: "f", Input: "{}"},
	}}
	items := outputs(a, o.ID)
	e := NewStreamEncoder(o)
	e.Delta(nil, &llm.Delta{Thinking: "t"})
	e.Delta(nil, &llm.Delta{Signature: "s"})
	e.Delta(nil, &llm.Delta{Text: "hi"})
	e.Delta(nil, &llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "call_1", Name: "f"}, {Index: 1, ID: "call_2", Name: "f"}}})
	if len(items) != 4 || len(e.items) != 4 {
		t.Fatalf("%d whole, %d streamed items", len(items), len(e.items))
	}
	seen := map[string]bool{}
	for i := range items {
		for _, id := range []string{items[i].id, e.items[i].id} {
			if got := ItemResponse(id); got != o.ID {
				t.Errorf("item %d: %s names %q, want %s", i, id, got, o.ID)
			}
		}
		if items[i].id != e.items[i].id {
			t.Errorf("item %d: whole %s, streamed %s", i, items[i].id, e.items[i].id)
		}
		if seen[items[i].id] {
			t.Errorf("item %d: id %s repeated", i, items[i].id)
		}
		seen[items[i].id] = true
	}
	if id := itemID("msg", o.ID, 62*62); ItemResponse(id) != o.ID || !strings.HasSuffix(id, "baa") {
		t.Errorf("item 3844: %s", id)
	}
	for _, id := range []string{
		"msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b", // OpenAI's
		"fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0",
		NewID("msg"),                           // no position
		"msg_" + strings.Repeat("a", 60),       // too long
		"msg_" + strings.Repeat("Z", 48) + "-", // not base62
		"noprefix", "", "_" + strings.Repeat("Z", 49),
	} {
		if got := ItemResponse(id); got != "" {
			t.Errorf("%s names %s", id, got)
		}
	}
}

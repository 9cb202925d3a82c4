package gateway

import (
	"slices"

	"github.com/fngate/fngate/core/llm"
)

// toolCalls gives the tool calls of one answer the shape every client can assemble and send
// back, whatever the provider produced: each call has an id, unique within the answer; a
// streamed call is numbered densely from 0 in the order calls go out, and its id and name go
// out once, in its first fragment (the rule llm.ToolCallDelta states). Providers translate
// what their upstream sent; this is the one place the gateway guarantees the shape, for every
// wire, so no provider's quirk reaches a client. Recorded traffic shows why each part exists:
//
//   - Google's OpenAI-compatible endpoint answers a call with "id": "". The client sends it
//     back and the gateway's own validation refuses the conversation (tool_calls[].id is
//     required).
//   - An OpenAI-compatible server in front of Claude streams its only call with index 1 (the
//     Anthropic content block index); openai-go then assembles two calls, the first empty.
//   - OpenRouter's Novita provider repeats id, type and function.name in every fragment of a
//     streamed call; openai-go concatenates names, so the client calls llm_versionllm_version.
//
// A call whose first fragments come without a name (an OpenAI-wire upstream may send the id
// first and the name later) is held back until its name arrives, and then goes out as one
// fragment with the arguments so far: the Messages and Responses doors open a tool_use block
// or a function_call item with the call's name, which they cannot add later. One whose name
// never comes goes out nameless when the answer ends, so nothing the upstream said is lost.
//
// A stream without tool calls never touches the maps: the hot path allocates nothing here.
type toolCalls struct {
	pos  map[int]int         // the provider's index of a streamed call -> its dense index
	n    int                 // calls gone out
	ids  map[string]struct{} // ids given out in this answer
	held []heldCall          // calls waiting for their name, in the order they began
}

// heldCall is a streamed call without a name yet: its fragments so far.
type heldCall struct {
	index int // the provider's index
	id    string
	args  string
}

// delta rewrites the tool call fragments of d in place, leaving out those held back; the
// delta that ends the answer also carries the calls still held.
func (t *toolCalls) delta(d *llm.Delta) {
	out := d.ToolCalls[:0]
	for i := range d.ToolCalls {
		f := d.ToolCalls[i]
		if t.fragment(&f) {
			out = append(out, f)
		}
	}
	d.ToolCalls = out
	if d.Stop != "" {
		d.ToolCalls = t.release(d.ToolCalls)
	}
}

// release appends the calls still held to out, each as its first fragment, nameless.
func (t *toolCalls) release(out []llm.ToolCallDelta) []llm.ToolCallDelta {
	for _, h := range t.held {
		out = append(out, t.begin(llm.ToolCallDelta{Index: h.index, ID: h.id, Arguments: h.args}))
	}
	t.held = nil
	return out
}

// fragment rewrites f, reporting whether it goes out now.
func (t *toolCalls) fragment(f *llm.ToolCallDelta) bool {
	if pos, seen := t.pos[f.Index]; seen {
		f.Index, f.ID, f.Name = pos, "", ""
		return true
	}
	i := slices.IndexFunc(t.held, func(h heldCall) bool { return h.index == f.Index })
	if i >= 0 {
		h := &t.held[i]
		h.args += f.Arguments
		if h.id == "" {
			h.id = f.ID
		}
		if f.Name == "" {
			return false
		}
		f.ID, f.Arguments = h.id, h.args
		t.held = slices.Delete(t.held, i, i+1)
	} else if f.Name == "" {
		t.held = append(t.held, heldCall{index: f.Index, id: f.ID, args: f.Arguments})
		return false
	}
	*f = t.begin(*f)
	return true
}

// begin numbers a call going out and gives it a unique id.
func (t *toolCalls) begin(f llm.ToolCallDelta) llm.ToolCallDelta {
	if t.pos == nil {
		t.pos = make(map[int]int, 2)
	}
	t.pos[f.Index] = t.n
	f.Index, f.ID = t.n, t.unique(f.ID)
	t.n++
	return f
}

// answer fills in the ids a whole answer lacks or repeats.
func (t *toolCalls) answer(a *llm.Answer) {
	for i := range a.Parts {
		if a.Parts[i].Kind == llm.PartToolUse {
			a.Parts[i].ID = t.unique(a.Parts[i].ID)
		}
	}
}

// unique returns id, or a new id when the provider gave none or already used this one for
// another call of the answer (a client sending the answer back would be refused for the
// duplicate).
func (t *toolCalls) unique(id string) string {
	if _, dup := t.ids[id]; id == "" || dup {
		id = newToolCallID()
	}
	if t.ids == nil {
		t.ids = make(map[string]struct{}, 2)
	}
	t.ids[id] = struct{}{}
	return id
}

// newToolCallID makes an id in OpenAI's form. It only has to be unique within a
// conversation; 24 random base62 characters make a collision negligible.
func newToolCallID() string { return "call_" + randomID(24) }

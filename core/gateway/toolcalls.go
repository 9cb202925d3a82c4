package gateway

import "github.com/fngate/fngate/core/llm"

// toolCalls gives the tool calls of one answer the shape every client can assemble and send
// back, whatever the provider produced: each call has an id, unique within the answer; a
// streamed call is numbered densely from 0 in the order calls start, and its id and name go
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
// A stream without tool calls never touches the maps: the hot path allocates nothing here.
type toolCalls struct {
	pos   map[int]int         // the provider's index of a streamed call -> its dense index
	calls []streamedCall      // by dense index
	ids   map[string]struct{} // ids given out in this answer
}

type streamedCall struct {
	id    string
	named bool
}

// delta rewrites the tool call fragments of d in place.
func (t *toolCalls) delta(d *llm.Delta) {
	for i := range d.ToolCalls {
		t.fragment(&d.ToolCalls[i])
	}
}

func (t *toolCalls) fragment(f *llm.ToolCallDelta) {
	pos, seen := t.pos[f.Index]
	if !seen {
		if t.pos == nil {
			t.pos = make(map[int]int, 2)
		}
		pos = len(t.calls)
		t.pos[f.Index] = pos
		f.Index, f.ID = pos, t.unique(f.ID)
		t.calls = append(t.calls, streamedCall{id: f.ID, named: f.Name != ""})
		return
	}
	f.Index = pos
	c := &t.calls[pos]
	if !c.named && f.Name != "" {
		// A name that comes after the call's first fragment still has to reach the client
		// once, and the chunk encoder writes a name only beside its id.
		c.named = true
		f.ID = c.id
		return
	}
	f.ID, f.Name = "", ""
}

// streamed reports whether a tool call went out.
func (t *toolCalls) streamed() bool { return len(t.calls) > 0 }

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

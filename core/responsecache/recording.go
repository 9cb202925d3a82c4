package responsecache

import (
	"errors"
	"slices"
	"strings"

	"github.com/fngate/fngate/core/llm"
)

// recordingVersion is the encoding's; a body of another version reads as a miss.
const recordingVersion = 1

// Recording is one answer as the cache keeps it: a whole answer (a request answered whole)
// or the deltas of a stream, in the order they came, each with the upstream's own event when
// the backend spoke the door's wire. A hit in the same form is replayed as recorded; in the
// other form only when the gateway's normalized fields hold the whole answer (Portable).
type Recording struct {
	V      int
	Whole  *llm.Answer
	Deltas []llm.Delta
}

// ErrUnreadable is a body that is not a recording of this version.
var ErrUnreadable = errors.New("responsecache: the entry is not a recording this gateway reads")

// Encode returns the recording as stored (codec.go).
func (r *Recording) Encode() ([]byte, error) {
	if (r.Whole == nil) == (len(r.Deltas) == 0) {
		return nil, errors.New("responsecache: a recording holds a whole answer or a stream's deltas")
	}
	return encode(r), nil
}

// Decode reads a body Encode wrote.
func Decode(body []byte) (*Recording, error) { return decode(body) }

// Complete reports whether stop ends an answer worth keeping: a natural end, a stop sequence
// or tool calls. An answer cut by its output maximum or the context window, refused, or
// paused mid-loop is not stored.
func Complete(stop llm.StopReason) bool {
	return stop == llm.StopEnd || stop == llm.StopSequence || stop == llm.StopToolUse
}

// Usage is what the recorded answer used, as its backend reported it: on a hit, the tokens
// the cache saved.
func (r *Recording) Usage() llm.Usage {
	if r.Whole != nil {
		return r.Whole.Usage
	}
	var u llm.Usage
	for i := range r.Deltas {
		u.Merge(r.Deltas[i].Usage)
	}
	return u
}

// Portable reports whether the normalized fields hold the whole answer, so that it can be
// replayed in the other form: no raw block (a server tool's result, a citation), no event
// whose content only the upstream's wire shows (Delta.Opaque), and nothing from the
// Responses API's own backend, whose items (encrypted reasoning, item ids a conversation
// refers back to) only its raw events and objects carry.
func (r *Recording) Portable() bool {
	if a := r.Whole; a != nil {
		return a.RawWire != llm.WireResponses && !slices.ContainsFunc(a.Parts, func(p llm.Part) bool { return p.Kind == llm.PartRaw })
	}
	for i := range r.Deltas {
		d := &r.Deltas[i]
		if d.Opaque || d.Raw != nil && d.Raw.Wire == llm.WireResponses {
			return false
		}
	}
	return true
}

// Answer returns the recording as a whole answer: the recorded one, or the stream's deltas
// put together (without the upstream's raw events, which only a stream replays).
func (r *Recording) Answer() *llm.Answer {
	if r.Whole != nil {
		return r.Whole
	}
	a := &llm.Answer{}
	// The pieces of each part's texts, joined once at the end: a long answer comes in
	// thousands of deltas.
	type pieces struct{ text, signature, input strings.Builder }
	var texts []*pieces
	add := func(kind llm.PartKind) *pieces {
		a.Parts = append(a.Parts, llm.Part{Kind: kind})
		texts = append(texts, &pieces{})
		return texts[len(texts)-1]
	}
	open := -1 // the part text and thinking deltas extend while they continue it
	extend := func(kind llm.PartKind) *pieces {
		if open < 0 || a.Parts[open].Kind != kind {
			add(kind)
			open = len(a.Parts) - 1
		}
		return texts[open]
	}
	var refusal strings.Builder
	refused := false
	tools := map[int]int{}
	for i := range r.Deltas {
		d := &r.Deltas[i]
		a.Usage.Merge(d.Usage)
		if d.Thinking != "" || d.Signature != "" {
			p := extend(llm.PartThinking)
			p.text.WriteString(d.Thinking)
			p.signature.WriteString(d.Signature)
		}
		if d.RedactedThinking != "" {
			add(llm.PartRedactedThinking)
			a.Parts[len(a.Parts)-1].Data = d.RedactedThinking
			open = -1
		}
		if d.Text != "" {
			extend(llm.PartText).text.WriteString(d.Text)
		}
		if d.Refusal != "" {
			refusal.WriteString(d.Refusal)
			refused = true
		}
		for _, tc := range d.ToolCalls {
			at, ok := tools[tc.Index]
			if !ok {
				add(llm.PartToolUse)
				at = len(a.Parts) - 1
				tools[tc.Index] = at
			}
			open = -1
			p := &a.Parts[at]
			if tc.ID != "" {
				p.ID = tc.ID
			}
			if tc.Name != "" {
				p.Name = tc.Name
			}
			texts[at].input.WriteString(tc.Arguments)
		}
		if d.Stop != "" {
			a.Stop, a.StopSequence = d.Stop, d.StopSequence
		}
	}
	for i := range a.Parts {
		p, t := &a.Parts[i], texts[i]
		p.Text, p.Signature, p.Input = t.text.String(), t.signature.String(), t.input.String()
	}
	if refused {
		s := refusal.String()
		a.Refusal = &s
	}
	return a
}

// chunkRunes is how much text a replayed delta carries when a whole answer is replayed as a
// stream: a few tokens, as a backend sends them.
const chunkRunes = 16

// Stream returns the recording as a stream's deltas: the recorded ones, or the whole answer
// cut into deltas of a few tokens each, its usage with the stop in the last.
func (r *Recording) Stream() []llm.Delta {
	if r.Whole == nil {
		return r.Deltas
	}
	a := r.Whole
	var ds []llm.Delta
	calls := 0
	for i := range a.Parts {
		p := &a.Parts[i]
		switch p.Kind {
		case llm.PartText:
			for _, c := range chunks(p.Text) {
				ds = append(ds, llm.Delta{Text: c})
			}
		case llm.PartThinking:
			for _, c := range chunks(p.Text) {
				ds = append(ds, llm.Delta{Thinking: c})
			}
			if p.Signature != "" {
				ds = append(ds, llm.Delta{Signature: p.Signature})
			}
		case llm.PartRedactedThinking:
			ds = append(ds, llm.Delta{RedactedThinking: p.Data})
		case llm.PartToolUse:
			ds = append(ds, llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: calls, ID: p.ID, Name: p.Name}}})
			for _, c := range chunks(p.Input) {
				ds = append(ds, llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: calls, Arguments: c}}})
			}
			calls++
		}
	}
	if a.Refusal != nil {
		ds = append(ds, llm.Delta{Refusal: *a.Refusal})
	}
	u := a.Usage
	return append(ds, llm.Delta{Stop: a.Stop, StopSequence: a.StopSequence, Usage: &u})
}

// chunks cuts s into pieces of chunkRunes runes.
func chunks(s string) []string {
	var out []string
	n := 0
	start := 0
	for i := range s {
		if n == chunkRunes {
			out = append(out, s[start:i])
			start, n = i, 0
		}
		n++
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

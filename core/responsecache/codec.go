package responsecache

import (
	"encoding/binary"
	"errors"

	"github.com/fngate/fngate/core/llm"
)

// The recording's encoding: a hit decodes one on the request path, so it is a compact binary
// form read without reflection (a 200-delta stream decodes in microseconds, where encoding/json
// took over a millisecond). Each value is a field mask (uvarint) followed by the fields it
// names, in bit order; strings and bytes are a uvarint length and the bytes. The round-trip
// test fills every field of every type by reflection, so a field added to llm's types and
// not here fails it.
//
//	recording  magic "fngc" version kind('W' | 'S') (answer | uvarint n, n × delta)
//	delta      mask: text thinking signature redacted refusal stop sequence calls usage raw opaque
//	answer     uvarint n, n × part; mask: refusal stop sequence usage model raw
//	part       kind byte; mask: text media data url id name input tool_use_id is_error content
//	           signature cache_control raw
//	usage      mask over the six counts, each a varint

const magic = "fngc"

// maxDepth bounds the nesting of parts (a tool result's content) a body may claim.
const maxDepth = 4

var errCorrupt = errors.New("corrupt recording")

type writer struct{ b []byte }

func (w *writer) uvarint(n uint64) { w.b = binary.AppendUvarint(w.b, n) }
func (w *writer) varint(n int64)   { w.b = binary.AppendVarint(w.b, n) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *writer) bytes(p []byte)   { w.uvarint(uint64(len(p))); w.b = append(w.b, p...) }

// mask writes which of fields are set.
func (w *writer) mask(set ...bool) {
	var m uint64
	for i, s := range set {
		if s {
			m |= 1 << i
		}
	}
	w.uvarint(m)
}

// reader reads a body copied into one string, so that the texts it returns, most of a
// recording, are substrings of it rather than an allocation each.
type reader struct {
	s   string
	err error
}

func (r *reader) fail() { r.err, r.s = errCorrupt, "" }

func (r *reader) uvarint() uint64 {
	var n uint64
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		c := r.s[i]
		n |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.s = r.s[i+1:]
			return n
		}
	}
	r.fail()
	return 0
}

func (r *reader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.s)) {
		r.fail()
		return ""
	}
	v := r.s[:n]
	r.s = r.s[n:]
	return v
}

func (r *reader) bytes() []byte {
	v := r.str()
	if v == "" {
		return nil
	}
	return []byte(v)
}

func (r *reader) byte() byte {
	if len(r.s) == 0 {
		r.fail()
		return 0
	}
	c := r.s[0]
	r.s = r.s[1:]
	return c
}

// count reads a number of items, each at least one byte long: no count may claim more items
// than the bytes left could hold.
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.s)) {
		r.fail()
		return 0
	}
	return int(n)
}

func bit(m uint64, i int) bool { return m&(1<<i) != 0 }

func encode(rec *Recording) []byte {
	w := &writer{b: make([]byte, 0, 256)}
	w.b = append(w.b, magic...)
	w.b = append(w.b, recordingVersion)
	if rec.Whole != nil {
		w.b = append(w.b, 'W')
		w.answer(rec.Whole)
		return w.b
	}
	w.b = append(w.b, 'S')
	w.uvarint(uint64(len(rec.Deltas)))
	for i := range rec.Deltas {
		w.delta(&rec.Deltas[i])
	}
	return w.b
}

func decode(body []byte) (*Recording, error) {
	if len(body) < len(magic)+2 || string(body[:len(magic)]) != magic || body[len(magic)] != recordingVersion {
		return nil, ErrUnreadable
	}
	r := &reader{s: string(body[len(magic)+2:])}
	rec := &Recording{V: recordingVersion}
	switch body[len(magic)+1] {
	case 'W':
		rec.Whole = r.answer()
	case 'S':
		n := r.count()
		if n == 0 {
			r.fail() // Encode writes no stream without deltas
		}
		rec.Deltas = make([]llm.Delta, n)
		for i := range rec.Deltas {
			r.delta(&rec.Deltas[i])
		}
	default:
		r.fail()
	}
	if r.err != nil || len(r.s) != 0 {
		return nil, ErrUnreadable
	}
	return rec, nil
}

func (w *writer) delta(d *llm.Delta) {
	w.mask(d.Text != "", d.Thinking != "", d.Signature != "", d.RedactedThinking != "", d.Refusal != "",
		d.Stop != "", d.StopSequence != "", d.ToolCalls != nil, d.Usage != nil, d.Raw != nil, d.Opaque)
	for _, s := range []string{d.Text, d.Thinking, d.Signature, d.RedactedThinking, d.Refusal, string(d.Stop), d.StopSequence} {
		if s != "" {
			w.str(s)
		}
	}
	if d.ToolCalls != nil {
		w.uvarint(uint64(len(d.ToolCalls)))
		for _, tc := range d.ToolCalls {
			w.varint(int64(tc.Index))
			w.str(tc.ID)
			w.str(tc.Name)
			w.str(tc.Arguments)
		}
	}
	if d.Usage != nil {
		w.usage(d.Usage)
	}
	if d.Raw != nil {
		w.b = append(w.b, byte(d.Raw.Wire))
		w.str(d.Raw.Name)
		w.bytes(d.Raw.Data)
	}
}

func (r *reader) delta(d *llm.Delta) {
	m := r.uvarint()
	for i, s := range []*string{&d.Text, &d.Thinking, &d.Signature, &d.RedactedThinking, &d.Refusal} {
		if bit(m, i) {
			*s = r.str()
		}
	}
	if bit(m, 5) {
		d.Stop = llm.StopReason(r.str())
	}
	if bit(m, 6) {
		d.StopSequence = r.str()
	}
	if bit(m, 7) {
		d.ToolCalls = make([]llm.ToolCallDelta, r.count())
		for i := range d.ToolCalls {
			tc := &d.ToolCalls[i]
			tc.Index = int(r.varint())
			tc.ID, tc.Name, tc.Arguments = r.str(), r.str(), r.str()
		}
	}
	if bit(m, 8) {
		d.Usage = r.usage()
	}
	if bit(m, 9) {
		d.Raw = &llm.RawEvent{Wire: llm.Wire(r.byte()), Name: r.str(), Data: r.bytes()}
	}
	d.Opaque = bit(m, 10)
}

func (w *writer) usage(u *llm.Usage) {
	counts := []*int{u.InputTokens, u.OutputTokens, u.TotalTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens}
	w.mask(counts[0] != nil, counts[1] != nil, counts[2] != nil, counts[3] != nil, counts[4] != nil, counts[5] != nil)
	for _, c := range counts {
		if c != nil {
			w.varint(int64(*c))
		}
	}
}

func (r *reader) usage() *llm.Usage {
	u := &llm.Usage{}
	m := r.uvarint()
	for i, c := range []**int{&u.InputTokens, &u.OutputTokens, &u.TotalTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &u.ReasoningTokens} {
		if bit(m, i) {
			n := int(r.varint())
			*c = &n
		}
	}
	return u
}

func (w *writer) answer(a *llm.Answer) {
	w.parts(a.Parts)
	w.mask(a.Refusal != nil, a.Stop != "", a.StopSequence != "", a.Usage != llm.Usage{}, a.Model != "", a.Raw != nil || a.RawWire != llm.WireNone)
	if a.Refusal != nil {
		w.str(*a.Refusal)
	}
	if a.Stop != "" {
		w.str(string(a.Stop))
	}
	if a.StopSequence != "" {
		w.str(a.StopSequence)
	}
	if a.Usage != (llm.Usage{}) {
		w.usage(&a.Usage)
	}
	if a.Model != "" {
		w.str(a.Model)
	}
	if a.Raw != nil || a.RawWire != llm.WireNone {
		w.b = append(w.b, byte(a.RawWire))
		w.bytes(a.Raw)
	}
}

func (r *reader) answer() *llm.Answer {
	a := &llm.Answer{Parts: r.parts(0)}
	m := r.uvarint()
	if bit(m, 0) {
		s := r.str()
		a.Refusal = &s
	}
	if bit(m, 1) {
		a.Stop = llm.StopReason(r.str())
	}
	if bit(m, 2) {
		a.StopSequence = r.str()
	}
	if bit(m, 3) {
		a.Usage = *r.usage()
	}
	if bit(m, 4) {
		a.Model = r.str()
	}
	if bit(m, 5) {
		a.RawWire = llm.Wire(r.byte())
		a.Raw = r.bytes()
	}
	return a
}

func (w *writer) parts(ps []llm.Part) {
	if ps == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(ps)) + 1) // 0 is nil, 1 an empty list
	for i := range ps {
		p := &ps[i]
		w.b = append(w.b, byte(p.Kind))
		texts := []string{p.Text, p.MediaType, p.Data, p.URL, p.ID, p.Name, p.Input, p.ToolUseID}
		set := make([]bool, 0, 13)
		for _, s := range texts {
			set = append(set, s != "")
		}
		set = append(set, p.IsError, p.Content != nil, p.Signature != "", p.CacheControl != nil, p.Raw != nil)
		w.mask(set...)
		for _, s := range texts {
			if s != "" {
				w.str(s)
			}
		}
		if p.Content != nil {
			w.parts(p.Content)
		}
		if p.Signature != "" {
			w.str(p.Signature)
		}
		if p.CacheControl != nil {
			w.bytes(p.CacheControl)
		}
		if p.Raw != nil {
			w.bytes(p.Raw)
		}
	}
}

func (r *reader) parts(depth int) []llm.Part {
	n := r.count()
	if n == 0 || r.err != nil {
		return nil
	}
	if depth > maxDepth {
		r.fail()
		return nil
	}
	ps := make([]llm.Part, n-1)
	for i := range ps {
		p := &ps[i]
		p.Kind = llm.PartKind(r.byte())
		m := r.uvarint()
		for j, s := range []*string{&p.Text, &p.MediaType, &p.Data, &p.URL, &p.ID, &p.Name, &p.Input, &p.ToolUseID} {
			if bit(m, j) {
				*s = r.str()
			}
		}
		p.IsError = bit(m, 8)
		if bit(m, 9) {
			p.Content = r.parts(depth + 1)
			if p.Content == nil {
				p.Content = []llm.Part{}
			}
		}
		if bit(m, 10) {
			p.Signature = r.str()
		}
		if bit(m, 11) {
			p.CacheControl = r.bytes()
		}
		if bit(m, 12) {
			p.Raw = r.bytes()
		}
	}
	return ps
}

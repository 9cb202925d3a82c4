package guardrail

import (
	"bytes"
	"encoding/json"

	"github.com/fngate/fngate/core/llm"
)

// The texts of a request, as input guardrails read them: the system instructions, every
// message's text, tool calls' arguments and tool results (string or text blocks), and a
// completion's prompt. Images are not texts: a service that takes them is sent them apart
// (images.go). Not read: thinking (it must
// go back to the model that signed it unmodified, and it was the model's own output), and
// the blocks only Anthropic routes carry (documents, server tools' results), which the
// gateway keeps verbatim.

// RequestTexts lists the checkable texts of req in order, as pointers into it: a mask is put
// back through them (PutBack).
type RequestTexts struct {
	ptrs  []*string
	parts []*llm.Part // the part each text is in (nil for the prompt), whose Raw a mask must follow
}

// TextsOf collects the texts of req.
func TextsOf(req *llm.Request) *RequestTexts {
	rt := &RequestTexts{}
	for i := range req.System {
		rt.part(&req.System[i])
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		for j := range m.Parts {
			rt.part(&m.Parts[j])
		}
	}
	if req.Prompt != "" {
		rt.ptrs, rt.parts = append(rt.ptrs, &req.Prompt), append(rt.parts, nil)
	}
	return rt
}

func (rt *RequestTexts) part(p *llm.Part) {
	add := func(s *string, owner *llm.Part) {
		if *s != "" {
			rt.ptrs, rt.parts = append(rt.ptrs, s), append(rt.parts, owner)
		}
	}
	switch p.Kind {
	case llm.PartText:
		add(&p.Text, p)
	case llm.PartToolUse:
		add(&p.Input, p)
	case llm.PartToolResult:
		add(&p.Text, p)
		for k := range p.Content {
			if p.Content[k].Kind == llm.PartText {
				add(&p.Content[k].Text, p)
			}
		}
	}
}

// Texts returns the texts' current values.
func (rt *RequestTexts) Texts() []string {
	out := make([]string, len(rt.ptrs))
	for i, p := range rt.ptrs {
		out[i] = *p
	}
	return out
}

// Len is the number of texts.
func (rt *RequestTexts) Len() int { return len(rt.ptrs) }

// PutBack writes masked (one per text) into the request, and into the verbatim forms that
// carry the same texts to the routes that send them as they came: a part's Raw block, and the
// Responses door's input items. It reports whether anything changed.
func (rt *RequestTexts) PutBack(req *llm.Request, masked []string) bool {
	changed := map[string]string{}
	for i, p := range rt.ptrs {
		if masked[i] == *p {
			continue
		}
		changed[*p] = masked[i]
		*p = masked[i]
		if part := rt.parts[i]; part != nil && part.Raw != nil {
			part.Raw = replaceStrings(part.Raw, changed)
		}
	}
	if len(changed) == 0 {
		return false
	}
	if rs := req.Responses; rs != nil && len(rs.Input) > 0 {
		rs.Input = replaceStrings(rs.Input, changed)
	}
	return true
}

// replaceStrings rewrites every JSON string value of raw that is a key of repl. Member
// names are left alone; so is raw if it is not JSON (it came from a door that parsed it, so
// it is). Member order may change (objects are rewritten sorted): JSON gives it no meaning.
func replaceStrings(raw json.RawMessage, repl map[string]string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	v = replaceIn(v, repl)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func replaceIn(v any, repl map[string]string) any {
	switch t := v.(type) {
	case string:
		if r, ok := repl[t]; ok {
			return r
		}
	case []any:
		for i := range t {
			t[i] = replaceIn(t[i], repl)
		}
	case map[string]any:
		for k, e := range t {
			t[k] = replaceIn(e, repl)
		}
	}
	return v
}

// AnswerTexts lists the checkable texts of a whole answer: its text, reasoning and tool
// calls' arguments, and a refusal.
type AnswerTexts struct {
	ptrs []*string
}

// TextsOfAnswer collects the texts of a.
func TextsOfAnswer(a *llm.Answer) *AnswerTexts {
	at := &AnswerTexts{}
	for i := range a.Parts {
		p := &a.Parts[i]
		switch p.Kind {
		case llm.PartText, llm.PartThinking:
			if p.Text != "" {
				at.ptrs = append(at.ptrs, &p.Text)
			}
		case llm.PartToolUse:
			if p.Input != "" {
				at.ptrs = append(at.ptrs, &p.Input)
			}
		}
	}
	if a.Refusal != nil && *a.Refusal != "" {
		at.ptrs = append(at.ptrs, a.Refusal)
	}
	return at
}

// Texts returns the texts' current values.
func (at *AnswerTexts) Texts() []string {
	out := make([]string, len(at.ptrs))
	for i, p := range at.ptrs {
		out[i] = *p
	}
	return out
}

// PutBack writes masked into the answer and reports whether anything changed. A changed
// answer loses its verbatim upstream form (Raw), which no longer says what the client gets.
func (at *AnswerTexts) PutBack(a *llm.Answer, masked []string) bool {
	changed := false
	for i, p := range at.ptrs {
		if masked[i] != *p {
			*p, changed = masked[i], true
		}
	}
	if changed {
		a.Raw, a.RawWire = nil, llm.WireNone
	}
	return changed
}

// Withhold empties a blocked answer: nothing of it reaches the client, and it ends as a
// content filter ends it on every wire (finish_reason content_filter, stop_reason refusal,
// an incomplete response).
func Withhold(a *llm.Answer) {
	a.Parts, a.Refusal, a.Raw, a.RawWire = nil, nil, nil, llm.WireNone
	a.Stop, a.StopSequence = llm.StopContentFilter, ""
}

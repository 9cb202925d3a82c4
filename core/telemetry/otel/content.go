package otel

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/fngate/fngate/core/llm"
)

// Content keys, recorded only with capture_content: on.
const (
	keyInputMessages  = attribute.Key("gen_ai.input.messages")
	keyOutputMessages = attribute.Key("gen_ai.output.messages")
	keySystem         = attribute.Key("gen_ai.system_instructions")
)

// maxContentBytes bounds each captured text: a span is no place for a 4 MB prompt, and
// collectors refuse exports much larger than a few megabytes.
const maxContentBytes = 32 << 10

// part is one message part in the conventions' JSON shape (text, tool_call,
// tool_call_response, reasoning, and the kind's name for the rest).
type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

// inputContent is the conversation and the system instructions of req.
func inputContent(req *llm.Request) []attribute.KeyValue {
	var out []attribute.KeyValue
	if len(req.System) > 0 {
		out = append(out, keySystem.String(marshal(parts(req.System))))
	}
	msgs := make([]message, 0, len(req.Messages)+1)
	if req.Op == llm.OpCompletion {
		msgs = append(msgs, message{Role: llm.RoleUser, Parts: []part{{Type: "text", Content: req.Prompt}}})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		msgs = append(msgs, message{Role: m.Role, Parts: parts(m.Parts)})
	}
	return append(out, keyInputMessages.String(marshal(msgs)))
}

func parts(ps []llm.Part) []part {
	out := make([]part, 0, len(ps))
	for i := range ps {
		p := &ps[i]
		switch p.Kind {
		case llm.PartText:
			out = append(out, part{Type: "text", Content: p.Text})
		case llm.PartThinking:
			out = append(out, part{Type: "reasoning", Content: p.Text})
		case llm.PartToolUse:
			out = append(out, part{Type: "tool_call", ID: p.ID, Name: p.Name, Arguments: jsonOrString(p.Input)})
		case llm.PartToolResult:
			text := p.Text
			for j := range p.Content {
				text += p.Content[j].Text
			}
			out = append(out, part{Type: "tool_call_response", ID: p.ToolUseID, Response: text})
		case llm.PartImage:
			out = append(out, part{Type: "image"}) // the bytes stay out
		default:
			out = append(out, part{Type: "other"})
		}
	}
	return out
}

// jsonOrString keeps a tool call's arguments as JSON when they are, and as a string when a
// stream cut them short.
func jsonOrString(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// output is an answer as it arrives.
type output struct {
	text, thinking strings.Builder
	calls          []part
}

func (o *output) add(d *llm.Delta) {
	o.text.WriteString(d.Text)
	o.thinking.WriteString(d.Thinking)
	for _, c := range d.ToolCalls {
		for len(o.calls) <= c.Index {
			o.calls = append(o.calls, part{Type: "tool_call"})
		}
		p := &o.calls[c.Index]
		if c.ID != "" {
			p.ID = c.ID
		}
		if c.Name != "" {
			p.Name = c.Name
		}
		p.Arguments = append(p.Arguments, c.Arguments...)
	}
}

func answerContent(a *llm.Answer) *output {
	o := &output{}
	for i := range a.Parts {
		p := &a.Parts[i]
		switch p.Kind {
		case llm.PartText:
			o.text.WriteString(p.Text)
		case llm.PartThinking:
			o.thinking.WriteString(p.Text)
		case llm.PartToolUse:
			o.calls = append(o.calls, part{Type: "tool_call", ID: p.ID, Name: p.Name, Arguments: json.RawMessage(p.Input)})
		}
	}
	return o
}

func (o *output) attribute(stop llm.StopReason) attribute.KeyValue {
	m := message{Role: llm.RoleAssistant, FinishReason: string(stop)}
	if o.thinking.Len() > 0 {
		m.Parts = append(m.Parts, part{Type: "reasoning", Content: o.thinking.String()})
	}
	if o.text.Len() > 0 {
		m.Parts = append(m.Parts, part{Type: "text", Content: o.text.String()})
	}
	for _, c := range o.calls {
		c.Arguments = jsonOrString(string(c.Arguments))
		m.Parts = append(m.Parts, c)
	}
	return keyOutputMessages.String(marshal([]message{m}))
}

// marshal encodes v, cutting each text of it to maxContentBytes.
func marshal(v any) string {
	switch x := v.(type) {
	case []message:
		for i := range x {
			cutParts(x[i].Parts)
		}
	case []part:
		cutParts(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func cutParts(ps []part) {
	for i := range ps {
		ps[i].Content = cut(ps[i].Content)
		ps[i].Response = cut(ps[i].Response)
		if len(ps[i].Arguments) > maxContentBytes {
			ps[i].Arguments = jsonOrString(cut(string(ps[i].Arguments)))
		}
	}
}

func cut(s string) string {
	if len(s) <= maxContentBytes {
		return s
	}
	i := maxContentBytes
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i] + "…[cut]"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

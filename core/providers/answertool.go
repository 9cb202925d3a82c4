package providers

import (
	"github.com/fngate/fngate/core/llm"
)

// The answer tool: how a backend without native structured output gives a JSON
// response_format. The route offers one more tool, whose input schema is the response's,
// and makes the model call it (alone, or beside the client's tools when those are on offer
// with tool_choice auto); the call's input is the answer. AnswerAsContent and
// StreamAnswerAsContent turn it back into what OpenAI returns for response_format: the JSON
// as the message's content, finish reason stop, no tool call. The schema guides the model
// but does not bind it, so such routes refuse a strict json_schema.

// AnswerTool names the answer tool for req: the schema's name (json_answer for json_object),
// made distinct from the client's tools. It is "" when req asks for no JSON, or when its
// tool_choice makes the model call one of the client's tools this turn (there is then no
// answer to hold to a format).
func AnswerTool(req *llm.Request) string {
	f := req.ResponseFormat
	if !f.JSON() {
		return ""
	}
	if tc := req.ToolChoice; tc != nil && len(req.Tools) > 0 && (tc.Mode == llm.ToolChoiceRequired || tc.Mode == llm.ToolChoiceTool) {
		return ""
	}
	name := f.Name
	if name == "" {
		name = "json_answer"
	}
	for taken := true; taken; {
		taken = false
		for i := range req.Tools {
			if req.Tools[i].Name == name {
				name += "_response"
				taken = true
			}
		}
	}
	return name
}

// AnswerToolDescription is the answer tool's description: the schema's, or one that says
// what the tool is for.
func AnswerToolDescription(f *llm.ResponseFormat) string {
	if f.Description != "" {
		return f.Description
	}
	return "Give your final answer by calling this tool: its input is the answer."
}

// AnswerAsContent turns a call of the tool name into a's content: the call's input as its
// only text (a forced tool call comes without text), and the stop a plain end unless the
// model also called a client tool. Nothing changes when name is "" or was not called.
func AnswerAsContent(a *llm.Answer, name string) *llm.Answer {
	if name == "" {
		return a
	}
	var answer *llm.Part
	others := 0
	for i := range a.Parts {
		if p := &a.Parts[i]; p.Kind == llm.PartToolUse {
			if p.Name == name && answer == nil {
				answer = p
			} else {
				others++
			}
		}
	}
	if answer == nil {
		return a
	}
	parts := []llm.Part{{Kind: llm.PartText, Text: answer.Input}}
	for i := range a.Parts {
		p := &a.Parts[i]
		if p.Kind == llm.PartToolUse && p != answer || p.Kind == llm.PartThinking || p.Kind == llm.PartRedactedThinking {
			parts = append(parts, *p)
		}
	}
	a.Parts, a.Raw, a.RawWire = parts, nil, llm.WireNone
	if others == 0 && a.Stop == llm.StopToolUse {
		a.Stop = llm.StopEnd
	}
	return a
}

// StreamAnswerAsContent is AnswerAsContent for a stream: the answer tool's argument
// fragments arrive as text deltas, the other calls keep dense indexes, and a tool_use stop
// with no other call is a plain end. s is returned as it is when name is "".
func StreamAnswerAsContent(s llm.Stream, name string) llm.Stream {
	if name == "" {
		return s
	}
	return &answerStream{Stream: s, name: name, index: map[int]int{}}
}

type answerStream struct {
	llm.Stream
	name   string
	answer int         // the answer tool's upstream index, once found
	found  bool        // the answer tool was called
	index  map[int]int // upstream index -> the client's dense index, for the other calls
}

func (s *answerStream) Next() (llm.Delta, error) {
	d, err := s.Stream.Next()
	if err != nil || (len(d.ToolCalls) == 0 && d.Stop == "") {
		return d, err
	}
	calls := d.ToolCalls[:0:0]
	for _, tc := range d.ToolCalls {
		if !s.found && tc.Name == s.name {
			s.found, s.answer = true, tc.Index
		}
		if s.found && tc.Index == s.answer {
			d.Text += tc.Arguments
			continue
		}
		i, ok := s.index[tc.Index]
		if !ok {
			i = len(s.index)
			s.index[tc.Index] = i
		}
		tc.Index = i
		calls = append(calls, tc)
	}
	d.ToolCalls = calls
	if d.Stop == llm.StopToolUse && s.found && len(s.index) == 0 {
		d.Stop = llm.StopEnd
	}
	return d, nil
}

// Pending forwards the upstream's, when it has one.
func (s *answerStream) Pending() bool {
	p, ok := s.Stream.(llm.Pending)
	return ok && p.Pending()
}

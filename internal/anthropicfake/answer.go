package anthropicfake

import (
	"encoding/json"
	"strings"
)

// Block is one content block of a scripted answer.
type Block struct {
	Type  string // text | tool_use | thinking
	Text  string // text, or the thinking
	ID    string // tool_use
	Name  string // tool_use
	Input string // tool_use: the input as a compact JSON object
}

// Text is a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// ToolUse is a tool_use block; input is a JSON object.
func ToolUse(id, name, input string) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: input}
}

// Thinking is an extended-thinking block, which the gateway must not return.
func Thinking(s string) Block { return Block{Type: "thinking", Text: s} }

// Usage is what the answer reports. Anthropic reports all four counts on every message.
type Usage struct {
	Input, Output, CacheCreation, CacheRead int
}

// Answer is one scripted assistant message, which the fake renders either as a JSON
// response or as the event stream the API would send for it, so a stream and a non-stream
// call can be compared on the same answer.
type Answer struct {
	ID         string // default msg_fake_01
	Model      string // default: the request's model
	Blocks     []Block
	StopReason string // default end_turn
	Usage      Usage
	// DeltaRepeatsInput makes message_delta repeat the input and cache counts, as newer API
	// versions do.
	DeltaRepeatsInput bool
}

func (a *Answer) id() string {
	if a.ID == "" {
		return "msg_fake_01"
	}
	return a.ID
}

func (a *Answer) stop() string {
	if a.StopReason == "" {
		return "end_turn"
	}
	return a.StopReason
}

type wireUsage struct {
	InputTokens              *int `json:"input_tokens,omitempty"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens,omitempty"`
	OutputTokens             int  `json:"output_tokens"`
}

type outBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type outMessage struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"`
	Role         string     `json:"role"`
	Model        string     `json:"model"`
	Content      []outBlock `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        wireUsage  `json:"usage"`
}

const signature = "RXVnZmFrZXNpZ25hdHVyZQ=="

func (a *Answer) message(model string, final bool) outMessage {
	if a.Model != "" {
		model = a.Model
	}
	m := outMessage{ID: a.id(), Type: "message", Role: "assistant", Model: model, Content: []outBlock{},
		Usage: wireUsage{InputTokens: &a.Usage.Input, CacheCreationInputTokens: &a.Usage.CacheCreation,
			CacheReadInputTokens: &a.Usage.CacheRead, OutputTokens: 1}}
	if !final {
		return m
	}
	stop := a.stop()
	m.StopReason, m.Usage.OutputTokens = &stop, a.Usage.Output
	for _, b := range a.Blocks {
		switch b.Type {
		case "text":
			m.Content = append(m.Content, outBlock{Type: "text", Text: ptr(b.Text)})
		case "tool_use":
			m.Content = append(m.Content, outBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage(b.Input)})
		case "thinking":
			m.Content = append(m.Content, outBlock{Type: "thinking", Thinking: ptr(b.Text), Signature: ptr(signature)})
		}
	}
	return m
}

// JSON renders the answer as a non-streaming response body.
func (a *Answer) JSON(model string) string { return mustJSON(a.message(model, true)) }

// Event is one server-sent event.
type Event struct {
	Name string
	Data string
}

// String renders the event as the API writes it.
func (e Event) String() string { return "event: " + e.Name + "\ndata: " + e.Data + "\n\n" }

// Ping is the keep-alive event the API sends between others.
var Ping = Event{"ping", `{"type": "ping"}`}

// ErrorEvent is an error sent inside a stream after the 200.
func ErrorEvent(typ, message string) Event {
	return Event{"error", mustJSON(struct {
		Type  string   `json:"type"`
		Error apiError `json:"error"`
	}{"error", apiError{typ, message}})}
}

// Events renders the answer as the API streams it: message_start with the input usage, a
// ping, each block as start, deltas (text a few words at a time, tool input in fragments cut
// inside tokens and inside escape sequences, a ping after the first delta), stop, then
// message_delta with the stop reason and cumulative usage, and message_stop.
func (a *Answer) Events(model string) []Event {
	ev := []Event{
		{"message_start", mustJSON(struct {
			Type    string     `json:"type"`
			Message outMessage `json:"message"`
		}{"message_start", a.message(model, false)})},
		Ping,
	}
	delta := func(i int, d any) Event {
		return Event{"content_block_delta", mustJSON(struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
			Delta any    `json:"delta"`
		}{"content_block_delta", i, d})}
	}
	for i, b := range a.Blocks {
		var start outBlock
		var deltas []Event
		switch b.Type {
		case "text":
			start = outBlock{Type: "text", Text: ptr("")}
			for _, piece := range SplitText(b.Text) {
				deltas = append(deltas, delta(i, textDelta{"text_delta", piece}))
			}
		case "tool_use":
			start = outBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage(`{}`)}
			for _, piece := range append([]string{""}, SplitJSON(b.Input)...) {
				deltas = append(deltas, delta(i, jsonDelta{"input_json_delta", piece}))
			}
		case "thinking":
			start = outBlock{Type: "thinking", Thinking: ptr("")}
			for _, piece := range SplitText(b.Text) {
				deltas = append(deltas, delta(i, thinkingDelta{"thinking_delta", piece}))
			}
			deltas = append(deltas, delta(i, signatureDelta{"signature_delta", signature}))
		}
		ev = append(ev, Event{"content_block_start", mustJSON(struct {
			Type         string   `json:"type"`
			Index        int      `json:"index"`
			ContentBlock outBlock `json:"content_block"`
		}{"content_block_start", i, start})})
		for j, d := range deltas {
			ev = append(ev, d)
			if j == 0 {
				ev = append(ev, Ping)
			}
		}
		ev = append(ev, Event{"content_block_stop", mustJSON(struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		}{"content_block_stop", i})})
	}
	u := wireUsage{OutputTokens: a.Usage.Output}
	if a.DeltaRepeatsInput {
		u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens = &a.Usage.Input, &a.Usage.CacheCreation, &a.Usage.CacheRead
	}
	ev = append(ev,
		Event{"message_delta", mustJSON(struct {
			Type  string `json:"type"`
			Delta struct {
				StopReason   string  `json:"stop_reason"`
				StopSequence *string `json:"stop_sequence"`
			} `json:"delta"`
			Usage wireUsage `json:"usage"`
		}{Type: "message_delta", Delta: struct {
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		}{StopReason: a.stop()}, Usage: u})},
		Event{"message_stop", `{"type":"message_stop"}`},
	)
	return ev
}

// SSE renders events as one text/event-stream body.
func SSE(events []Event) string {
	var sb strings.Builder
	for _, e := range events {
		sb.WriteString(e.String())
	}
	return sb.String()
}

// SplitText cuts text into pieces of up to two words, as the API streams text.
func SplitText(s string) []string {
	var out []string
	words := strings.SplitAfter(s, " ")
	for i := 0; i < len(words); i += 2 {
		out = append(out, strings.Join(words[i:min(i+2, len(words))], ""))
	}
	return out
}

// SplitJSON cuts a JSON text into the fragments input_json_delta events carry: every few
// bytes regardless of tokens, and right after every backslash, so escape sequences are split
// too. Only the concatenation is valid JSON.
func SplitJSON(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		// Never inside a UTF-8 sequence: the fragments are JSON strings themselves.
		if i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			continue
		}
		if s[i] == '\\' || i+1-start >= 7 {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type textDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type jsonDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type thinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type signatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

func ptr(s string) *string { return &s }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

package messages

import (
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// StreamEncoder writes the server-sent events of one streamed message:
//
//	message_start, ping                        when the stream commits (Start)
//	content_block_start / _delta / _stop       for each block, as deltas arrive (Delta)
//	message_delta, message_stop                at the proper end (End)
//	error                                      when the stream fails after it began (AppendErrorEvent)
//
// Deltas from an Anthropic-wire backend carry the upstream's own events (llm.Delta.Raw):
// those pass through verbatim, with the gateway's model name patched into message_start, so
// block indexes, signatures, citations and server-tool blocks reach the client exactly as
// Anthropic sent them. Deltas from any other backend are encoded here: text, thinking and
// tool calls each become blocks numbered from 0; a tool_use block stays open until text or
// thinking follows or the message ends, so an upstream that interleaves the argument
// fragments of parallel calls still yields valid events.
//
// message_start always carries input_tokens and output_tokens, which Anthropic's wire and
// SDKs type as required numbers (Claude Code reads them for its context meter): the
// backend's input count when it reported one by the first content, else the estimate the
// encoder was made with, and one output token, the first content's, as Anthropic mostly
// sends. message_delta then carries the usage the backend reported, input and cache counts
// included; the SDKs' accumulators let those overwrite message_start's, so a client's final
// usage is the backend's own, never the estimate.
type StreamEncoder struct {
	id    string
	model string
	input int // message_start's input count when the backend has not reported one

	// raw: the upstream speaks Anthropic; pre holds its events until the stream commits.
	raw bool
	pre []byte

	next    int   // next block index
	current int   // the open text or thinking block, -1 when none
	curKind uint8 // kindText or kindThinking
	tools   []int // block index of each tool call (by dense tool index), -1 once closed
	open    []int // open tool_use blocks, in order
	usage   llm.Usage
}

const (
	kindText uint8 = iota + 1
	kindThinking
)

// NewStreamEncoder prepares the events of message id, answered as model; input is the
// prompt's token count message_start gives when the backend reports none by its first
// content (the gateway's count or estimate of the request).
func NewStreamEncoder(id, model string, input int) *StreamEncoder {
	return &StreamEncoder{id: id, model: model, input: input, current: -1}
}

// Hold takes a delta that arrived before the stream committed: the raw upstream events
// (message_start, ping, an empty content_block_start) are kept to be sent at the commit, and
// usage is remembered for message_start.
func (e *StreamEncoder) Hold(d *llm.Delta) {
	e.usage.Merge(d.Usage)
	if d.Raw != nil && d.Raw.Wire == llm.WireAnthropic {
		e.raw = true
		e.pre = e.appendRaw(e.pre, d.Raw)
	}
}

// Start appends what opens the stream, first being the delta that commits it: the held raw
// events, or a message_start of the encoder's own with the usage known so far (a translated
// backend often reports the prompt with its first content), the input estimate standing in
// when none is, and a ping.
func (e *StreamEncoder) Start(b []byte, first *llm.Delta) []byte {
	if e.raw {
		return append(b, e.pre...)
	}
	if first != nil {
		e.usage.Merge(first.Usage)
	}
	b = append(b, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"...)
	b = appendString(b, e.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendString(b, e.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	start := e.usage
	if start.InputTokens == nil {
		start.InputTokens = &e.input
	}
	// The first content goes out with message_start: its token is the output so far, the
	// 1 Anthropic sends at that point (message_delta has the count).
	one := 1
	start.OutputTokens = &one
	b = AppendUsage(b, &start)
	b = append(b, "}}\n\n"...)
	return append(b, "event: ping\ndata: {\"type\":\"ping\"}\n\n"...)
}

// Delta appends the events of one committed delta.
func (e *StreamEncoder) Delta(b []byte, d *llm.Delta) []byte {
	e.usage.Merge(d.Usage)
	if e.raw {
		if d.Raw != nil {
			return e.appendRaw(b, d.Raw)
		}
		return b
	}
	if d.Thinking != "" {
		b = e.block(b, kindThinking)
		b = e.deltaEvent(b, e.current, `{"type":"thinking_delta","thinking":`, d.Thinking)
	}
	if d.Signature != "" {
		if e.curKind != kindThinking || e.current < 0 {
			b = e.block(b, kindThinking)
		}
		b = e.deltaEvent(b, e.current, `{"type":"signature_delta","signature":`, d.Signature)
	}
	if d.RedactedThinking != "" {
		b = e.closeCurrent(b)
		b = e.closeTools(b)
		i := e.next
		e.next++
		b = appendStart(b, i)
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendString(b, d.RedactedThinking)
		b = append(b, "}}\n\n"...)
		b = appendStop(b, i)
	}
	if d.Text != "" {
		b = e.block(b, kindText)
		b = e.deltaEvent(b, e.current, `{"type":"text_delta","text":`, d.Text)
	}
	if d.Refusal != "" {
		b = e.block(b, kindText)
		b = e.deltaEvent(b, e.current, `{"type":"text_delta","text":`, d.Refusal)
	}
	for i := range d.ToolCalls {
		b = e.toolCall(b, &d.ToolCalls[i])
	}
	return b
}

// End appends the end of a stream that finished properly: open blocks close, then
// message_delta with the stop reason and the usage, then message_stop. A raw stream has
// already passed the upstream's own end through.
func (e *StreamEncoder) End(b []byte, stop llm.StopReason, stopSequence string, u *llm.Usage) []byte {
	if e.raw {
		return b
	}
	b = e.closeCurrent(b)
	b = e.closeTools(b)
	b = append(b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"...)
	b = appendString(b, StopReason(stop))
	b = append(b, `,"stop_sequence":`...)
	if stopSequence != "" {
		b = appendString(b, stopSequence)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `},"usage":`...)
	if u == nil {
		u = &e.usage
	}
	b = AppendUsage(b, u)
	b = append(b, "}\n\n"...)
	return append(b, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
}

// AppendErrorEvent appends the error event that ends a stream after it began; no
// message_stop follows, so no client mistakes a broken answer for a finished one.
func AppendErrorEvent(b []byte, e *llm.Error, requestID string) []byte {
	b = append(b, "event: error\ndata: "...)
	b = AppendError(b, e, requestID)
	return append(b, "\n\n"...)
}

func (e *StreamEncoder) block(b []byte, kind uint8) []byte {
	if e.current >= 0 && e.curKind == kind {
		return b
	}
	b = e.closeCurrent(b)
	b = e.closeTools(b)
	e.current, e.curKind = e.next, kind
	e.next++
	b = appendStart(b, e.current)
	if kind == kindThinking {
		b = append(b, `{"type":"thinking","thinking":"","signature":""}}`...)
	} else {
		b = append(b, `{"type":"text","text":""}}`...)
	}
	return append(b, "\n\n"...)
}

func (e *StreamEncoder) toolCall(b []byte, tc *llm.ToolCallDelta) []byte {
	for len(e.tools) <= tc.Index {
		e.tools = append(e.tools, -1)
	}
	if tc.ID != "" && e.tools[tc.Index] < 0 {
		b = e.closeCurrent(b)
		i := e.next
		e.next++
		e.tools[tc.Index] = i
		e.open = append(e.open, i)
		b = appendStart(b, i)
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendString(b, tc.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, tc.Name)
		b = append(b, `,"input":{}}}`...)
		b = append(b, "\n\n"...)
	}
	if tc.Arguments == "" || e.tools[tc.Index] < 0 {
		return b
	}
	return e.deltaEvent(b, e.tools[tc.Index], `{"type":"input_json_delta","partial_json":`, tc.Arguments)
}

func (e *StreamEncoder) closeCurrent(b []byte) []byte {
	if e.current < 0 {
		return b
	}
	b = appendStop(b, e.current)
	e.current = -1
	return b
}

func (e *StreamEncoder) closeTools(b []byte) []byte {
	for _, i := range e.open {
		b = appendStop(b, i)
	}
	e.open = e.open[:0]
	return b
}

func (e *StreamEncoder) deltaEvent(b []byte, index int, head, text string) []byte {
	b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	b = appendInt(b, index)
	b = append(b, `,"delta":`...)
	b = append(b, head...)
	b = appendString(b, text)
	return append(b, "}}\n\n"...)
}

func appendStart(b []byte, index int) []byte {
	b = append(b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	b = appendInt(b, index)
	return append(b, `,"content_block":`...)
}

func appendStop(b []byte, index int) []byte {
	b = append(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	b = appendInt(b, index)
	return append(b, "}\n\n"...)
}

// appendRaw writes an upstream event as it came, but message_start, whose model becomes the
// gateway's model name, as on every other path.
func (e *StreamEncoder) appendRaw(b []byte, ev *llm.RawEvent) []byte {
	data := ev.Data
	if ev.Name == "message_start" {
		data = patchMessageStart(data, e.model)
	}
	b = append(b, "event: "...)
	b = append(b, ev.Name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// patchMessageStart replaces message.model in a message_start event. An event it cannot
// read is passed on unchanged: the client then sees the upstream's model id, which is still
// a working answer.
func patchMessageStart(data []byte, model string) []byte { return patchStart(data, "model", model) }

// PatchStartID returns a message_start event's data with message.id set to id: an answer
// served again from the response cache is a new message. Data it cannot read comes back as
// it is.
func PatchStartID(data []byte, id string) []byte { return patchStart(data, "id", id) }

// patchStart sets member name of a message_start event's message to value.
func patchStart(data []byte, name, value string) []byte {
	var msg []byte
	_ = jsonx.Members(data, func(key string, v []byte) error {
		if key == "message" {
			msg = v
		}
		return nil
	})
	if msg == nil {
		return data
	}
	patched := patchMember(msg, name, value)
	if patched == nil {
		return data
	}
	return splice(data, msg, patched)
}

// PatchModel returns the message object msg (valid JSON) with its "model" member set to
// model, or nil when msg has none.
func PatchModel(msg []byte, model string) []byte { return patchMember(msg, "model", model) }

// PatchID returns the message object msg (valid JSON) with its "id" member set to id, or nil
// when msg has none: an answer served again from the response cache is a new message.
func PatchID(msg []byte, id string) []byte { return patchMember(msg, "id", id) }

// patchMember returns the object obj with its member name set to the string value, or nil
// when it has none.
func patchMember(obj []byte, name, value string) []byte {
	var val []byte
	_ = jsonx.Members(obj, func(key string, v []byte) error {
		if key == name {
			val = v
		}
		return nil
	})
	if val == nil {
		return nil
	}
	return splice(obj, val, appendString(nil, value))
}

// splice returns outer with inner, a subslice of it, replaced by with.
func splice(outer, inner, with []byte) []byte {
	start := cap(outer) - cap(inner)
	out := make([]byte, 0, len(outer)-len(inner)+len(with))
	out = append(out, outer[:start]...)
	out = append(out, with...)
	return append(out, outer[start+len(inner):]...)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

package responses

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// StreamEncoder writes the server-sent events of one streamed response, each numbered by
// its sequence_number from 0:
//
//	response.created, response.in_progress            when the stream commits (Start)
//	response.output_item.added ... .done              for each output item, as deltas arrive (Delta):
//	  message:       content_part.added, output_text.delta ... .done, content_part.done
//	                 (a refusal: content_part.added, refusal.delta ... .done, content_part.done)
//	  function_call: function_call_arguments.delta ... .done
//	  reasoning:     reasoning_summary_part.added, reasoning_summary_text.delta ... .done,
//	                 reasoning_summary_part.done
//	response.completed | response.incomplete          at the proper end (End)
//	error, response.failed                            when the stream fails after it began (Fail)
//
// There is no [DONE]: the terminal event ends the stream. Deltas from a backend that speaks
// the Responses API itself carry its own events (llm.Delta.Raw): those pass through with
// the gateway's response id, model and store patched into the response they carry and the
// gateway's sequence numbers, so hosted tools' events reach the client as OpenAI sent them.
// Deltas from any other backend are encoded here. A message or reasoning item stays open
// until another kind of output begins; function calls stay open until text or reasoning
// follows or the response ends, so interleaved fragments of parallel calls still come out
// whole.
type StreamEncoder struct {
	obj Object
	seq int

	// raw: the upstream speaks Responses; pre holds its events until the stream commits.
	raw     bool
	pre     []byte
	final   []byte   // the last response object sent, for the store
	members []member // appendPlainRaw's, reused

	items []*output
	cur   int   // the open message or reasoning item, -1 when none
	calls []int // the item of each tool call (by dense index), -1 once closed
	open  []int // open function_call items, in order
	// textPart and refusalPart are the content indexes of the open message's parts, -1
	// before each begins.
	textPart, refusalPart int
	parts                 int
	usage                 llm.Usage
	stop                  llm.StopReason
}

// NewStreamEncoder prepares the events of the response o describes.
func NewStreamEncoder(o Object) *StreamEncoder {
	return &StreamEncoder{obj: o, cur: -1}
}

// Final is the response object of the stream's terminal event (the whole response, as a
// non-streamed request would have got it), once End or Fail has written it.
func (e *StreamEncoder) Final() []byte { return e.final }

// Hold takes a delta that arrived before the stream committed: a native upstream's events
// (response.created, in_progress) are kept to be sent at the commit, usage is remembered.
func (e *StreamEncoder) Hold(d *llm.Delta) {
	e.usage.Merge(d.Usage)
	if d.Raw != nil && d.Raw.Wire == llm.WireResponses {
		e.raw = true
		e.pre = e.appendRaw(e.pre, d.Raw)
	}
}

// Start appends what opens the stream: the held native events, or response.created and
// response.in_progress of the encoder's own.
func (e *StreamEncoder) Start(b []byte) []byte {
	if e.raw {
		return append(b, e.pre...)
	}
	st := Status{Status: "in_progress"}
	b = e.event(b, "response.created", func(b []byte) []byte { return e.response(b, st, nil) })
	return e.event(b, "response.in_progress", func(b []byte) []byte { return e.response(b, st, nil) })
}

// Delta appends the events of one committed delta.
func (e *StreamEncoder) Delta(b []byte, d *llm.Delta) []byte {
	e.usage.Merge(d.Usage)
	if d.Stop != "" {
		e.stop = d.Stop
	}
	if e.raw || d.Raw != nil && d.Raw.Wire == llm.WireResponses {
		e.raw = true
		if d.Raw != nil {
			return e.appendRaw(b, d.Raw)
		}
		return b
	}
	if d.Thinking != "" {
		b = e.reasoning(b)
		it := e.items[e.cur]
		it.text = append(it.text, d.Thinking...)
		b = e.event(b, "response.reasoning_summary_text.delta", func(b []byte) []byte {
			b = e.itemRef(b, e.cur)
			b = append(b, `,"summary_index":0,"delta":`...)
			return openai.AppendString(b, d.Thinking)
		})
	}
	if d.Signature != "" {
		b = e.reasoning(b)
		e.items[e.cur].signature += d.Signature
		b = e.closeCurrent(b, "completed") // a signature ends its thinking block
	}
	if d.RedactedThinking != "" {
		b = e.closeCurrent(b, "completed")
		b = e.closeCalls(b, "completed")
		e.add(&output{kind: itemReasoning, id: e.nextID("rs"), redacted: d.RedactedThinking})
		i := len(e.items) - 1
		e.cur = i
		b = e.itemEvent(b, "response.output_item.added", i, "in_progress")
		b = e.closeCurrent(b, "completed")
	}
	if d.Text != "" {
		b = e.message(b)
		it := e.items[e.cur]
		if e.textPart < 0 {
			b = e.openText(b)
		}
		it.text = append(it.text, d.Text...)
		b = e.event(b, "response.output_text.delta", func(b []byte) []byte {
			b = e.itemRef(b, e.cur)
			b = append(b, `,"content_index":`...)
			b = strconv.AppendInt(b, int64(e.textPart), 10)
			b = append(b, `,"delta":`...)
			b = openai.AppendString(b, d.Text)
			return append(b, `,"logprobs":[]`...)
		})
	}
	if d.Refusal != "" {
		b = e.message(b)
		it := e.items[e.cur]
		if e.refusalPart < 0 {
			e.refusalPart = e.parts
			e.parts++
			b = e.event(b, "response.content_part.added", func(b []byte) []byte {
				b = e.itemRef(b, e.cur)
				b = append(b, `,"content_index":`...)
				b = strconv.AppendInt(b, int64(e.refusalPart), 10)
				return append(b, `,"part":{"type":"refusal","refusal":""}`...)
			})
		}
		it.refusal += d.Refusal
		b = e.event(b, "response.refusal.delta", func(b []byte) []byte {
			b = e.itemRef(b, e.cur)
			b = append(b, `,"content_index":`...)
			b = strconv.AppendInt(b, int64(e.refusalPart), 10)
			b = append(b, `,"delta":`...)
			return openai.AppendString(b, d.Refusal)
		})
	}
	for i := range d.ToolCalls {
		b = e.toolCall(b, &d.ToolCalls[i])
	}
	return b
}

// End appends the end of a stream that finished properly: open items close, then
// response.completed, or response.incomplete when the output maximum (or a content filter)
// cut the answer. u is the stream's usage, completedAt the time it ended (Unix seconds). A
// native stream has passed its own end through.
func (e *StreamEncoder) End(b []byte, u *llm.Usage, completedAt int64) []byte {
	if e.raw {
		return b
	}
	if u == nil {
		u = &e.usage
	}
	st := statusOf(e.stop)
	last := "completed"
	if st.Status == "incomplete" {
		last = "incomplete"
	}
	b = e.closeCurrent(b, last)
	b = e.closeCalls(b, last)
	name := "response.completed"
	if st.Status == "incomplete" {
		name = "response.incomplete"
	}
	e.obj.CompletedAt = completedAt
	return e.event(b, name, func(b []byte) []byte { return e.terminal(b, st, u) })
}

// Fail appends the end of a stream that failed after it began: an error event, then
// response.failed with what had been output, so no client mistakes it for a finished answer.
// The error event has code, message and param at its top level, as OpenAI sends it. The
// Open Responses schema nests them in an error object instead; the gateway does not, since
// openai-go ends a stream with an error at any event whose data has an "error" member, and
// would then never read the response.failed that follows.
func (e *StreamEncoder) Fail(b []byte, fe *llm.Error) []byte {
	b = e.event(b, "error", func(b []byte) []byte {
		code := fe.Code
		if code == "" {
			code = "server_error"
		}
		b = append(b, `"code":`...)
		b = openai.AppendString(b, code)
		b = append(b, `,"message":`...)
		b = openai.AppendString(b, fe.Message)
		b = append(b, `,"param":`...)
		if fe.Param != "" {
			return openai.AppendString(b, fe.Param)
		}
		return append(b, "null"...)
	})
	for _, it := range e.items {
		if it.status == "" || it.status == "in_progress" {
			it.status = "incomplete"
		}
	}
	if e.raw {
		e.items = nil // a native stream's items were the upstream's: its events have them
	}
	st := Status{Status: "failed", Error: fe}
	return e.event(b, "response.failed", func(b []byte) []byte { return e.terminal(b, st, &e.usage) })
}

// terminal writes the response of a terminal event and keeps it as the final one.
func (e *StreamEncoder) terminal(b []byte, st Status, u *llm.Usage) []byte {
	b = append(b, `"response":`...)
	start := len(b)
	b = e.object(b, st, u)
	e.final = append([]byte(nil), b[start:]...)
	return b
}

// response writes the "response" member of an event: the items output so far.
func (e *StreamEncoder) response(b []byte, st Status, u *llm.Usage) []byte {
	return e.object(append(b, `"response":`...), st, u)
}

func (e *StreamEncoder) object(b []byte, st Status, u *llm.Usage) []byte {
	o := e.obj
	if u == nil {
		u = &llm.Usage{}
	}
	return appendObject(b, &o, st, e.items, u)
}

// event appends one event: its name, then a data object of its type, its sequence number
// and what body writes.
func (e *StreamEncoder) event(b []byte, name string, body func([]byte) []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, name...)
	b = append(b, `","sequence_number":`...)
	b = strconv.AppendInt(b, int64(e.seq), 10)
	e.seq++
	b = append(b, ',')
	b = body(b)
	return append(b, "}\n\n"...)
}

// itemRef writes "item_id" and "output_index" of item i.
func (e *StreamEncoder) itemRef(b []byte, i int) []byte {
	b = append(b, `"item_id":`...)
	b = openai.AppendString(b, e.items[i].id)
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(i), 10)
}

// itemEvent writes output_item.added or .done for item i with the given status.
func (e *StreamEncoder) itemEvent(b []byte, name string, i int, status string) []byte {
	return e.event(b, name, func(b []byte) []byte {
		b = append(b, `"output_index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"item":`...)
		return appendItem(b, e.items[i], status, e.obj.Request != nil && e.obj.Request.IncludeEncrypted)
	})
}

// nextID is the id of the next output item (ids.go).
func (e *StreamEncoder) nextID(prefix string) string { return itemID(prefix, e.obj.ID, len(e.items)) }

func (e *StreamEncoder) add(it *output) {
	it.status = "in_progress"
	e.items = append(e.items, it)
}

// message makes the open item a message, opening one when it is not.
func (e *StreamEncoder) message(b []byte) []byte {
	if e.cur >= 0 && e.items[e.cur].kind == itemMessage {
		return b
	}
	b = e.closeCurrent(b, "completed")
	b = e.closeCalls(b, "completed")
	e.add(&output{kind: itemMessage, id: e.nextID("msg")})
	e.cur, e.parts, e.textPart, e.refusalPart = len(e.items)-1, 0, -1, -1
	return e.itemEvent(b, "response.output_item.added", e.cur, "in_progress")
}

// openText begins the open message's output_text part.
func (e *StreamEncoder) openText(b []byte) []byte {
	e.textPart = e.parts
	e.parts++
	return e.event(b, "response.content_part.added", func(b []byte) []byte {
		b = e.itemRef(b, e.cur)
		b = append(b, `,"content_index":`...)
		b = strconv.AppendInt(b, int64(e.textPart), 10)
		return append(b, `,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`...)
	})
}

// reasoning makes the open item a reasoning item, opening one (with its summary part) when
// it is not.
func (e *StreamEncoder) reasoning(b []byte) []byte {
	if e.cur >= 0 && e.items[e.cur].kind == itemReasoning {
		return b
	}
	b = e.closeCurrent(b, "completed")
	b = e.closeCalls(b, "completed")
	e.add(&output{kind: itemReasoning, id: e.nextID("rs")})
	e.cur = len(e.items) - 1
	b = e.itemEvent(b, "response.output_item.added", e.cur, "in_progress")
	return e.event(b, "response.reasoning_summary_part.added", func(b []byte) []byte {
		b = e.itemRef(b, e.cur)
		return append(b, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...)
	})
}

func (e *StreamEncoder) toolCall(b []byte, tc *llm.ToolCallDelta) []byte {
	for len(e.calls) <= tc.Index {
		e.calls = append(e.calls, -1)
	}
	if tc.ID != "" && e.calls[tc.Index] < 0 {
		b = e.closeCurrent(b, "completed")
		it := &output{kind: itemCall, id: e.nextID("fc"), callID: tc.ID}
		it.namespace, it.name = e.obj.Request.unflatten(tc.Name)
		e.add(it)
		i := len(e.items) - 1
		e.calls[tc.Index] = i
		e.open = append(e.open, i)
		b = e.itemEvent(b, "response.output_item.added", i, "in_progress")
	}
	i := e.calls[tc.Index]
	if tc.Arguments == "" || i < 0 {
		return b
	}
	e.items[i].text = append(e.items[i].text, tc.Arguments...)
	return e.event(b, "response.function_call_arguments.delta", func(b []byte) []byte {
		b = e.itemRef(b, i)
		b = append(b, `,"delta":`...)
		return openai.AppendString(b, tc.Arguments)
	})
}

// closeCurrent ends the open message or reasoning item with its done events.
func (e *StreamEncoder) closeCurrent(b []byte, status string) []byte {
	if e.cur < 0 {
		return b
	}
	i := e.cur
	it := e.items[i]
	e.cur = -1
	switch it.kind {
	case itemMessage:
		if e.textPart < 0 && e.refusalPart < 0 {
			e.cur = i
			b = e.openText(b) // an answer with no text still has its (empty) output_text
			e.cur = -1
		}
		// The item's parts close in their order; the whole item lists them the same way.
		for ci := 0; ci < e.parts; ci++ {
			switch ci {
			case e.textPart:
				b = e.event(b, "response.output_text.done", func(b []byte) []byte {
					b = e.itemRef(b, i)
					b = append(b, `,"content_index":`...)
					b = strconv.AppendInt(b, int64(ci), 10)
					b = append(b, `,"text":`...)
					b = openai.AppendString(b, string(it.text))
					return append(b, `,"logprobs":[]`...)
				})
				b = e.event(b, "response.content_part.done", func(b []byte) []byte {
					b = e.itemRef(b, i)
					b = append(b, `,"content_index":`...)
					b = strconv.AppendInt(b, int64(ci), 10)
					b = append(b, `,"part":`...)
					return appendTextPart(b, it.text)
				})
			case e.refusalPart:
				b = e.event(b, "response.refusal.done", func(b []byte) []byte {
					b = e.itemRef(b, i)
					b = append(b, `,"content_index":`...)
					b = strconv.AppendInt(b, int64(ci), 10)
					b = append(b, `,"refusal":`...)
					return openai.AppendString(b, it.refusal)
				})
				b = e.event(b, "response.content_part.done", func(b []byte) []byte {
					b = e.itemRef(b, i)
					b = append(b, `,"content_index":`...)
					b = strconv.AppendInt(b, int64(ci), 10)
					b = append(b, `,"part":`...)
					return appendRefusalPart(b, it.refusal)
				})
			}
		}
	case itemReasoning:
		if it.redacted == "" {
			b = e.event(b, "response.reasoning_summary_text.done", func(b []byte) []byte {
				b = e.itemRef(b, i)
				b = append(b, `,"summary_index":0,"text":`...)
				return openai.AppendString(b, string(it.text))
			})
			b = e.event(b, "response.reasoning_summary_part.done", func(b []byte) []byte {
				b = e.itemRef(b, i)
				b = append(b, `,"summary_index":0,"part":`...)
				return appendSummaryPart(b, it.text)
			})
		}
	}
	it.status = status
	return e.itemEvent(b, "response.output_item.done", i, status)
}

// closeCalls ends the open function calls, in the order they began.
func (e *StreamEncoder) closeCalls(b []byte, status string) []byte {
	for _, i := range e.open {
		it := e.items[i]
		b = e.event(b, "response.function_call_arguments.done", func(b []byte) []byte {
			b = e.itemRef(b, i)
			b = append(b, `,"arguments":`...)
			return openai.AppendString(b, string(it.text))
		})
		it.status = status
		b = e.itemEvent(b, "response.output_item.done", i, status)
		for k, c := range e.calls {
			if c == i {
				e.calls[k] = -1
			}
		}
	}
	e.open = e.open[:0]
	return b
}

package openai

import "strconv"

// Delta is one normalized increment of a streamed answer: what every provider's stream
// translator produces and what the gateway turns into SSE chunks.
type Delta struct {
	Content      string
	Refusal      string
	ToolCalls    []ToolCallDelta
	FinishReason string
	// Usage, when set, is the usage reported so far; later deltas refine it.
	Usage *Usage
}

// Visible reports whether the delta carries something the client sees. A stream commits to
// its route at the first visible delta; role preambles, pings and usage-only events are not.
func (d *Delta) Visible() bool {
	return d.Content != "" || d.Refusal != "" || len(d.ToolCalls) > 0 || d.FinishReason != ""
}

// ToolCallDelta is a fragment of a streamed tool call. The first fragment of a call carries ID
// and Name; later ones only Arguments. Index is the call's position in the final tool_calls
// array (dense, from 0), never a provider's content-block index. That is the shape the chunk
// encoder writes and clients assemble; providers report fragments as their upstream sent them
// (an id may be missing or repeated), and the gateway puts them in this shape before encoding.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// ChunkEncoder writes the SSE events of one stream. The JSON before "choices" is identical in
// every chunk, so it is rendered once.
type ChunkEncoder struct {
	head         []byte // data: {"id":..,"object":..,"created":..,"model":..,"choices":[
	includeUsage bool
	text         bool // legacy text_completion chunks
}

// NewChatChunkEncoder prepares chat.completion.chunk events.
func NewChatChunkEncoder(id string, created int64, model string, includeUsage bool) *ChunkEncoder {
	return newChunkEncoder("chat.completion.chunk", id, created, model, includeUsage, false)
}

// NewTextChunkEncoder prepares text_completion stream events.
func NewTextChunkEncoder(id string, created int64, model string, includeUsage bool) *ChunkEncoder {
	return newChunkEncoder("text_completion", id, created, model, includeUsage, true)
}

func newChunkEncoder(object, id string, created int64, model string, includeUsage, text bool) *ChunkEncoder {
	h := make([]byte, 0, 96+len(id)+len(model))
	h = append(h, `data: {"id":`...)
	h = AppendString(h, id)
	h = append(h, `,"object":"`...)
	h = append(h, object...)
	h = append(h, `","created":`...)
	h = strconv.AppendInt(h, created, 10)
	h = append(h, `,"model":`...)
	h = AppendString(h, model)
	h = append(h, `,"choices":[`...)
	return &ChunkEncoder{head: h, includeUsage: includeUsage, text: text}
}

// AppendDelta appends one SSE event for d (content, tool calls and finish reason; usage is
// sent separately by AppendUsage). withRole marks the first chunk of the answer, which
// carries the assistant role as OpenAI's first chunk does.
func (e *ChunkEncoder) AppendDelta(b []byte, d *Delta, withRole bool) []byte {
	b = append(b, e.head...)
	if e.text {
		b = append(b, `{"text":`...)
		b = AppendString(b, d.Content)
		b = append(b, `,"index":0,"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `{"index":0,"delta":{`...)
		n := len(b)
		sep := func() {
			if len(b) > n {
				b = append(b, ',')
			}
		}
		if withRole {
			b = append(b, `"role":"assistant"`...)
		}
		switch {
		case d.Content != "" || (withRole && len(d.ToolCalls) == 0):
			sep()
			b = append(b, `"content":`...)
			b = AppendString(b, d.Content)
		case withRole:
			b = append(b, `,"content":null`...)
		}
		if d.Refusal != "" {
			sep()
			b = append(b, `"refusal":`...)
			b = AppendString(b, d.Refusal)
		}
		if len(d.ToolCalls) > 0 {
			sep()
			b = appendToolCallDeltas(b, d.ToolCalls)
		}
		b = append(b, `},"logprobs":null,"finish_reason":`...)
	}
	if d.FinishReason != "" {
		b = AppendString(b, d.FinishReason)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, "}]"...)
	if e.includeUsage {
		b = append(b, `,"usage":null`...)
	}
	return append(b, "}\n\n"...)
}

// AppendUsage appends the final usage chunk (empty choices), sent with include_usage.
func (e *ChunkEncoder) AppendUsage(b []byte, u *Usage) []byte {
	b = append(b, e.head...)
	b = append(b, `],"usage":`...)
	b = u.AppendJSON(b)
	return append(b, "}\n\n"...)
}

// Done is the stream's successful end.
const Done = "data: [DONE]\n\n"

// AppendErrorEvent appends the in-band error that ends a stream after output was sent; the
// stream then closes without [DONE] so no client mistakes a broken answer for a finished one.
func AppendErrorEvent(b []byte, err *Error) []byte {
	b = append(b, "data: "...)
	b = err.AppendJSON(b)
	return append(b, "\n\n"...)
}

func appendToolCallDeltas(b []byte, calls []ToolCallDelta) []byte {
	b = append(b, `"tool_calls":[`...)
	for i := range calls {
		tc := &calls[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = appendInt(b, tc.Index)
		if tc.ID != "" {
			b = append(b, `,"id":`...)
			b = AppendString(b, tc.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = AppendString(b, tc.Name)
			b = append(b, `,"arguments":`...)
		} else {
			b = append(b, `,"function":{"arguments":`...)
		}
		b = AppendString(b, tc.Arguments)
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

package openai

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
)

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

// AppendDelta appends one SSE event for d (text, refusal, tool calls and the stop as the
// finish reason; usage is sent separately by AppendUsage, and reasoning is not part of
// OpenAI's chunk). withRole marks the first chunk of the answer, which
// carries the assistant role as OpenAI's first chunk does.
func (e *ChunkEncoder) AppendDelta(b []byte, d *llm.Delta, withRole bool) []byte {
	b = append(b, e.head...)
	if e.text {
		b = append(b, `{"text":`...)
		b = AppendString(b, d.Text)
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
		case d.Text != "" || (withRole && len(d.ToolCalls) == 0):
			sep()
			b = append(b, `"content":`...)
			b = AppendString(b, d.Text)
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
	if d.Stop != "" {
		b = AppendString(b, FinishReason(d.Stop))
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
func (e *ChunkEncoder) AppendUsage(b []byte, u *llm.Usage) []byte {
	b = append(b, e.head...)
	b = append(b, `],"usage":`...)
	b = AppendUsage(b, u)
	return append(b, "}\n\n"...)
}

// Done is the stream's successful end.
const Done = "data: [DONE]\n\n"

func appendToolCallDeltas(b []byte, calls []llm.ToolCallDelta) []byte {
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

// Visible reports whether d carries something a Chat Completions client sees: the stream
// commits to its route at the first such delta (reasoning, signatures and usage alone are
// not).
func Visible(d *llm.Delta) bool {
	return d.Text != "" || d.Refusal != "" || len(d.ToolCalls) > 0 || d.Stop != ""
}

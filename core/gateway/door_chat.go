package gateway

import (
	"net/http"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/record"
)

// chatDoor is OpenAI's Chat Completions: POST /v1/chat/completions.
type chatDoor struct {
	includeUsage bool
}

func (*chatDoor) endpoint() string { return record.EndpointChat }

func (d *chatDoor) decode(_ *http.Request, _ *requestCtx, body []byte, in decoding) (*llm.Request, *llm.Error) {
	req, includeUsage, e := openai.DecodeChatProfile(body, in.limits, in.profile)
	if e != nil {
		return nil, e
	}
	d.includeUsage = includeUsage
	return req, nil
}

func (*chatDoor) writeError(w http.ResponseWriter, _ *requestCtx, e *llm.Error) {
	openai.WriteError(w, e)
}

func (*chatDoor) visible(d *llm.Delta) bool { return openai.Visible(d) }

func (*chatDoor) appendAnswer(b []byte, rc *requestCtx, a *llm.Answer) []byte {
	return openai.AppendChatCompletion(b, "chatcmpl-"+randomID(24), rc.created(), rc.model, a)
}

func (d *chatDoor) encoder(rc *requestCtx) encoder {
	return &chunkEncoder{enc: openai.NewChatChunkEncoder("chatcmpl-"+randomID(24), rc.created(), rc.model, d.includeUsage), includeUsage: d.includeUsage}
}

// completionsDoor is OpenAI's legacy Completions: POST /v1/completions.
type completionsDoor struct {
	includeUsage bool
}

func (*completionsDoor) endpoint() string { return record.EndpointCompletions }

func (d *completionsDoor) decode(_ *http.Request, _ *requestCtx, body []byte, in decoding) (*llm.Request, *llm.Error) {
	req, includeUsage, e := openai.DecodeCompletionProfile(body, in.profile)
	if e != nil {
		return nil, e
	}
	d.includeUsage = includeUsage
	return req, nil
}

func (*completionsDoor) writeError(w http.ResponseWriter, _ *requestCtx, e *llm.Error) {
	openai.WriteError(w, e)
}

func (*completionsDoor) visible(d *llm.Delta) bool { return openai.Visible(d) }

func (*completionsDoor) appendAnswer(b []byte, rc *requestCtx, a *llm.Answer) []byte {
	return openai.AppendTextCompletion(b, "cmpl-"+randomID(24), rc.created(), rc.model, a)
}

func (d *completionsDoor) encoder(rc *requestCtx) encoder {
	return &chunkEncoder{enc: openai.NewTextChunkEncoder("cmpl-"+randomID(24), rc.created(), rc.model, d.includeUsage), includeUsage: d.includeUsage}
}

// chunkEncoder writes OpenAI's chunks: the first carries the assistant role, the usage chunk
// (when asked for and reported) and [DONE] close a stream that ended properly, an error event
// without [DONE] one that failed.
type chunkEncoder struct {
	enc          *openai.ChunkEncoder
	includeUsage bool
	started      bool
	finished     bool // a finish reason went out
	tools        bool // a tool call went out
}

func (*chunkEncoder) hold(*llm.Delta) {}

func (*chunkEncoder) start(b []byte, _ *llm.Delta) []byte { return b }

func (c *chunkEncoder) delta(b []byte, d *llm.Delta) []byte {
	if !openai.Visible(d) {
		return b
	}
	first := !c.started
	c.started = true
	c.finished = c.finished || d.Stop != ""
	c.tools = c.tools || len(d.ToolCalls) > 0
	return c.enc.AppendDelta(b, d, first)
}

// end closes the stream. One that ended properly without saying why (OpenRouter's Novita
// provider ends a tool call at [DONE] with no finish_reason) gets the reason clients read to
// decide whether to run tools: tool_calls when calls went out, else stop.
func (c *chunkEncoder) end(b []byte, u *llm.Usage) []byte {
	if !c.finished {
		stop := llm.StopEnd
		if c.tools {
			stop = llm.StopToolUse
		}
		b = c.delta(b, &llm.Delta{Stop: stop})
	}
	if c.includeUsage && u.Reported() {
		b = c.enc.AppendUsage(b, u.WithTotal())
	}
	return append(b, openai.Done...)
}

func (*chunkEncoder) fail(b []byte, e *llm.Error) []byte { return openai.AppendErrorEvent(b, e) }

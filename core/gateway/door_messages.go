package gateway

import (
	"net/http"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/record"
)

// messagesDoor is Anthropic's Messages: POST /v1/messages (Claude Code appends ?beta=true).
// An Anthropic-wire backend's events and answers pass through verbatim (with the gateway's
// model name), every other backend's are encoded from the normalized deltas.
type messagesDoor struct{}

func (*messagesDoor) endpoint() string { return record.EndpointMessages }

func (*messagesDoor) anthropic() {}

func (*messagesDoor) decode(r *http.Request, _ *requestCtx, body []byte, in decoding) (*llm.Request, *llm.Error) {
	req, e := messages.Decode(body, r.Header, in.limits)
	if e != nil {
		return nil, e
	}
	req.PassThrough = llm.WireAnthropic
	return req, nil
}

func (*messagesDoor) writeError(w http.ResponseWriter, rc *requestCtx, e *llm.Error) {
	messages.WriteError(w, e, rc.id)
}

// visible: on this door thinking, signatures and server-tool blocks are content too.
func (*messagesDoor) visible(d *llm.Delta) bool { return d.Content() || d.Opaque }

func (*messagesDoor) appendAnswer(b []byte, rc *requestCtx, a *llm.Answer) []byte {
	if a.RawWire == llm.WireAnthropic && len(a.Raw) > 0 {
		if patched := messages.PatchModel(a.Raw, rc.model); patched != nil {
			return append(b, patched...)
		}
	}
	return messages.AppendMessage(b, "msg_"+randomID(24), rc.model, a)
}

// encoder: message_start needs an input count before the backend has said anything on a
// translated route that reports the prompt only at the end (the OpenAI wire, Bedrock's
// Converse). count_tokens would give the backend's exact count where the backend counts, but
// that is an upstream round trip before the stream's first byte, so the estimate count_tokens
// falls back on stands in, worked out once per request. The backend's own count follows in
// message_delta. The mock and Gemini report the prompt with their first content, which wins.
func (*messagesDoor) encoder(rc *requestCtx) encoder {
	return &messagesEncoder{enc: messages.NewStreamEncoder("msg_"+randomID(24), rc.model, rc.inputEstimate), requestID: rc.id}
}

// messagesEncoder adapts messages.StreamEncoder, remembering the stop, which Anthropic sends
// at the end with the final usage (message_delta) rather than when it happens.
type messagesEncoder struct {
	enc       *messages.StreamEncoder
	requestID string
	stop      llm.StopReason
	sequence  string
	tools     bool
}

func (m *messagesEncoder) hold(d *llm.Delta) { m.note(d); m.enc.Hold(d) }

func (m *messagesEncoder) start(b []byte, first *llm.Delta) []byte { return m.enc.Start(b, first) }

func (m *messagesEncoder) delta(b []byte, d *llm.Delta) []byte {
	m.note(d)
	return m.enc.Delta(b, d)
}

func (m *messagesEncoder) note(d *llm.Delta) {
	m.tools = m.tools || len(d.ToolCalls) > 0
	if d.Stop != "" {
		m.stop, m.sequence = d.Stop, d.StopSequence
	}
}

func (m *messagesEncoder) end(b []byte, u *llm.Usage) []byte {
	stop := m.stop
	switch {
	case stop != "":
	case m.tools:
		stop = llm.StopToolUse
	default:
		stop = llm.StopEnd
	}
	return m.enc.End(b, stop, m.sequence, u)
}

func (m *messagesEncoder) fail(b []byte, e *llm.Error) []byte {
	return messages.AppendErrorEvent(b, e, m.requestID)
}

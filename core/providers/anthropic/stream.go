package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"unicode/utf8"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// NewStream translates a Messages event stream, read from r, into deltas. With raw set (a
// Messages door client) every upstream event also rides on a delta verbatim (llm.Delta.Raw),
// the ones that carry nothing normalized included, and blocks the gateway does not model
// mark their deltas Opaque. r may deliver the
// SSE bytes in chunks of any size (Vertex AI's StreamRawPredict cuts them anywhere). ctx is
// the attempt's context: when a read fails because the gateway cancelled it (first-byte or
// idle timeout), that cause is reported rather than a broken stream. The stream closes r.
//
// What becomes of each event:
//
//	message_start            nothing visible; its usage (input and cache counts) is kept
//	content_block_start      text: its text, if any; tool_use: a tool call with a dense index
//	                         (the count of tool_use blocks before it), its id, name and no
//	                         arguments yet; redacted_thinking: its data; other blocks
//	                         (thinking, server tools): nothing yet
//	content_block_delta      text_delta: text; input_json_delta: an arguments fragment;
//	                         thinking_delta: thinking; signature_delta: the signature;
//	                         citations and other blocks' deltas: nothing normalized
//	content_block_stop       a tool_use block that streamed no input gets "{}", as a
//	                         non-streamed answer would
//	message_delta            the finish reason with the usage so far (output counts are
//	                         cumulative; newer API versions repeat the input counts)
//	message_stop             the proper end: io.EOF
//	ping, unknown events     nothing
//	error                    a classified *providers.Error (overloaded_error is busy)
//
// The prompt usage also rides on the first visible delta, so an answer that breaks off
// later is still charged for its input.
func NewStream(ctx context.Context, r io.ReadCloser, provider string, raw bool) llm.Stream {
	if ctx == nil {
		ctx = context.Background()
	}
	return &stream{ctx: ctx, body: r, sse: providers.NewSSEReader(r), provider: provider, raw: raw}
}

// NewStreamFor is NewStream for req on a route whose model is m: raw for a
// Messages door client, and a JSON answer carried by the answer tool streamed as the text
// (providers.StreamAnswerAsContent).
func NewStreamFor(ctx context.Context, r io.ReadCloser, provider string, req *llm.Request, m Model) llm.Stream {
	return providers.StreamAnswerAsContent(NewStream(ctx, r, provider, req.PassThrough == llm.WireAnthropic), respondTool(req, m))
}

type stream struct {
	ctx      context.Context
	body     io.ReadCloser
	sse      *providers.SSEReader
	look     providers.Lookahead
	provider string
	raw      bool
	event    llm.RawEvent // the current upstream event, when raw
	model    string       // message_start's model

	usage      wireUsage
	blocks     []blockState // by Anthropic content block index
	tools      int          // tool_use blocks seen so far
	promptSent bool
	finished   bool  // the finish reason went out
	done       bool  // message_stop arrived
	err        error // the failure already reported, repeated by later calls
	closed     bool
}

type blockState struct {
	tool    int  // dense tool call index; -1 for blocks that are not tool_use
	args    bool // some input was streamed
	visible bool // a text, tool_use or thinking block, whose deltas are normalized
}

type wireEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	Index        int        `json:"index"`
	ContentBlock *wireBlock `json:"content_block"`
	Delta        *struct {
		Type         string  `json:"type"`
		Text         string  `json:"text"`
		PartialJSON  string  `json:"partial_json"`
		Thinking     string  `json:"thinking"`
		Signature    string  `json:"signature"`
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
}

func (s *stream) Next() (llm.Delta, error) { return s.look.Next(s) }

// Pending reports whether the next delta is in hand (providers.Lookahead): without it the
// gateway would flush after every event.
func (s *stream) Pending() bool { return s.look.Pending(s, s.sse) }

// Step reads one event; in raw mode every event yields a delta.
func (s *stream) Step() (llm.Delta, bool, error) {
	if s.err != nil {
		return llm.Delta{}, false, s.err
	}
	if s.done {
		return llm.Delta{}, false, io.EOF
	}
	ev, err := s.sse.Next()
	if err != nil {
		s.err = s.broken(err)
		return llm.Delta{}, false, s.err
	}
	if len(ev.Data) == 0 {
		return llm.Delta{}, false, nil
	}
	if index, kind, text, ok := fastDelta(ev.Data); ok {
		d, ok := s.delta(index, kind, text)
		if ok || s.raw {
			return s.out(d, "content_block_delta", ev.Data, !ok), true, nil
		}
		return llm.Delta{}, false, nil
	}
	var e wireEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		s.err = &providers.Error{Class: providers.StreamBroken, Provider: s.provider,
			Message: "malformed stream event: " + err.Error(), Err: err}
		return llm.Delta{}, false, s.err
	}
	if e.Type == "" {
		e.Type = string(ev.Name)
	}
	d, ok, opaque, err := s.translate(&e, ev.Data)
	if err != nil {
		s.err = err
		return llm.Delta{}, false, err
	}
	if ok || s.raw {
		return s.out(d, e.Type, ev.Data, opaque), true, nil
	}
	return llm.Delta{}, false, nil
}

// out finishes a delta: the prompt usage rides on the first one with content, and in raw
// mode the upstream event rides on every one.
func (s *stream) out(d llm.Delta, name string, data []byte, opaque bool) llm.Delta {
	if d.Content() {
		d = s.withPrompt(d)
	}
	if s.raw {
		s.event = llm.RawEvent{Wire: llm.WireAnthropic, Name: name, Data: data}
		d.Raw = &s.event
		d.Opaque = opaque
	}
	return d
}

// translate handles one event: ok reports a delta with content, opaque an event whose
// content the normalized fields do not show.
func (s *stream) translate(e *wireEvent, data []byte) (d llm.Delta, ok, opaque bool, err error) {
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			s.model = e.Message.Model
		}
		if e.Message != nil && e.Message.Usage != nil {
			u := *e.Message.Usage
			// message_start's output count is a placeholder (about 1); message_delta gives
			// the real, cumulative one.
			u.OutputTokens = nil
			s.usage.merge(&u)
		}
	case "content_block_start":
		st := blockState{tool: -1}
		if cb := e.ContentBlock; cb != nil {
			switch cb.Type {
			case "text":
				st.visible = true
				d.Text = cb.Text
			case "thinking":
				st.visible = true
				d.Thinking = cb.Thinking
			case "redacted_thinking":
				d.RedactedThinking = cb.Data
			case "tool_use":
				st.visible, st.tool = true, s.tools
				s.tools++
				// A missing id is the gateway's to make up, unique like any other.
				d.ToolCalls = []llm.ToolCallDelta{{Index: st.tool, ID: cb.ID, Name: cb.Name}}
			default:
				opaque = true // a server tool's call or result
			}
		}
		s.setBlock(e.Index, st)
	case "content_block_delta":
		if e.Delta != nil {
			text := e.Delta.Text
			switch e.Delta.Type {
			case "input_json_delta":
				text = e.Delta.PartialJSON
			case "thinking_delta":
				text = e.Delta.Thinking
			case "signature_delta":
				text = e.Delta.Signature
			}
			d, ok = s.delta(e.Index, e.Delta.Type, text)
			return d, ok, !ok, nil
		}
	case "content_block_stop":
		if st := s.block(e.Index); st != nil && st.tool >= 0 && !st.args {
			st.args = true
			d.ToolCalls = []llm.ToolCallDelta{{Index: st.tool, Arguments: "{}"}}
		}
	case "message_delta":
		s.usage.merge(e.Usage)
		if e.Delta != nil && e.Delta.StopReason != nil && !s.finished {
			s.finished = true
			u := s.usage.llm()
			d.Stop, d.Usage = StopReason(*e.Delta.StopReason), &u
			if e.Delta.StopSequence != nil {
				d.StopSequence = *e.Delta.StopSequence
			}
		}
	case "message_stop":
		s.done = true
		if !s.finished {
			// No stop_reason came; the message still ended properly, so say so.
			s.finished = true
			u := s.usage.llm()
			d.Stop, d.Usage = llm.StopEnd, &u
		}
	case "error":
		return d, false, false, eventError(data, s.provider)
	}
	return d, d.Content(), opaque, nil
}

// delta handles a content_block_delta of the given type carrying text (the text, partial
// JSON, thinking or signature).
func (s *stream) delta(index int, kind, text string) (d llm.Delta, ok bool) {
	st := s.block(index)
	if st == nil || !st.visible || text == "" {
		return d, false
	}
	switch kind {
	case "text_delta":
		if st.tool < 0 {
			d.Text = text
		}
	case "thinking_delta":
		if st.tool < 0 {
			d.Thinking = text
		}
	case "signature_delta":
		if st.tool < 0 {
			d.Signature = text
		}
	case "input_json_delta":
		if st.tool >= 0 {
			st.args = true
			d.ToolCalls = []llm.ToolCallDelta{{Index: st.tool, Arguments: text}}
		}
	}
	return d, d.Content()
}

// fastDelta reads the events that make up nearly all of a stream, text and tool input
// deltas, in the exact form Anthropic writes them:
//
//	{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
//
// without reflection-based decoding. Anything else, spacing included, is left to the general
// decoder (ok false).
func fastDelta(data []byte) (index int, kind, text string, ok bool) {
	const prefix = `{"type":"content_block_delta","index":`
	rest, found := bytes.CutPrefix(data, []byte(prefix))
	if !found {
		return 0, "", "", false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' && n < 6 {
		index = index*10 + int(rest[n]-'0')
		n++
	}
	if n == 0 {
		return 0, "", "", false
	}
	rest = rest[n:]
	var field string
	switch {
	case bytes.HasPrefix(rest, []byte(`,"delta":{"type":"text_delta","text":"`)):
		kind, field = "text_delta", `,"delta":{"type":"text_delta","text":`
	case bytes.HasPrefix(rest, []byte(`,"delta":{"type":"input_json_delta","partial_json":"`)):
		kind, field = "input_json_delta", `,"delta":{"type":"input_json_delta","partial_json":`
	default:
		return 0, "", "", false
	}
	str, found := bytes.CutSuffix(rest[len(field):], []byte(`}}`))
	if !found || len(str) < 2 || str[len(str)-1] != '"' {
		return 0, "", "", false
	}
	inner := str[1 : len(str)-1]
	if bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 && utf8.Valid(inner) {
		return index, kind, string(inner), true
	}
	// Escapes: let the decoder unquote the one string, which also proves it is one string.
	if json.Unmarshal(str, &text) != nil {
		return 0, "", "", false
	}
	return index, kind, text, true
}

// withPrompt puts the prompt usage on the first visible delta.
func (s *stream) withPrompt(d llm.Delta) llm.Delta {
	if s.promptSent {
		return d
	}
	s.promptSent = true
	if d.Usage == nil && s.usage.InputTokens != nil {
		u := wireUsage{InputTokens: s.usage.InputTokens, CacheCreationInputTokens: s.usage.CacheCreationInputTokens,
			CacheReadInputTokens: s.usage.CacheReadInputTokens}
		lu := u.llm()
		d.Usage = &lu
	}
	return d
}

func (s *stream) block(i int) *blockState {
	if i < 0 || i >= len(s.blocks) {
		return nil
	}
	return &s.blocks[i]
}

func (s *stream) setBlock(i int, st blockState) {
	if i < 0 || i > 1<<16 {
		return // nonsense index: the block's deltas are ignored
	}
	for len(s.blocks) <= i {
		s.blocks = append(s.blocks, blockState{tool: -1})
	}
	s.blocks[i] = st
}

// broken reports a stream that ended without message_stop.
func (s *stream) broken(err error) error {
	if context.Cause(s.ctx) != nil {
		return providers.AsError(s.ctx, err, s.provider)
	}
	return providers.BrokenStream(err, s.provider, "the stream ended before message_stop")
}

// Close releases the upstream. After message_stop the rest is read so the connection can be
// reused; otherwise it is closed at once.
func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.done {
		return providers.Drain(s.body)
	}
	return s.body.Close()
}

// ResponseModel is the model message_start named (llm.ModelReporter).
func (s *stream) ResponseModel() string { return s.model }

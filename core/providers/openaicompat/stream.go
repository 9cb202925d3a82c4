package openaicompat

import (
	"io"
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// stream translates OpenAI SSE chunks into deltas. The upstream is asked for usage, so its
// final usage chunk is folded into the delta stream like any other.
type stream struct {
	body     io.ReadCloser
	sse      *providers.SSEReader
	look     providers.Lookahead
	provider string
	done     bool
	model    string // the model the chunks name
}

// newStream reads chat.completion.chunk events, or text_completion ones (whose text the
// parser reads as content).
func newStream(body io.ReadCloser, provider string) *stream {
	return &stream{body: body, sse: providers.NewSSEReader(body), provider: provider}
}

func (s *stream) Next() (llm.Delta, error) { return s.look.Next(s) }

// Pending reports whether the next delta is in hand (providers.Lookahead).
func (s *stream) Pending() bool { return s.look.Pending(s, s.sse) }

// Step reads one chunk. Role-only preambles, reasoning text (not returned: its tokens still
// count as output) and empty keep-alive chunks carry nothing for the client.
func (s *stream) Step() (llm.Delta, bool, error) {
	if s.done {
		return llm.Delta{}, false, io.EOF
	}
	ev, err := s.sse.Next()
	if err != nil {
		return llm.Delta{}, false, s.broken(err)
	}
	if string(ev.Data) == "[DONE]" {
		s.done = true
		return llm.Delta{}, false, io.EOF
	}
	if len(ev.Data) == 0 {
		return llm.Delta{}, false, nil
	}
	c := chunk{wantModel: s.model == ""}
	if err := parseChunk(ev.Data, &c); err != nil {
		return llm.Delta{}, false, &providers.Error{Class: providers.StreamBroken, Provider: s.provider,
			Message: "malformed stream chunk: " + err.Error(), Err: err}
	}
	if c.errRaw != nil {
		return llm.Delta{}, false, s.inBandError(ev.Data)
	}
	if c.model != "" {
		s.model = c.model
	}
	d := llm.Delta{Text: c.content, Refusal: c.refusal, ToolCalls: c.toolCalls, Usage: c.usage.llm()}
	if c.finish != "" {
		d.Stop = openai.StopReason(c.finish)
	}
	return d, d.Content() || d.Usage != nil, nil
}

// inBandError handles an error sent as a data event after a 200 (OpenRouter does this once
// generation has begun; OpenAI on a mid-stream failure).
func (s *stream) inBandError(data []byte) error {
	code, msg, _ := providers.ParseErrorBody(data)
	class := providers.StreamBroken
	if n, err := strconv.Atoi(code); err == nil && n >= 400 {
		class = providers.ClassifyStatus(n)
	} else if code == "overloaded_error" {
		class = providers.Overloaded
	} else if code == "rate_limit_exceeded" {
		class = providers.RateLimited
	}
	if class == providers.BadRequest {
		class = providers.StreamBroken // after a 200 the request itself was accepted
	}
	if msg == "" {
		msg = "error event in the stream"
	}
	return &providers.Error{Class: class, Code: code, Message: msg, Provider: s.provider}
}

func (s *stream) broken(err error) error {
	return providers.BrokenStream(err, s.provider, "the stream ended without [DONE]")
}

func (s *stream) Close() error {
	if s.done {
		providers.Drain(s.body)
		return nil
	}
	return s.body.Close()
}

// ResponseModel is the model the chunks named (llm.ModelReporter).
func (s *stream) ResponseModel() string { return s.model }

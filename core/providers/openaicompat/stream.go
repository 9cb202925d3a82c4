package openaicompat

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// stream translates OpenAI SSE chunks into deltas. The upstream is asked for usage, so its
// final usage chunk is folded into the delta stream like any other.
type stream struct {
	body     io.ReadCloser
	sse      *providers.SSEReader
	provider string
	text     bool // legacy completions: choices[].text instead of choices[].delta
	done     bool
}

func newStream(body io.ReadCloser, provider string, text bool) *stream {
	return &stream{body: body, sse: providers.NewSSEReader(body), provider: provider, text: text}
}

type upstreamChunk struct {
	Choices []struct {
		Text  *string `json:"text"`
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openai.Usage   `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (s *stream) Next() (openai.Delta, error) {
	for {
		if s.done {
			return openai.Delta{}, io.EOF
		}
		ev, err := s.sse.Next()
		if err != nil {
			return openai.Delta{}, s.broken(err)
		}
		if string(ev.Data) == "[DONE]" {
			s.done = true
			return openai.Delta{}, io.EOF
		}
		if len(ev.Data) == 0 {
			continue
		}
		var c upstreamChunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			return openai.Delta{}, &providers.Error{Class: providers.StreamBroken, Provider: s.provider,
				Message: "malformed stream chunk: " + err.Error(), Err: err}
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return openai.Delta{}, s.inBandError(ev.Data)
		}
		var d openai.Delta
		if c.Usage != nil {
			d.Usage = c.Usage
		}
		if len(c.Choices) > 0 {
			ch := &c.Choices[0]
			if s.text {
				if ch.Text != nil {
					d.Content = *ch.Text
				}
			} else {
				if ch.Delta.Content != nil {
					d.Content = *ch.Delta.Content
				}
				if ch.Delta.Refusal != nil {
					d.Refusal = *ch.Delta.Refusal
				}
				if n := len(ch.Delta.ToolCalls); n > 0 {
					d.ToolCalls = make([]openai.ToolCallDelta, n)
					for i, tc := range ch.Delta.ToolCalls {
						d.ToolCalls[i] = openai.ToolCallDelta{Index: tc.Index, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
					}
				}
			}
			if ch.FinishReason != nil {
				d.FinishReason = *ch.FinishReason
			}
		}
		if d.Visible() || d.Usage != nil {
			return d, nil
		}
		// Role-only preambles, reasoning text (not returned: its tokens still count as
		// output) and empty keep-alive chunks carry nothing for the client.
	}
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
	var pe *providers.Error
	if errors.As(err, &pe) {
		return pe
	}
	msg := "the stream ended without [DONE]"
	if err != io.EOF {
		msg = "reading the stream: " + err.Error()
	}
	return &providers.Error{Class: providers.StreamBroken, Provider: s.provider, Message: msg, Err: err}
}

func (s *stream) Close() error {
	if s.done {
		drain(s.body)
		return nil
	}
	return s.body.Close()
}

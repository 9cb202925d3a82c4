package vertex

import (
	"context"
	"io"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// geminiStream starts a StreamGenerateContent call and receives its first message before
// returning: the client hands back a stream even when the call failed at once, and the
// failure only shows on the first receive, while the gateway can still fail over.
func (p *Provider) geminiStream(ctx context.Context, req *llm.Request, t providers.Target) (llm.Stream, error) {
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	rs, err := client.StreamGenerateContent(sctx, buildGemini(req, p.geminiModel(t.Model), t))
	if err != nil {
		cancel()
		return nil, callError(ctx, err, Gemini, false)
	}
	s := newGeminiStream(ctx, rs.Recv, cancel, showThoughts(req))
	s.first, s.firstErr = rs.Recv()
	if s.firstErr != nil && s.firstErr != io.EOF {
		cancel()
		return nil, callError(ctx, s.firstErr, Gemini, false)
	}
	s.primed = true
	return s, nil
}

// newGeminiStream translates the messages recv yields. ctx is the attempt's context, whose
// cancellation cause names a gateway timeout; cancel ends the call; thoughts says whether
// thought parts are shown (as llm.Delta.Thinking).
func newGeminiStream(ctx context.Context, recv func() (*aiplatformpb.GenerateContentResponse, error), cancel func(), thoughts bool) *geminiStream {
	return &geminiStream{ctx: ctx, recv: recv, cancel: cancel, thoughts: thoughts}
}

// geminiStream turns StreamGenerateContent messages into deltas:
//
//	text parts          text; thought parts: thinking when shown, else nothing
//	functionCall parts  one tool call each, whole (v1 streams calls in one piece), with a
//	                    dense index and no id (v1 has none: the gateway gives one)
//	finishReason        kept; the finish delta goes out at the end of the stream, with the
//	                    usage of the last non-empty usageMetadata, so a usage-only message
//	                    after the finish reason still counts
//	promptFeedback      a blocked prompt (no candidates) finishes as content_filter
//	end of stream       the finish delta, then io.EOF: gRPC reports a cut stream as an error
//	                    status, so a clean end is a proper one. A stream that said nothing at
//	                    all ends with io.EOF alone, which the gateway treats as broken.
type geminiStream struct {
	ctx      context.Context
	recv     func() (*aiplatformpb.GenerateContentResponse, error)
	cancel   func()
	thoughts bool

	first    *aiplatformpb.GenerateContentResponse // received before the stream was handed out
	firstErr error
	primed   bool

	calls   int // tool calls so far: the next call's index
	began   bool
	finish  aiplatformpb.Candidate_FinishReason
	blocked bool
	usage   *aiplatformpb.GenerateContentResponse_UsageMetadata
	done    bool
	err     error
	closed  bool
}

func (s *geminiStream) Next() (llm.Delta, error) {
	for {
		if s.err != nil {
			return llm.Delta{}, s.err
		}
		if s.done {
			return llm.Delta{}, io.EOF
		}
		resp, err := s.receive()
		if err == io.EOF {
			return s.end()
		}
		if err != nil {
			s.err = callError(s.ctx, err, Gemini, s.began)
			return llm.Delta{}, s.err
		}
		if d := s.translate(resp); d.Content() {
			if !s.began {
				d.Usage = promptUsage(s.usage)
			}
			s.began = true
			return d, nil
		}
	}
}

func (s *geminiStream) receive() (*aiplatformpb.GenerateContentResponse, error) {
	if s.primed {
		s.primed = false
		return s.first, s.firstErr
	}
	return s.recv()
}

func (s *geminiStream) translate(resp *aiplatformpb.GenerateContentResponse) llm.Delta {
	if reported(resp.GetUsageMetadata()) {
		s.usage = resp.GetUsageMetadata()
	}
	cands := resp.GetCandidates()
	if len(cands) == 0 {
		s.blocked = s.blocked || promptBlocked(resp)
		return llm.Delta{}
	}
	var d llm.Delta
	var text, thinking strings.Builder
	for _, part := range cands[0].GetContent().GetParts() {
		pt, ok := readPart(part, s.thoughts)
		switch {
		case !ok:
		case pt.Kind == llm.PartText:
			text.WriteString(pt.Text)
		case pt.Kind == llm.PartThinking:
			thinking.WriteString(pt.Text)
		case pt.Kind == llm.PartToolUse:
			d.ToolCalls = append(d.ToolCalls, llm.ToolCallDelta{Index: s.calls, Name: pt.Name, Arguments: pt.Input})
			s.calls++
		}
	}
	d.Text, d.Thinking = text.String(), thinking.String()
	if r := cands[0].GetFinishReason(); r != aiplatformpb.Candidate_FINISH_REASON_UNSPECIFIED {
		s.finish = r
	}
	return d
}

// promptUsage is the prompt's side of a usage reported before or with the first content
// (Gemini's chunks may carry usageMetadata from the first, Vertex AI's often only the last),
// so the Messages door's message_start can say the prompt's count; nil when none is known.
// The output so far is left out: the end has the count.
func promptUsage(m *aiplatformpb.GenerateContentResponse_UsageMetadata) *llm.Usage {
	u := geminiUsage(m)
	if u == nil || u.InputTokens == nil {
		return nil
	}
	return &llm.Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens}
}

// end is the clean end of the call: the finish delta with the final usage, then io.EOF.
func (s *geminiStream) end() (llm.Delta, error) {
	s.done = true
	if !s.began && !s.blocked && s.finish == aiplatformpb.Candidate_FINISH_REASON_UNSPECIFIED {
		return llm.Delta{}, io.EOF
	}
	d := llm.Delta{Stop: stopReason(s.finish, s.calls > 0), Usage: geminiUsage(s.usage)}
	if s.blocked && !s.began {
		d.Stop = llm.StopContentFilter
	}
	return d, nil
}

// Close ends the call; safe to call more than once.
func (s *geminiStream) Close() error {
	if !s.closed {
		s.closed = true
		s.cancel()
	}
	return nil
}

package vertex

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// geminiChat makes one GenerateContent call.
func (p *Provider) geminiChat(ctx context.Context, req *openai.ChatRequest, t providers.Target) (*openai.Completion, error) {
	greq, oe := buildGemini(req, p.geminiModel(t.Model), t)
	if oe != nil {
		return nil, refused(oe)
	}
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	resp, err := client.GenerateContent(ctx, greq)
	if err != nil {
		return nil, callError(ctx, err, Gemini, false)
	}
	return geminiCompletion(resp, newCallID)
}

// geminiCompletion converts a GenerateContent answer. newID mints the ids of the tool calls,
// which v1's FunctionCall does not carry.
func geminiCompletion(resp *aiplatformpb.GenerateContentResponse, newID func() string) (*openai.Completion, error) {
	c := &openai.Completion{}
	if u := geminiUsage(resp.GetUsageMetadata()); u != nil {
		c.Usage = *u
	}
	if len(resp.GetCandidates()) == 0 {
		if promptBlocked(resp) {
			c.FinishReason = openai.FinishContentFilter
			return c, nil
		}
		return nil, &providers.Error{Class: providers.Unavailable, Provider: Name, Message: "the response has no candidates"}
	}
	cand := resp.GetCandidates()[0]
	var text strings.Builder
	for _, part := range cand.GetContent().GetParts() {
		if s, call := readPart(part, newID); call != nil {
			c.ToolCalls = append(c.ToolCalls, *call)
		} else {
			text.WriteString(s)
		}
	}
	if text.Len() > 0 {
		s := text.String()
		c.Content = &s
	}
	c.FinishReason = finishReason(cand.GetFinishReason(), len(c.ToolCalls) > 0)
	return c, nil
}

// readPart returns a part's text, or the tool call it makes. Thoughts, and parts the gateway
// has no OpenAI form for (code execution, inline data), contribute nothing.
func readPart(part *aiplatformpb.Part, newID func() string) (string, *openai.ToolCall) {
	if part.GetThought() {
		return "", nil
	}
	switch d := part.GetData().(type) {
	case *aiplatformpb.Part_Text:
		return d.Text, nil
	case *aiplatformpb.Part_FunctionCall:
		return "", &openai.ToolCall{ID: newID(), Type: "function",
			Function: openai.FunctionCall{Name: d.FunctionCall.GetName(), Arguments: argsJSON(d.FunctionCall)}}
	}
	return "", nil
}

// argsJSON renders a call's arguments as the JSON object text OpenAI carries. Keys come out
// sorted: the proto map has no order, and a stream and a non-stream answer must agree.
func argsJSON(fc *aiplatformpb.FunctionCall) string {
	if fc.GetArgs() == nil {
		return "{}"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // arguments are data for the client, not HTML
	if err := enc.Encode(fc.GetArgs().AsMap()); err != nil {
		return "{}" // a NaN or infinity cannot arrive in a decoded proto
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
}

// finishReason maps Gemini's finish reason. Gemini says STOP after function calls, so any
// call makes it tool_calls; the safety family is content_filter; everything else that ends
// an answer is stop.
func finishReason(r aiplatformpb.Candidate_FinishReason, calls bool) string {
	switch {
	case calls:
		return openai.FinishToolCalls
	case r == aiplatformpb.Candidate_MAX_TOKENS:
		return openai.FinishLength
	case filtered(r):
		return openai.FinishContentFilter
	}
	return openai.FinishStop
}

func filtered(r aiplatformpb.Candidate_FinishReason) bool {
	switch r {
	case aiplatformpb.Candidate_SAFETY, aiplatformpb.Candidate_RECITATION, aiplatformpb.Candidate_BLOCKLIST,
		aiplatformpb.Candidate_PROHIBITED_CONTENT, aiplatformpb.Candidate_SPII, aiplatformpb.Candidate_MODEL_ARMOR:
		return true
	}
	// Newer reasons this client does not name yet (IMAGE_SAFETY, ...) arrive as bare
	// numbers; their names cannot be read, so they end as stop.
	return false
}

// promptBlocked reports an answer refused before any candidate: the prompt itself was
// blocked.
func promptBlocked(resp *aiplatformpb.GenerateContentResponse) bool {
	return resp.GetPromptFeedback().GetBlockReason() != aiplatformpb.GenerateContentResponse_PromptFeedback_BLOCKED_REASON_UNSPECIFIED
}

// geminiUsage converts one usageMetadata, or returns nil when it reports nothing (streams
// send empty ones before the last). proto3 cannot tell a zero from an absent count, and no
// prompt is zero tokens, so a zero prompt or cache count is left out; a reported metadata's
// completion count is kept even at zero (a blocked answer generated nothing).
func geminiUsage(m *aiplatformpb.GenerateContentResponse_UsageMetadata) *openai.Usage {
	if !reported(m) {
		return nil
	}
	u := &openai.Usage{}
	if n := m.GetPromptTokenCount(); n > 0 {
		u.PromptTokens = openai.Int(int(n))
	}
	u.CompletionTokens = openai.Int(int(m.GetCandidatesTokenCount() + m.GetThoughtsTokenCount()))
	if n := m.GetCachedContentTokenCount(); n > 0 {
		u.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: openai.Int(int(n))}
	}
	if n := m.GetThoughtsTokenCount(); n > 0 {
		u.CompletionTokensDetails = &openai.CompletionTokensDetails{ReasoningTokens: openai.Int(int(n))}
	}
	return u
}

func reported(m *aiplatformpb.GenerateContentResponse_UsageMetadata) bool {
	return m.GetPromptTokenCount() > 0 || m.GetCandidatesTokenCount() > 0 || m.GetTotalTokenCount() > 0 ||
		m.GetThoughtsTokenCount() > 0 || m.GetCachedContentTokenCount() > 0
}

// newCallID mints a tool call id in OpenAI's form. Ids only have to be unique within a
// conversation; 24 characters of base62 make a collision negligible.
func newCallID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 5+24)
	copy(b, "call_")
	for i := 5; i < len(b); i++ {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

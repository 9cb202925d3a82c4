package vertex

import (
	"bytes"
	"context"
	"encoding/json"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// geminiGenerate makes one GenerateContent call.
func (p *Provider) geminiGenerate(ctx context.Context, req *llm.Request, t providers.Target) (*llm.Answer, error) {
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	resp, err := client.GenerateContent(ctx, buildGemini(req, p.geminiModel(t.Model), t))
	if err != nil {
		return nil, callError(ctx, err, Gemini, false)
	}
	return geminiAnswer(resp, showThoughts(req))
}

// geminiCount counts the input Gemini would read for req: its contents, system instruction,
// tools and generation settings, translated as for a call.
func (p *Provider) geminiCount(ctx context.Context, req *llm.Request, t providers.Target) (int, error) {
	client, err := p.utilityClient()
	if err != nil {
		return 0, err
	}
	g := buildGemini(req, p.geminiModel(t.Model), t)
	resp, err := client.CountTokens(ctx, &aiplatformpb.CountTokensRequest{Endpoint: g.Model, Model: g.Model, Contents: g.Contents,
		SystemInstruction: g.SystemInstruction, Tools: g.Tools, GenerationConfig: g.GenerationConfig})
	if err != nil {
		return 0, callError(ctx, err, Gemini, false)
	}
	if resp.GetTotalTokens() <= 0 {
		return 0, &providers.Error{Class: providers.Unavailable, Provider: Name, Message: "the token count is missing"}
	}
	return int(resp.GetTotalTokens()), nil
}

// geminiAnswer converts a GenerateContent answer: consecutive text parts join into one text
// part, consecutive thoughts into one thinking part (when thoughts, which the request asked
// Gemini to include, are to be shown; never otherwise), and each function call is a tool_use
// part. v1's FunctionCall carries no id: the gateway gives each call one.
func geminiAnswer(resp *aiplatformpb.GenerateContentResponse, thoughts bool) (*llm.Answer, error) {
	a := &llm.Answer{}
	if u := geminiUsage(resp.GetUsageMetadata()); u != nil {
		a.Usage = *u
	}
	if len(resp.GetCandidates()) == 0 {
		if promptBlocked(resp) {
			a.Stop = llm.StopContentFilter
			return a, nil
		}
		return nil, &providers.Error{Class: providers.Unavailable, Provider: Name, Message: "the response has no candidates"}
	}
	cand := resp.GetCandidates()[0]
	calls := 0
	for _, part := range cand.GetContent().GetParts() {
		pt, ok := readPart(part, thoughts)
		if !ok {
			continue
		}
		if n := len(a.Parts); n > 0 && pt.Kind != llm.PartToolUse && a.Parts[n-1].Kind == pt.Kind {
			a.Parts[n-1].Text += pt.Text
			continue
		}
		if pt.Kind == llm.PartToolUse {
			calls++
		}
		a.Parts = append(a.Parts, pt)
	}
	a.Stop = stopReason(cand.GetFinishReason(), calls > 0)
	return a, nil
}

// readPart returns what a part contributes to the answer: its text, its thought, or the
// tool call it makes. Empty texts, thoughts not to be shown, and parts the gateway has no
// form for (code execution, inline data) contribute nothing.
func readPart(part *aiplatformpb.Part, thoughts bool) (llm.Part, bool) {
	switch d := part.GetData().(type) {
	case *aiplatformpb.Part_Text:
		switch {
		case d.Text == "":
		case part.GetThought():
			if thoughts {
				return llm.Part{Kind: llm.PartThinking, Text: d.Text}, true
			}
		default:
			return llm.Part{Kind: llm.PartText, Text: d.Text}, true
		}
	case *aiplatformpb.Part_FunctionCall:
		if !part.GetThought() {
			return llm.Part{Kind: llm.PartToolUse, Name: d.FunctionCall.GetName(), Input: argsJSON(d.FunctionCall)}, true
		}
	}
	return llm.Part{}, false
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

// stopReason maps Gemini's finish reason. Gemini says STOP after function calls, so any
// call makes it tool_use; the safety family is content_filter; everything else that ends an
// answer is a plain end (Gemini does not say which stop sequence matched).
func stopReason(r aiplatformpb.Candidate_FinishReason, calls bool) llm.StopReason {
	switch {
	case calls:
		return llm.StopToolUse
	case r == aiplatformpb.Candidate_MAX_TOKENS:
		return llm.StopMaxTokens
	case filtered(r):
		return llm.StopContentFilter
	}
	return llm.StopEnd
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
// output count is kept even at zero (a blocked answer generated nothing). The input is
// promptTokenCount, cached share included; the output is candidatesTokenCount plus
// thoughtsTokenCount, the thoughts also as reasoning tokens.
func geminiUsage(m *aiplatformpb.GenerateContentResponse_UsageMetadata) *llm.Usage {
	if !reported(m) {
		return nil
	}
	u := &llm.Usage{}
	if n := m.GetPromptTokenCount(); n > 0 {
		u.InputTokens = llm.Int(int(n))
	}
	u.OutputTokens = llm.Int(int(m.GetCandidatesTokenCount() + m.GetThoughtsTokenCount()))
	if n := m.GetCachedContentTokenCount(); n > 0 {
		u.CacheReadTokens = llm.Int(int(n))
	}
	if n := m.GetThoughtsTokenCount(); n > 0 {
		u.ReasoningTokens = llm.Int(int(n))
	}
	return u
}

func reported(m *aiplatformpb.GenerateContentResponse_UsageMetadata) bool {
	return m.GetPromptTokenCount() > 0 || m.GetCandidatesTokenCount() > 0 || m.GetTotalTokenCount() > 0 ||
		m.GetThoughtsTokenCount() > 0 || m.GetCachedContentTokenCount() > 0
}

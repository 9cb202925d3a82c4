package bedrock

import (
	"encoding/base64"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// answer translates a Converse answer: text blocks, tool calls and reasoning in order (a
// model may write text, call a tool and write again). An answer with neither text nor tool
// calls still says it, with an empty text.
func answer(out *bedrockruntime.ConverseOutput) (*llm.Answer, error) {
	stop, malformed := stopReason(out.StopReason)
	if malformed {
		// Without a stream nothing reached the client yet: an error lets the gateway try
		// another route instead of returning a broken answer.
		return nil, &providers.Error{Class: providers.Unavailable, Code: string(out.StopReason), Provider: displayName,
			Message: "the model produced malformed output (stopReason " + string(out.StopReason) + ")"}
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: displayName, Message: "the answer holds no message"}
	}
	a := &llm.Answer{Stop: stop, Usage: usage(out.Usage)}
	texts, calls := 0, 0
	for _, b := range msg.Value.Content {
		switch v := b.(type) {
		case *types.ContentBlockMemberText:
			if v.Value != "" {
				a.Parts = append(a.Parts, llm.Part{Kind: llm.PartText, Text: v.Value})
				texts++
			}
		case *types.ContentBlockMemberToolUse:
			args := "{}"
			if v.Value.Input != nil {
				raw, err := v.Value.Input.MarshalSmithyDocument()
				if err != nil {
					return nil, &providers.Error{Class: providers.Unavailable, Provider: displayName, Err: err,
						Message: "unreadable tool input: " + err.Error()}
				}
				if len(raw) > 0 {
					args = string(raw)
				}
			}
			a.Parts = append(a.Parts, llm.Part{Kind: llm.PartToolUse, ID: str(v.Value.ToolUseId), Name: str(v.Value.Name), Input: args})
			calls++
		case *types.ContentBlockMemberReasoningContent:
			switch r := v.Value.(type) {
			case *types.ReasoningContentBlockMemberReasoningText:
				a.Parts = append(a.Parts, llm.Part{Kind: llm.PartThinking, Text: str(r.Value.Text), Signature: str(r.Value.Signature)})
			case *types.ReasoningContentBlockMemberRedactedContent:
				a.Parts = append(a.Parts, llm.Part{Kind: llm.PartRedactedThinking, Data: base64.StdEncoding.EncodeToString(r.Value)})
			}
		}
	}
	if texts == 0 && calls == 0 {
		a.Parts = append(a.Parts, llm.Part{Kind: llm.PartText})
	}
	return a, nil
}

// stopReason maps Bedrock's stopReason (wire-formats.md section 3.8). malformed reports the
// malformed_* reasons, for which the answer cannot be trusted.
func stopReason(r types.StopReason) (stop llm.StopReason, malformed bool) {
	switch r {
	case types.StopReasonMaxTokens:
		return llm.StopMaxTokens, false
	case types.StopReasonModelContextWindowExceeded:
		return llm.StopContextWindow, false
	case types.StopReasonToolUse:
		return llm.StopToolUse, false
	case types.StopReasonStopSequence:
		return llm.StopSequence, false
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return llm.StopContentFilter, false
	case types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
		return llm.StopEnd, true
	}
	// end_turn and reasons newer than this code.
	return llm.StopEnd, false
}

// usage reports what Bedrock counted. Its inputTokens leave out the prompt read from and
// written to the cache, which the gateway's input count includes; counts Bedrock left out
// stay unreported.
func usage(u *types.TokenUsage) llm.Usage {
	var out llm.Usage
	if u == nil {
		return out
	}
	count := func(p *int32) *int {
		if p == nil {
			return nil
		}
		return llm.Int(int(*p))
	}
	if u.InputTokens != nil {
		n := int(*u.InputTokens)
		if u.CacheReadInputTokens != nil {
			n += int(*u.CacheReadInputTokens)
		}
		if u.CacheWriteInputTokens != nil {
			n += int(*u.CacheWriteInputTokens)
		}
		out.InputTokens = llm.Int(n)
	}
	out.OutputTokens = count(u.OutputTokens)
	out.TotalTokens = count(u.TotalTokens)
	out.CacheReadTokens = count(u.CacheReadInputTokens)
	out.CacheWriteTokens = count(u.CacheWriteInputTokens)
	return out
}

// str dereferences an SDK string.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

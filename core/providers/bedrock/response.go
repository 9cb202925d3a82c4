package bedrock

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// completion translates a Converse answer. Text blocks join in order (a model may write text,
// call a tool and write again); reasoning blocks are not returned, though their tokens count
// as output.
func completion(out *bedrockruntime.ConverseOutput) (*openai.Completion, error) {
	finish, malformed := finishReason(out.StopReason)
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
	var text strings.Builder
	var calls []openai.ToolCall
	for _, b := range msg.Value.Content {
		switch v := b.(type) {
		case *types.ContentBlockMemberText:
			text.WriteString(v.Value)
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
			calls = append(calls, openai.ToolCall{ID: str(v.Value.ToolUseId), Type: "function",
				Function: openai.FunctionCall{Name: str(v.Value.Name), Arguments: args}})
		}
	}
	c := &openai.Completion{ToolCalls: calls, FinishReason: finish, Usage: usage(out.Usage)}
	if text.Len() > 0 || len(calls) == 0 {
		s := text.String()
		c.Content = &s
	}
	return c, nil
}

// finishReason maps Bedrock's stopReason (wire-formats.md section 7). malformed reports the
// malformed_* reasons, for which the answer cannot be trusted.
func finishReason(r types.StopReason) (finish string, malformed bool) {
	switch r {
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		return openai.FinishLength, false
	case types.StopReasonToolUse:
		return openai.FinishToolCalls, false
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return openai.FinishContentFilter, false
	case types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
		return openai.FinishStop, true
	}
	// end_turn, stop_sequence and reasons newer than this code.
	return openai.FinishStop, false
}

// usage reports what Bedrock counted. Its inputTokens leave out the cached prompt, which
// OpenAI's prompt_tokens include; counts Bedrock left out stay unreported.
func usage(u *types.TokenUsage) openai.Usage {
	var out openai.Usage
	if u == nil {
		return out
	}
	if u.InputTokens != nil {
		n := int(*u.InputTokens)
		if u.CacheReadInputTokens != nil {
			n += int(*u.CacheReadInputTokens)
		}
		if u.CacheWriteInputTokens != nil {
			n += int(*u.CacheWriteInputTokens)
		}
		out.PromptTokens = openai.Int(n)
	}
	if u.OutputTokens != nil {
		out.CompletionTokens = openai.Int(int(*u.OutputTokens))
	}
	if u.TotalTokens != nil {
		out.TotalTokens = openai.Int(int(*u.TotalTokens))
	}
	if u.CacheReadInputTokens != nil {
		out.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: openai.Int(int(*u.CacheReadInputTokens))}
	}
	return out
}

// str dereferences an SDK string.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

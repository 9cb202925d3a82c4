package openai

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
)

// Finish reasons.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
)

// FinishReason maps the gateway's stop reason to OpenAI's finish_reason.
func FinishReason(s llm.StopReason) string {
	switch s {
	case llm.StopMaxTokens, llm.StopContextWindow:
		return FinishLength
	case llm.StopToolUse:
		return FinishToolCalls
	case llm.StopContentFilter:
		return FinishContentFilter
	}
	return FinishStop
}

// StopReason maps an OpenAI-wire finish_reason to the gateway's stop reason. The deprecated
// function_call is a tool call; reasons servers add beyond OpenAI's (vLLM's "abort", some
// servers' "eos") read as a plain end, as clients would read them.
func StopReason(finish string) llm.StopReason {
	switch finish {
	case FinishLength:
		return llm.StopMaxTokens
	case FinishToolCalls, "function_call":
		return llm.StopToolUse
	case FinishContentFilter:
		return llm.StopContentFilter
	}
	return llm.StopEnd
}

// AppendUsage appends OpenAI's usage object with only the reported counts: prompt_tokens is
// the whole input, cached_tokens its share read from a cache.
func AppendUsage(b []byte, u *llm.Usage) []byte {
	b = append(b, '{')
	first := true
	field := func(name string, v *int) {
		if v == nil {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = appendInt(b, *v)
	}
	field("prompt_tokens", u.InputTokens)
	field("completion_tokens", u.OutputTokens)
	field("total_tokens", u.TotalTokens)
	if c := u.CacheReadTokens; c != nil {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `"prompt_tokens_details":{"cached_tokens":`...)
		b = appendInt(b, *c)
		b = append(b, '}')
	}
	if r := u.ReasoningTokens; r != nil {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"completion_tokens_details":{"reasoning_tokens":`...)
		b = appendInt(b, *r)
		b = append(b, '}')
	}
	return append(b, '}')
}

// AppendChatCompletion appends a chat.completion object with one choice: the answer's text
// parts joined as the content (null when there is none), its tool_use parts as tool_calls.
func AppendChatCompletion(b []byte, id string, created int64, model string, a *llm.Answer) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = AppendString(b, model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if text, ok := a.Text(); ok {
		b = AppendString(b, text)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"refusal":`...)
	if a.Refusal != nil {
		b = AppendString(b, *a.Refusal)
	} else {
		b = append(b, "null"...)
	}
	if a.ToolUses() > 0 {
		b = append(b, `,"tool_calls":[`...)
		n := 0
		for i := range a.Parts {
			p := &a.Parts[i]
			if p.Kind != llm.PartToolUse {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"id":`...)
			b = AppendString(b, p.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = AppendString(b, p.Name)
			b = append(b, `,"arguments":`...)
			b = AppendString(b, p.Input)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = AppendString(b, FinishReason(a.Stop))
	b = append(b, "}]"...)
	if a.Usage.Reported() {
		b = append(b, `,"usage":`...)
		b = AppendUsage(b, &a.Usage)
	}
	return append(b, '}')
}

// AppendTextCompletion appends a text_completion object (legacy /v1/completions).
func AppendTextCompletion(b []byte, id string, created int64, model string, a *llm.Answer) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, id)
	b = append(b, `,"object":"text_completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = AppendString(b, model)
	b = append(b, `,"choices":[{"text":`...)
	text, _ := a.Text()
	b = AppendString(b, text)
	b = append(b, `,"index":0,"logprobs":null,"finish_reason":`...)
	b = AppendString(b, FinishReason(a.Stop))
	b = append(b, "}]"...)
	if a.Usage.Reported() {
		b = append(b, `,"usage":`...)
		b = AppendUsage(b, &a.Usage)
	}
	return append(b, '}')
}

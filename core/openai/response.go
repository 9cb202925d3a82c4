package openai

import (
	"math"
	"strconv"
)

// Finish reasons.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
)

// Usage holds token counts exactly as the provider reported them: a count it did not report
// stays nil and is left out of the JSON, never sent as a made-up 0.
type Usage struct {
	PromptTokens            *int                     `json:"prompt_tokens,omitempty"`
	CompletionTokens        *int                     `json:"completion_tokens,omitempty"`
	TotalTokens             *int                     `json:"total_tokens,omitempty"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// PromptTokensDetails breaks down prompt tokens.
type PromptTokensDetails struct {
	CachedTokens *int `json:"cached_tokens,omitempty"`
}

// CompletionTokensDetails breaks down completion tokens.
type CompletionTokensDetails struct {
	ReasoningTokens *int `json:"reasoning_tokens,omitempty"`
}

// Int returns a pointer to n, for usage counts.
func Int(n int) *int { return &n }

// Reported reports whether any count is known.
func (u *Usage) Reported() bool {
	return u != nil && (u.PromptTokens != nil || u.CompletionTokens != nil || u.TotalTokens != nil)
}

// maxCount is the largest token count taken as real. No request reads or writes anywhere near
// 2^31 tokens (context windows are a few million at most); a larger count is an upstream's
// bug, and would make sums overflow and costs absurd.
const maxCount = math.MaxInt32

// ImpossibleCount is a count DropImpossible removed.
type ImpossibleCount struct {
	Field string // as named in the JSON, e.g. prompt_tokens_details.cached_tokens
	Value int    // as reported
}

// DropImpossible removes the counts no real answer has, which then read as unreported: a
// negative count, one above 2^31-1, and cached tokens above the prompt's (which include
// them on every wire). Reasoning tokens above the completion's are possible: xAI counts them
// apart from completion_tokens. It returns what it removed. Details objects are dropped, never
// written through, as they may be shared with the provider's answer.
func (u *Usage) DropImpossible() []ImpossibleCount {
	var out []ImpossibleCount
	drop := func(field string, p *int) bool {
		if p == nil || *p >= 0 && *p <= maxCount {
			return false
		}
		out = append(out, ImpossibleCount{Field: field, Value: *p})
		return true
	}
	if drop("prompt_tokens", u.PromptTokens) {
		u.PromptTokens = nil
	}
	if drop("completion_tokens", u.CompletionTokens) {
		u.CompletionTokens = nil
	}
	if drop("total_tokens", u.TotalTokens) {
		u.TotalTokens = nil
	}
	if c := u.Cached(); drop("prompt_tokens_details.cached_tokens", c) {
		u.PromptTokensDetails = nil
	} else if c != nil && u.PromptTokens != nil && *c > *u.PromptTokens {
		out = append(out, ImpossibleCount{Field: "prompt_tokens_details.cached_tokens", Value: *c})
		u.PromptTokensDetails = nil
	}
	if d := u.CompletionTokensDetails; d != nil && drop("completion_tokens_details.reasoning_tokens", d.ReasoningTokens) {
		u.CompletionTokensDetails = nil
	}
	return out
}

// Cached returns the cached prompt tokens, if reported.
func (u *Usage) Cached() *int {
	if u == nil || u.PromptTokensDetails == nil {
		return nil
	}
	return u.PromptTokensDetails.CachedTokens
}

// Merge overlays the counts other reports onto u. Providers that report usage in pieces
// (Anthropic: input at message start, output at the end) build the whole this way.
func (u *Usage) Merge(other *Usage) {
	if other == nil {
		return
	}
	if other.PromptTokens != nil {
		u.PromptTokens = other.PromptTokens
	}
	if other.CompletionTokens != nil {
		u.CompletionTokens = other.CompletionTokens
	}
	if other.TotalTokens != nil {
		u.TotalTokens = other.TotalTokens
	}
	if c := other.Cached(); c != nil {
		u.PromptTokensDetails = &PromptTokensDetails{CachedTokens: c}
	}
	if other.CompletionTokensDetails != nil && other.CompletionTokensDetails.ReasoningTokens != nil {
		u.CompletionTokensDetails = &CompletionTokensDetails{ReasoningTokens: other.CompletionTokensDetails.ReasoningTokens}
	}
}

// WithTotal fills total_tokens from reported prompt and completion counts when the provider
// gave both but no total: a sum of reported counts is not a guess.
func (u *Usage) WithTotal() *Usage {
	if u != nil && u.TotalTokens == nil && u.PromptTokens != nil && u.CompletionTokens != nil {
		u.TotalTokens = Int(*u.PromptTokens + *u.CompletionTokens)
	}
	return u
}

// AppendJSON appends the usage object with only the reported counts.
func (u *Usage) AppendJSON(b []byte) []byte {
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
	field("prompt_tokens", u.PromptTokens)
	field("completion_tokens", u.CompletionTokens)
	field("total_tokens", u.TotalTokens)
	if c := u.Cached(); c != nil {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `"prompt_tokens_details":{"cached_tokens":`...)
		b = appendInt(b, *c)
		b = append(b, '}')
	}
	if u.CompletionTokensDetails != nil && u.CompletionTokensDetails.ReasoningTokens != nil {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"completion_tokens_details":{"reasoning_tokens":`...)
		b = appendInt(b, *u.CompletionTokensDetails.ReasoningTokens)
		b = append(b, '}')
	}
	return append(b, '}')
}

// Completion is a finished answer from a provider, in OpenAI terms.
type Completion struct {
	Content      *string // nil when the model produced no text
	Refusal      *string // OpenAI's refusal text, when the model refused
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
}

// AppendChatCompletion appends a chat.completion object with one choice.
func AppendChatCompletion(b []byte, id string, created int64, model string, c *Completion) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = AppendString(b, model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if c.Content != nil {
		b = AppendString(b, *c.Content)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"refusal":`...)
	if c.Refusal != nil {
		b = AppendString(b, *c.Refusal)
	} else {
		b = append(b, "null"...)
	}
	if len(c.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range c.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			tc := &c.ToolCalls[i]
			b = append(b, `{"id":`...)
			b = AppendString(b, tc.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = AppendString(b, tc.Function.Name)
			b = append(b, `,"arguments":`...)
			b = AppendString(b, tc.Function.Arguments)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = AppendString(b, c.FinishReason)
	b = append(b, "}]"...)
	if c.Usage.Reported() {
		b = append(b, `,"usage":`...)
		b = c.Usage.AppendJSON(b)
	}
	return append(b, '}')
}

// AppendTextCompletion appends a text_completion object (legacy /v1/completions).
func AppendTextCompletion(b []byte, id string, created int64, model string, c *Completion) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, id)
	b = append(b, `,"object":"text_completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = AppendString(b, model)
	b = append(b, `,"choices":[{"text":`...)
	if c.Content != nil {
		b = AppendString(b, *c.Content)
	} else {
		b = append(b, `""`...)
	}
	b = append(b, `,"index":0,"logprobs":null,"finish_reason":`...)
	b = AppendString(b, c.FinishReason)
	b = append(b, "}]"...)
	if c.Usage.Reported() {
		b = append(b, `,"usage":`...)
		b = c.Usage.AppendJSON(b)
	}
	return append(b, '}')
}

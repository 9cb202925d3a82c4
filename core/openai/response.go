package openai

import "strconv"

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

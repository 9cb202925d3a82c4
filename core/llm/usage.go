package llm

// Usage holds token counts exactly as the provider reported them: a count it did not report
// stays nil and is left out of every answer, never sent as a made-up 0.
//
// InputTokens counts the whole prompt, cached parts included (OpenAI's prompt_tokens);
// CacheReadTokens and CacheWriteTokens are the shares of it read from and written to a
// prompt cache. OutputTokens includes ReasoningTokens. Anthropic's input_tokens, which leaves
// the cached shares out, is InputTokens minus both.
type Usage struct {
	InputTokens      *int
	OutputTokens     *int
	TotalTokens      *int
	CacheReadTokens  *int
	CacheWriteTokens *int
	ReasoningTokens  *int
}

// Int returns a pointer to n, for usage counts.
func Int(n int) *int { return &n }

// Reported reports whether any count is known.
func (u *Usage) Reported() bool {
	return u != nil && (u.InputTokens != nil || u.OutputTokens != nil || u.TotalTokens != nil)
}

// Merge overlays the counts other reports onto u. Providers that report usage in pieces
// (Anthropic: input at message start, output at the end) build the whole this way.
func (u *Usage) Merge(other *Usage) {
	if other == nil {
		return
	}
	set := func(dst **int, src *int) {
		if src != nil {
			*dst = src
		}
	}
	set(&u.InputTokens, other.InputTokens)
	set(&u.OutputTokens, other.OutputTokens)
	set(&u.TotalTokens, other.TotalTokens)
	set(&u.CacheReadTokens, other.CacheReadTokens)
	set(&u.CacheWriteTokens, other.CacheWriteTokens)
	set(&u.ReasoningTokens, other.ReasoningTokens)
}

// WithTotal fills TotalTokens from reported input and output counts when the provider gave
// both but no total: a sum of reported counts is not a guess.
func (u *Usage) WithTotal() *Usage {
	if u != nil && u.TotalTokens == nil && u.InputTokens != nil && u.OutputTokens != nil {
		u.TotalTokens = Int(*u.InputTokens + *u.OutputTokens)
	}
	return u
}

// UncachedInput is the input not read from or written to a cache (Anthropic's input_tokens),
// when the input count is known.
func (u *Usage) UncachedInput() *int {
	if u == nil || u.InputTokens == nil {
		return nil
	}
	n := *u.InputTokens
	if u.CacheReadTokens != nil {
		n -= *u.CacheReadTokens
	}
	if u.CacheWriteTokens != nil {
		n -= *u.CacheWriteTokens
	}
	return Int(max(n, 0))
}

// maxCount is the largest count a real answer reports: no context window comes near it, and
// anything beyond overflows 32-bit counters downstream.
const maxCount = 1<<31 - 1

// ImpossibleCount is a count DropImpossible removed.
type ImpossibleCount struct {
	Field string // as OpenAI's usage names it, e.g. prompt_tokens_details.cached_tokens
	Value int    // as reported
}

// DropImpossible removes the counts no real answer has (negative, above 2^31-1, more tokens
// read from or written to a cache than the whole input) and returns them: an upstream is
// untrusted input, and such a count would become a negative cost or a negative count to the
// client. What is left is treated as the provider reported it.
func (u *Usage) DropImpossible() []ImpossibleCount {
	var out []ImpossibleCount
	drop := func(field string, p **int) {
		if *p == nil || **p >= 0 && **p <= maxCount {
			return
		}
		out = append(out, ImpossibleCount{Field: field, Value: **p})
		*p = nil
	}
	drop("prompt_tokens", &u.InputTokens)
	drop("completion_tokens", &u.OutputTokens)
	drop("total_tokens", &u.TotalTokens)
	drop("prompt_tokens_details.cached_tokens", &u.CacheReadTokens)
	drop("cache_write_tokens", &u.CacheWriteTokens)
	drop("completion_tokens_details.reasoning_tokens", &u.ReasoningTokens)
	above := func(field string, p **int) {
		if *p != nil && u.InputTokens != nil && **p > *u.InputTokens {
			out = append(out, ImpossibleCount{Field: field, Value: **p})
			*p = nil
		}
	}
	above("prompt_tokens_details.cached_tokens", &u.CacheReadTokens)
	above("cache_write_tokens", &u.CacheWriteTokens)
	return out
}

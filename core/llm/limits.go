package llm

// Limits bound what one request may carry; every front door applies them while it decodes,
// before anything else reads the request. Zero fields take the defaults below.
type Limits struct {
	// MaxMessages counts messages (Chat Completions, Messages) or input items (Responses, a
	// continued response's included).
	MaxMessages int
	// MaxTools counts tool definitions.
	MaxTools int
}

// Defaults, documented in docs/config.md (limits.max_messages, limits.max_tools). OpenAI
// allows up to 128 tools; Anthropic 100,000 messages, far more than a client needs.
const (
	DefaultMaxMessages = 2048
	DefaultMaxTools    = 128
)

// WithDefaults returns l with each zero (or negative) field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxMessages <= 0 {
		l.MaxMessages = DefaultMaxMessages
	}
	if l.MaxTools <= 0 {
		l.MaxTools = DefaultMaxTools
	}
	return l
}

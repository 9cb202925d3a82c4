package llm

// StopReason is why the model stopped, in one vocabulary for every wire. Front doors map it
// to theirs (finish_reason, stop_reason, status) and providers map theirs to it.
type StopReason string

const (
	StopEnd           StopReason = "end_turn"      // a natural end
	StopSequence      StopReason = "stop_sequence" // a stop sequence matched (Answer.StopSequence)
	StopMaxTokens     StopReason = "max_tokens"    // the output maximum
	StopContextWindow StopReason = "context_window"
	StopToolUse       StopReason = "tool_use"
	StopContentFilter StopReason = "content_filter" // a refusal, safety filter or guardrail
	StopPauseTurn     StopReason = "pause_turn"     // an Anthropic server-tool loop paused
)

// Answer is a whole, non-streamed answer.
type Answer struct {
	// Parts are the answer's content in order: text, tool_use, thinking, redacted thinking
	// and, from Anthropic-wire backends, raw blocks.
	Parts []Part
	// Refusal is OpenAI's refusal text, when the model refused.
	Refusal *string
	Stop    StopReason
	// StopSequence is the sequence that matched, when the backend says.
	StopSequence string
	Usage        Usage
	// Model is the model the upstream says answered (OpenAI's and Anthropic's model field),
	// "" when it does not say; for traces, never sent to a client.
	Model string
	// Raw is the upstream's answer verbatim when it speaks a front door's wire (RawWire); that
	// door sends it on with only its own names patched in.
	Raw     []byte
	RawWire Wire
}

// Text joins the answer's text parts; ok is false when there is none.
func (a *Answer) Text() (text string, ok bool) {
	m := Message{Parts: a.Parts}
	return m.Text(), m.HasText()
}

// ToolUses counts the answer's tool_use parts.
func (a *Answer) ToolUses() int {
	m := Message{Parts: a.Parts}
	return m.ToolUses()
}

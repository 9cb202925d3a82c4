package llm

// Delta is one normalized increment of a streamed answer: what every provider's stream
// translator produces and what every front door encodes for its client.
type Delta struct {
	Text string
	// Thinking is reasoning text; Signature closes a thinking block (Anthropic) and
	// RedactedThinking is an encrypted block, passed on whole.
	Thinking         string
	Signature        string
	RedactedThinking string
	Refusal          string
	ToolCalls        []ToolCallDelta
	// Stop ends the answer; StopSequence names the sequence that matched, when known.
	Stop         StopReason
	StopSequence string
	// Usage, when set, is the usage reported so far; later deltas refine it.
	Usage *Usage
	// Raw is the upstream's own event, verbatim, when the upstream speaks a front door's wire
	// (an Anthropic-wire backend under the Messages door): that door passes it through, with
	// only its own names patched in, so nothing the normalized fields cannot express is lost;
	// other doors use the normalized fields. Raw.Data is valid until the next call to Next
	// or Pending.
	Raw *RawEvent
	// Opaque marks a raw event that carries content the normalized fields do not show (a
	// server tool's block, a citation): it commits a stream on a door that passes Raw through.
	Opaque bool
}

// ModelReporter is a Stream that can say which model the upstream says answered (OpenAI's
// model field, Anthropic's message_start), once its stream has said it; "" until then.
type ModelReporter interface {
	ResponseModel() string
}

// Wire names an API wire format that a front door and a backend can share.
type Wire uint8

const (
	WireNone Wire = iota
	// WireAnthropic is Anthropic's Messages: the API itself, Claude on Bedrock
	// (InvokeModel) and Claude on Vertex AI (rawPredict).
	WireAnthropic
	// WireResponses is OpenAI's Responses API, which only OpenAI itself serves (the openai
	// kind).
	WireResponses
)

// RawEvent is one upstream stream event as it arrived.
type RawEvent struct {
	Wire Wire
	Name string // the SSE event name (Anthropic, Responses: the event type)
	Data []byte
}

// Content reports whether the delta carries any part of the answer (text, reasoning, a tool
// call or the stop), as opposed to usage alone.
func (d *Delta) Content() bool {
	return d.Text != "" || d.Refusal != "" || len(d.ToolCalls) > 0 || d.Stop != "" ||
		d.Thinking != "" || d.Signature != "" || d.RedactedThinking != ""
}

// ToolCallDelta is a fragment of a streamed tool call. The first fragment of a call carries ID
// and Name; later ones only Arguments. Index is the call's position among the answer's tool
// calls (dense, from 0), never a provider's content-block index.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Stream yields the deltas of one streamed answer.
type Stream interface {
	// Next returns the next delta. It returns io.EOF only after the upstream signalled a
	// proper end (OpenAI [DONE], Anthropic message_stop, Bedrock metadata...); an upstream that
	// just stops is a stream_broken failure, never a success.
	Next() (Delta, error)
	// Close releases the upstream connection; safe to call more than once.
	Close() error
}

// Pending is implemented by streams that can tell whether their next delta is already in
// hand. The gateway then defers the flush to the client until the upstream goes quiet: each
// token still leaves as soon as nothing is queued behind it, but an upstream that delivers a
// burst costs one write to the client instead of one per event.
type Pending interface {
	// Pending reports whether Next will return without waiting on the upstream. It must be
	// exact in one direction: true only when the next delta (or error, or end) is decoded
	// already, never for buffered bytes that may yield nothing, or the gateway holds back
	// output while it waits. It may decode ahead to find out (providers.Lookahead), so a
	// delta returned earlier may not be used after it.
	Pending() bool
}

package gateway

import (
	"net/http"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// door is one inbound wire: it decodes its requests into the gateway's one request and
// encodes answers, stream events and errors back in its own shapes. Everything between
// (keys, planning, attempts, failover, the commit point, logs) is the same code for every
// door. A door value serves one request, so it may keep what its encoders need from the body
// (include_usage, say).
type door interface {
	wire
	// decode parses and checks the body for the request rc (whose key is known), under in:
	// the bounds and the request profile of the key. The door's own refusals come back in its
	// shape.
	decode(r *http.Request, rc *requestCtx, body []byte, in decoding) (*llm.Request, *llm.Error)
	// visible reports whether d carries what this door's client sees: the stream commits to
	// its route at the first such delta.
	visible(d *llm.Delta) bool
	// appendAnswer appends a whole answer's body.
	appendAnswer(b []byte, rc *requestCtx, a *llm.Answer) []byte
	// encoder prepares the events of one attempt's stream; a failed attempt's encoder, and
	// whatever it held, is dropped.
	encoder(rc *requestCtx) encoder
}

// encoder writes the server-sent events of one stream in a door's wire.
type encoder interface {
	// hold takes a delta that arrived before the commit (a preamble, usage).
	hold(d *llm.Delta)
	// start appends what opens the stream at the commit; first is the delta that commits it.
	start(b []byte, first *llm.Delta) []byte
	// delta appends a committed delta.
	delta(b []byte, d *llm.Delta) []byte
	// end appends the close of a stream that finished properly, u being its usage.
	end(b []byte, u *llm.Usage) []byte
	// fail appends the error event that ends a stream that failed after it began.
	fail(b []byte, e *llm.Error) []byte
}

// decoding is what a door reads one request under.
type decoding struct {
	limits llm.Limits
	// profile is the request profile of the request's key (request_profile): the OpenAI
	// doors read the extended profile's fields under it; the Messages door has one rule.
	profile openai.Profile
}

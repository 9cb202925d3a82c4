package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/fngate/fngate/core/providers"
)

// errTotalTimeout cancels an attempt that exceeded the total time limit.
var errTotalTimeout = &providers.Error{Class: providers.Timeout, Message: "the attempt exceeded the total timeout"}

// attempt is one try of one route: its context and timers and its record. The total timer
// bounds the whole attempt; the first-byte timer runs until the caller says the first
// content (or a whole answer) arrived.
type attempt struct {
	g      *Gateway
	rt     *route
	rec    *AttemptRecord
	ctx    context.Context
	cancel context.CancelCauseFunc
	total  *time.Timer
	first  *time.Timer
	began  time.Time
}

// begin starts the n-th attempt (0-based) of the request on rt.
func (g *Gateway) begin(r *http.Request, rc *requestCtx, m *model, rt *route, n int) *attempt {
	rc.attempts++
	ctx, cancel := context.WithCancelCause(r.Context())
	a := &attempt{g: g, rt: rt, rec: g.newAttempt(rc, rt, n), ctx: ctx, cancel: cancel, began: time.Now()}
	a.total = time.AfterFunc(m.timeouts.Total.D(), func() { cancel(errTotalTimeout) })
	a.first = time.AfterFunc(m.timeouts.FirstByte.D(), func() { cancel(providers.ErrFirstByteTimeout) })
	return a
}

// arrived stops the first-byte clock and returns the time waited so far.
func (a *attempt) arrived() time.Duration {
	a.first.Stop()
	return time.Since(a.began)
}

// maxUpstreamText bounds each text of an upstream failure (its message, code, param) as the
// client and the logs see it.
const maxUpstreamText = 1024

// failure is the one door through which an attempt's failure reaches the client and the
// logs. It classifies err, charging the gateway's own cancellation causes over what the
// interrupted read reported. An upstream may echo the gateway's own credentials (a 400 body
// quoting the key, an error event mid-stream), and nothing in it is cut yet: every text it
// wrote has the configured secrets blanked and is then cut to maxUpstreamText, in that order.
func (a *attempt) failure(err error) *providers.Error {
	return providers.AsError(a.ctx, err, a.rt.provider.Name()).Scrubbed(func(s string) string {
		return a.g.secrets.Scrub(s, maxUpstreamText)
	})
}

// end releases the attempt's timers and context.
func (a *attempt) end() {
	a.first.Stop()
	a.total.Stop()
	a.cancel(nil)
}

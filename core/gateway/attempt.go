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
	a := &attempt{rt: rt, rec: g.newAttempt(rc, rt, n), ctx: ctx, cancel: cancel, began: time.Now()}
	a.total = time.AfterFunc(m.timeouts.Total.D(), func() { cancel(errTotalTimeout) })
	a.first = time.AfterFunc(m.timeouts.FirstByte.D(), func() { cancel(providers.ErrFirstByteTimeout) })
	return a
}

// arrived stops the first-byte clock and returns the time waited so far.
func (a *attempt) arrived() time.Duration {
	a.first.Stop()
	return time.Since(a.began)
}

// failure classifies err, charging the gateway's own cancellation causes over what the
// interrupted read reported.
func (a *attempt) failure(err error) *providers.Error {
	return providers.AsError(a.ctx, err, a.rt.provider.Name())
}

// end releases the attempt's timers and context.
func (a *attempt) end() {
	a.first.Stop()
	a.total.Stop()
	a.cancel(nil)
}

package gateway

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/fngate/fngate/core/providers"
)

// errTotalTimeout cancels an attempt that exceeded the total time limit.
var errTotalTimeout = &providers.Error{Class: providers.Timeout, Message: "the attempt exceeded the total timeout"}

// attempt is one try of one route: its context and clocks, and its record. Total bounds the
// attempt from its start to its end and is the context's deadline, so an upstream that
// honours deadlines (gRPC sends it along) sees it too; first_byte runs until the answer
// begins. Either ends the attempt by cancelling its context with itself as the cause.
type attempt struct {
	g        *Gateway
	rt       *route
	rec      *AttemptRecord
	ctx      context.Context
	cancel   context.CancelCauseFunc // cancels with a cause; idle uses it too
	stop     context.CancelFunc
	first    *time.Timer
	began    time.Time
	deadline time.Time // when total runs out
}

// begin starts the n-th attempt (0-based) of the request on rt.
func (g *Gateway) begin(r *http.Request, rc *requestCtx, m *model, rt *route, n int) *attempt {
	rc.attempts++
	rec := g.newAttempt(rc, rt, n)
	ctx, cancel := context.WithCancelCause(rc.traceAttempt(r.Context(), rec))
	now := time.Now()
	deadline := now.Add(m.timeouts.Total.D())
	ctx, stop := context.WithDeadlineCause(ctx, deadline, errTotalTimeout)
	return &attempt{g: g, rt: rt, rec: rec, ctx: ctx, cancel: cancel, stop: stop, began: now, deadline: deadline,
		first: time.AfterFunc(m.timeouts.FirstByte.D(), func() { cancel(providers.ErrFirstByteTimeout) })}
}

// onHeaders returns the attempt's context set to stop the first-byte clock when an HTTP
// response begins (its status line arrives). A non-stream answer has nothing to show before
// its body, so its headers are the first byte; once they are in, the body has what remains of
// total.
//
// The hook sees every HTTP exchange made under the context, so a credentials fetch made on
// the way (AWS, Google) stops the clock early, leaving total to bound the call. Providers that
// do not speak net/http give no such signal (Vertex Gemini's gRPC, the mock), and first_byte
// bounds their whole call, which for a unary gRPC call is the same thing: its headers come
// with the answer.
func (a *attempt) onHeaders() context.Context {
	return httptrace.WithClientTrace(a.ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() { a.first.Stop() }})
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

// end stops the clocks and cancels the attempt's context, which releases the upstream call.
func (a *attempt) end() {
	a.first.Stop()
	a.stop()
	a.cancel(nil)
}

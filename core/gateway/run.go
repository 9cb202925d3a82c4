package gateway

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// errTotalTimeout cancels an attempt that exceeded the total time limit.
var errTotalTimeout = &providers.Error{Class: providers.Timeout, Message: "the attempt exceeded the total timeout"}

// Response headers naming what served the request.
const (
	HeaderRoute    = "X-Fngate-Route"
	HeaderAttempts = "X-Fngate-Attempts"
	HeaderOverhead = "X-Fngate-Overhead-Ms"
)

// statusClientClosed is logged when the client leaves (nginx's convention).
const statusClientClosed = 499

func (g *Gateway) run(w *trackingWriter, r *http.Request, rc *requestCtx, m *model, c call) {
	routes, oe := g.plan(m, c, rc)
	if oe != nil {
		g.refuse(w, rc, oe)
		return
	}
	if c.streaming() {
		g.runStream(w, r, rc, m, c, routes)
		return
	}
	g.runOnce(w, r, rc, m, c, routes)
}

// refuse answers a request the gateway turns down before any attempt.
func (g *Gateway) refuse(w http.ResponseWriter, rc *requestCtx, oe *openai.Error) {
	oe.Write(w)
	g.logRequest(rc, oe.Status, "", oe)
}

// attemptClock bounds one attempt with the model's timeouts: total from its start to its end,
// first_byte until the answer begins. Either ends the attempt by cancelling its context with
// itself as the cause.
type attemptClock struct {
	cancel    context.CancelCauseFunc // cancels with a cause; idle uses it too
	stopTotal context.CancelFunc
	firstByte *time.Timer
	deadline  time.Time // when total runs out
}

// startAttempt starts the clocks of an attempt. Total is the context's deadline, so an
// upstream that honours deadlines (gRPC sends it along) sees it too.
func startAttempt(parent context.Context, t config.Timeouts) (context.Context, *attemptClock) {
	ctx, cancel := context.WithCancelCause(parent)
	deadline := time.Now().Add(t.Total.D())
	ctx, stopTotal := context.WithDeadlineCause(ctx, deadline, errTotalTimeout)
	return ctx, &attemptClock{
		cancel:    cancel,
		stopTotal: stopTotal,
		firstByte: time.AfterFunc(t.FirstByte.D(), func() { cancel(providers.ErrFirstByteTimeout) }),
		deadline:  deadline,
	}
}

// began stops the first-byte clock: the answer has started.
func (c *attemptClock) began() { c.firstByte.Stop() }

// onHeaders returns ctx set to stop the first-byte clock when an HTTP response begins (its
// status line arrives). A non-stream answer has nothing to show before its body, so its
// headers are the first byte; once they are in, the body has what remains of total.
//
// The hook sees every HTTP exchange made under ctx, so a credentials fetch made on the way
// (AWS, Google) stops the clock early, leaving total to bound the call. Providers that do not
// speak net/http give no such signal (Vertex Gemini's gRPC, the mock), and first_byte bounds
// their whole call, which for a unary gRPC call is the same thing: its headers come with the
// answer.
func (c *attemptClock) onHeaders(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: c.began})
}

// stop ends the attempt: the clocks stop and its context is cancelled, which releases the
// upstream call.
func (c *attemptClock) stop() {
	c.firstByte.Stop()
	c.stopTotal()
	c.cancel(nil)
}

// runOnce serves a non-streaming request, failing over while the failure allows and
// attempts remain.
func (g *Gateway) runOnce(w *trackingWriter, r *http.Request, rc *requestCtx, m *model, c call, routes []*route) {
	for i, rt := range routes {
		ctx, clock := startAttempt(r.Context(), m.timeouts)
		t0 := time.Now()
		comp, err := c.once(clock.onHeaders(ctx), rt)
		took := time.Since(t0)
		rc.upstream += took
		rc.attempts++
		a := g.newAttempt(rc, rt, i)
		a.Latency = took
		if err == nil {
			clock.stop()
			a.Outcome = OutcomeOK
			a.setUsage(&comp.Usage, m.cfg.Price, rc)
			g.logAttempt(a)
			g.writeCompletion(w, rc, rt, c, comp)
			return
		}
		pe := g.upstreamError(ctx, err, rt)
		clock.stop()
		if !g.failedBeforeOutput(w, r, rc, rt, a, pe, i+1 < len(routes)) {
			return
		}
	}
}

// maxUpstreamText bounds each text of an upstream failure (its message, code, param) as the
// client and the logs see it.
const maxUpstreamText = 1024

// upstreamError is the one door through which an attempt's failure reaches the client and the
// logs. An upstream may echo the gateway's own credentials (a 400 body quoting the key, an
// error event mid-stream), and nothing in it is cut yet: every text it wrote has the
// configured secrets blanked and is then cut to maxUpstreamText, in that order.
func (g *Gateway) upstreamError(ctx context.Context, err error, rt *route) *providers.Error {
	return providers.AsError(ctx, err, rt.provider.Name()).Scrubbed(func(s string) string {
		return g.secrets.Scrub(s, maxUpstreamText)
	})
}

// failedBeforeOutput records an attempt that failed while the client had seen nothing, and
// reports whether the next route should be tried. When it should not (the client left, the
// failure is the request's own fault, no attempt remains) the client's answer is written here.
func (g *Gateway) failedBeforeOutput(w http.ResponseWriter, r *http.Request, rc *requestCtx, rt *route, a *AttemptRecord, pe *providers.Error, more bool) bool {
	if clientGone(r.Context()) {
		a.Outcome = OutcomeClientClosed
		g.logAttempt(a)
		g.logRequest(rc, statusClientClosed, rt.id, nil)
		return false
	}
	a.setError(pe)
	more = more && pe.Failover()
	a.Outcome = OutcomeError
	if more {
		a.Outcome = OutcomeFailover
	}
	g.logAttempt(a)
	if !more {
		oe := pe.ClientError()
		g.setRouteHeaders(w, rc, rt)
		oe.Write(w)
		g.logRequest(rc, oe.Status, rt.id, oe)
	}
	return more
}

func (g *Gateway) writeCompletion(w http.ResponseWriter, rc *requestCtx, rt *route, c call, comp *openai.Completion) {
	comp.Usage.WithTotal()
	var calls toolCalls
	calls.completion(comp)
	body := c.appendCompletion(make([]byte, 0, 512), c.idPrefix()+randomID(24), g.now().Unix(), rc.model, comp)
	body = append(body, '\n')
	g.setRouteHeaders(w, rc, rt)
	writeJSON(w, http.StatusOK, body)
	g.logRequest(rc, http.StatusOK, rt.id, nil)
}

func (g *Gateway) setRouteHeaders(w http.ResponseWriter, rc *requestCtx, rt *route) {
	h := w.Header()
	h.Set(HeaderRoute, rt.id)
	h.Set(HeaderAttempts, strconv.Itoa(rc.attempts))
	h.Set(HeaderOverhead, strconv.FormatFloat(ms(rc.overhead(time.Now())), 'f', 3, 64))
}

package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"

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

// runOnce serves a non-streaming request, failing over while the failure allows and
// attempts remain.
func (g *Gateway) runOnce(w *trackingWriter, r *http.Request, rc *requestCtx, m *model, c call, routes []*route) {
	for i, rt := range routes {
		ctx, cancel := context.WithTimeoutCause(r.Context(), m.timeouts.Total.D(), errTotalTimeout)
		t0 := time.Now()
		comp, err := c.once(ctx, rt)
		took := time.Since(t0)
		rc.upstream += took
		rc.attempts++
		a := g.newAttempt(rc, rt, i)
		a.Latency = took
		if err == nil {
			cancel()
			a.Outcome = OutcomeOK
			a.setUsage(&comp.Usage, m.cfg.Price, rc)
			g.logAttempt(a)
			g.writeCompletion(w, rc, rt, c, comp)
			return
		}
		pe := g.upstreamError(ctx, err, rt)
		cancel()
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

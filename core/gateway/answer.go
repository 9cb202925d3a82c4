package gateway

import (
	"net/http"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// answer serves a non-streaming request, failing over while the failure allows and
// attempts remain.
func (g *Gateway) answer(w http.ResponseWriter, r *http.Request, d door, rc *requestCtx, m *model, req *llm.Request, routes []*route) {
	for i, rt := range routes {
		a := g.begin(r, rc, m, rt, i)
		ans, err := rt.provider.Generate(a.onHeaders(), req, rt.target)
		took := a.arrived()
		rc.upstream += took
		a.rec.Latency = took
		if err == nil {
			a.end()
			a.rec.Outcome = OutcomeOK
			a.answered(ans)
			a.rec.outChars = answerChars(ans)
			g.setUsage(a.rec, &ans.Usage, m, rc)
			g.logAttempt(a.rec)
			g.writeAnswer(w, d, rc, rt, ans)
			return
		}
		pe := a.failure(err)
		a.end()
		if !g.failedBeforeOutput(w, r, d, rc, rt, a.rec, pe, i+1 < len(routes)) {
			return
		}
	}
}

// failedBeforeOutput records an attempt that failed while the client had seen nothing, and
// reports whether the next route should be tried. When it should not (the client left, the
// failure is the request's own fault, no attempt remains) the client's answer is written here.
func (g *Gateway) failedBeforeOutput(w http.ResponseWriter, r *http.Request, d door, rc *requestCtx, rt *route, a *AttemptRecord, pe *providers.Error, more bool) bool {
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
		d.writeError(w, rc, oe)
		g.logRequest(rc, oe.Status, rt.id, oe)
	}
	return more
}

func (g *Gateway) writeAnswer(w http.ResponseWriter, d door, rc *requestCtx, rt *route, a *llm.Answer) {
	a.Usage.WithTotal()
	var calls toolCalls
	calls.answer(a)
	body := d.appendAnswer(make([]byte, 0, 512), rc, a)
	body = append(body, '\n')
	g.setRouteHeaders(w, rc, rt)
	writeJSON(w, http.StatusOK, body)
	g.logRequest(rc, http.StatusOK, rt.id, nil)
}

package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fngate/fngate/core/llm"
)

// traceHooksOnce runs every tracing hook of one streamed request with one attempt, in the
// order the gateway calls them, on g. The request's and the attempt's state are the caller's:
// the gateway allocates them whether it traces or not.
func traceHooksOnce(g *Gateway, r *http.Request, rc *requestCtx, a *attempt, req *llm.Request, d *llm.Delta, st llm.Stream) {
	g.startTrace(r, rc)
	rc.traceDecoded(req)
	a.ctx = rc.traceAttempt(r.Context(), a.rec)
	a.sent(d)
	a.streamed(st)
	endAttemptTrace(a.rec)
	rc.endTrace(rc.start, http.StatusOK, "route", nil)
}

// Tracing off is the default and must cost the hot path nothing: no allocation, and the
// attempt goes out with the request's own context (no span in it).
func TestTracingOffCostsNothing(t *testing.T) {
	g := &Gateway{}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	req := &llm.Request{Model: "m", Stream: true}
	d := &llm.Delta{Text: "token", Stop: llm.StopEnd}
	rc, a := &requestCtx{id: "req_x", endpoint: "chat", start: time.Now()}, &attempt{rec: &AttemptRecord{}}
	if n := testing.AllocsPerRun(1000, func() { traceHooksOnce(g, r, rc, a, req, d, nil) }); n != 0 {
		t.Errorf("the tracing hooks of one request allocate %v times with tracing off", n)
	}
	if ctx := rc.traceAttempt(r.Context(), &AttemptRecord{}); ctx != r.Context() {
		t.Error("an untraced attempt's context is not the request's")
	}
}

// BenchmarkTraceHooksOff is what tracing adds to one request when it is off (the default):
// every hook of a streamed request with one attempt. It reports 0 allocs/op and a few ns.
func BenchmarkTraceHooksOff(b *testing.B) {
	g := &Gateway{}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	req := &llm.Request{Model: "m", Stream: true}
	d := &llm.Delta{Text: "token"}
	rc, a := &requestCtx{id: "req_x", endpoint: "chat", start: time.Now()}, &attempt{rec: &AttemptRecord{}}
	b.ReportAllocs()
	for b.Loop() {
		traceHooksOnce(g, r, rc, a, req, d, nil)
	}
}

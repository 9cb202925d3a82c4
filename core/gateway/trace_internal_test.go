package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
)

// traceHooksOnce runs every tracing hook of one streamed request with one attempt, in the
// order the gateway calls them, on g. The request's and the attempt's state are the caller's:
// the gateway allocates them whether it traces or not.
func traceHooksOnce(g *Gateway, r *http.Request, a *attempt, req *llm.Request, d *llm.Delta, st llm.Stream) {
	rc := &a.q.rc
	g.startTrace(r, rc)
	rc.traceDecoded(req)
	a.ctx = a.startTrace(r.Context())
	a.sent(d)
	a.streamed(st)
	a.endTrace()
	rc.endTrace(rc.start, http.StatusOK, "route", nil)
}

// untracedAttempt is the request and attempt state the gateway allocates whether it traces
// or not.
func untracedAttempt(g *Gateway) *attempt {
	q := &request{g: g, rc: requestCtx{id: "req_x", endpoint: "chat", start: time.Now()}}
	return &attempt{q: q, rec: &record.Attempt{}}
}

// Tracing off is the default and must cost the hot path nothing: no allocation, and the
// attempt goes out with the request's own context (no span in it).
func TestTracingOffCostsNothing(t *testing.T) {
	g := &Gateway{}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	req := &llm.Request{Model: "m", Stream: true}
	d := &llm.Delta{Text: "token", Stop: llm.StopEnd}
	a := untracedAttempt(g)
	if n := testing.AllocsPerRun(1000, func() { traceHooksOnce(g, r, a, req, d, nil) }); n != 0 {
		t.Errorf("the tracing hooks of one request allocate %v times with tracing off", n)
	}
	if ctx := untracedAttempt(g).startTrace(r.Context()); ctx != r.Context() {
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
	a := untracedAttempt(g)
	b.ReportAllocs()
	for b.Loop() {
		traceHooksOnce(g, r, a, req, d, nil)
	}
}

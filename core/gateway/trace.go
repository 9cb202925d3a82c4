package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
)

// The tracer's hooks (record.Tracer; OpenTelemetry in core/telemetry/otel). Options.Tracer
// nil, the default, makes every hook in this file return at its first line, so a gateway
// without tracing starts no span and allocates nothing for it (BenchmarkTraceHooksOff). A
// request's trace ends in logRequest and an attempt's in logAttempt, with the very records
// those lines are made of.

// startTrace begins the request's trace when the gateway has a tracer.
func (g *Gateway) startTrace(r *http.Request, rc *requestCtx) {
	if g.tracer == nil {
		return
	}
	rc.trace = g.tracer.Request(r, rc.endpoint)
}

// traceDecoded hands the decoded request to its trace.
func (rc *requestCtx) traceDecoded(req *llm.Request) {
	if rc.trace != nil {
		rc.trace.Decoded(req)
	}
}

// startTrace begins the attempt's trace and returns the context its call goes out with.
func (a *attempt) startTrace(ctx context.Context) context.Context {
	t := a.q.rc.trace
	if t == nil {
		return ctx
	}
	ctx, a.trace = t.Attempt(ctx, a.rec)
	return ctx
}

// answered notes a whole answer on the attempt's record and trace.
func (a *attempt) answered(ans *llm.Answer) {
	a.rec.Stop, a.rec.ResponseModel = ans.Stop, ans.Model
	if a.trace != nil {
		a.trace.Answer(ans)
	}
}

// sent notes a delta its client was sent.
func (a *attempt) sent(d *llm.Delta) {
	if d.Stop != "" {
		a.rec.Stop = d.Stop
	}
	if a.trace != nil {
		a.trace.Delta(d)
	}
}

// streamed notes what a stream said of itself once it ended: the model the upstream says
// answered.
func (a *attempt) streamed(st llm.Stream) {
	if mr, ok := st.(llm.ModelReporter); ok {
		a.rec.ResponseModel = mr.ResponseModel()
	}
}

// endTrace closes the attempt's trace as its line is logged.
func (a *attempt) endTrace() {
	if a.trace != nil {
		a.trace.End(a.rec)
		a.trace = nil // logged once
	}
}

// endTrace closes the request's trace as its line is logged.
func (rc *requestCtx) endTrace(now time.Time, status int, route string, oe *llm.Error) {
	t := rc.trace
	if t == nil {
		return
	}
	rc.trace = nil // a request ends once, even when a panic follows its line
	rec := &record.Request{
		RequestID: rc.id, Endpoint: rc.endpoint, Model: rc.model, Stream: rc.stream,
		Status: status, Route: route, Attempts: rc.attempts, Usage: rc.usage, Error: oe,
		Latency: now.Sub(rc.start), TTFT: rc.ttft, Overhead: rc.overhead(now), Transport: rc.transport(),
		Cache: rc.cache, Saved: rc.saved, Guardrails: rc.guardrails,
	}
	if rc.key != nil {
		rec.Key = rc.key.Name
		if rc.key.stored {
			rec.KeyID = rc.key.ID
		}
	}
	if rc.costSet {
		c := rc.costUSD
		rec.CostUSD = &c
	}
	t.End(rec)
}

package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/fngate/fngate/core/llm"
)

// Tracer sees the gateway's requests and attempts as they happen, for a tracing system:
// core/telemetry/otel turns them into OpenTelemetry spans and metrics. Options.Tracer nil,
// the default, makes every hook in this file return at its first line, so a gateway without
// tracing starts no span and allocates nothing for it (BenchmarkTraceHooksOff).
//
// The hooks sit where the log lines are written: a request's trace ends in logRequest and an
// attempt's in logAttempt, with the very records those lines are made of, so a span says what
// the log says, on every door.
type Tracer interface {
	// Request begins the trace of one inbound request on a door (endpoint as in the logs:
	// chat, completions, messages, count_tokens). r's headers carry the client's trace
	// context, if it sent one.
	Request(r *http.Request, endpoint string) RequestTrace
	// Transport wraps the transport the HTTP providers share, so that every attempt's trace
	// context goes upstream with its call.
	Transport(next http.RoundTripper) http.RoundTripper
}

// RequestTrace is the trace of one request.
type RequestTrace interface {
	// Decoded gives the request as its door decoded it: the model and the settings asked
	// for, and (only if the tracer records content) the conversation. req is read-only.
	Decoded(req *llm.Request)
	// Attempt begins an attempt, whose record names its route. The context returned, derived
	// from ctx, is the attempt's: it carries the attempt's trace context to the provider.
	Attempt(ctx context.Context, rec *AttemptRecord) (context.Context, AttemptTrace)
	// TraceID is the trace's id for the request's log line, "" when the trace is not
	// recorded.
	TraceID() string
	// End closes the request with what its log line says.
	End(rec *RequestRecord)
}

// AttemptTrace is the trace of one attempt.
type AttemptTrace interface {
	// Answer sees the whole answer of an attempt that succeeded without streaming.
	Answer(a *llm.Answer)
	// Delta sees each delta of a streamed attempt that its client was sent.
	Delta(d *llm.Delta)
	// End closes the attempt with its record, as logged.
	End(rec *AttemptRecord)
}

// RequestRecord is one request as its log line has it.
type RequestRecord struct {
	RequestID string
	Endpoint  string
	Model     string // the gateway model asked for; "" when the body could not say
	Key       string // the client key's name; "" on an open gateway or before authentication
	Stream    bool
	Status    int
	Route     string // the route that answered, or the last one tried
	Attempts  int
	Usage     llm.Usage
	CostUSD   *float64
	Error     *llm.Error // what the client was told, when it was an error
	Latency   time.Duration
	TTFT      time.Duration // streams: until the first content reached the client
	Overhead  time.Duration // the gateway's own time: latency less the time spent on providers
	// Transport is "websocket" for a response.create of the Responses API's WebSocket mode,
	// "" for an HTTP request.
	Transport string
}

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

// traceAttempt begins the attempt's trace and returns the context its call goes out with.
func (rc *requestCtx) traceAttempt(ctx context.Context, rec *AttemptRecord) context.Context {
	if rc.trace == nil {
		return ctx
	}
	ctx, rec.trace = rc.trace.Attempt(ctx, rec)
	return ctx
}

// answered notes a whole answer on the attempt's record and trace.
func (a *attempt) answered(ans *llm.Answer) {
	a.rec.Stop, a.rec.ResponseModel = ans.Stop, ans.Model
	if a.rec.trace != nil {
		a.rec.trace.Answer(ans)
	}
}

// sent notes a delta its client was sent.
func (a *attempt) sent(d *llm.Delta) {
	if d.Stop != "" {
		a.rec.Stop = d.Stop
	}
	if a.rec.trace != nil {
		a.rec.trace.Delta(d)
	}
}

// streamed notes what a stream said of itself once it ended: the model the upstream says
// answered.
func (a *attempt) streamed(st llm.Stream) {
	if mr, ok := st.(llm.ModelReporter); ok {
		a.rec.ResponseModel = mr.ResponseModel()
	}
}

// endAttemptTrace closes the attempt's trace as its line is logged.
func endAttemptTrace(a *AttemptRecord) {
	if a.trace != nil {
		a.trace.End(a)
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
	rec := &RequestRecord{
		RequestID: rc.id, Endpoint: rc.endpoint, Model: rc.model, Stream: rc.stream,
		Status: status, Route: route, Attempts: rc.attempts, Usage: rc.usage, Error: oe,
		Latency: now.Sub(rc.start), TTFT: rc.ttft, Overhead: rc.overhead(now), Transport: rc.transport(),
	}
	if rc.key != nil {
		rec.Key = rc.key.Name
	}
	if rc.costSet {
		c := rc.costUSD
		rec.CostUSD = &c
	}
	t.End(rec)
}

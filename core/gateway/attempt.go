package gateway

import (
	"context"
	"net/http/httptrace"
	"time"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/record"
)

// errTotalTimeout cancels an attempt that exceeded the total time limit.
var errTotalTimeout = &providers.Error{Class: providers.Timeout, Message: "the attempt exceeded the total timeout"}

// attempt is one try of one route: its context and clocks, and its record. Total bounds the
// attempt from its start to its end and is the context's deadline, so an upstream that
// honours deadlines (gRPC sends it along) sees it too; first_byte runs until the answer
// begins. Either ends the attempt by cancelling its context with itself as the cause.
type attempt struct {
	q        *request
	rt       *route
	rec      *record.Attempt
	usage    *llm.Usage          // what it used so far, charged by finish; nil: nothing known
	trace    record.AttemptTrace // nil: not traced
	outChars int                 // characters of output the client was sent, for estimates
	embedded bool                // an embeddings answer: charged its input estimate when unreported
	hit      bool                // answered from the response cache: uses and costs nothing
	// impossible are the usage counts dropped, logged with the attempt.
	impossible []llm.ImpossibleCount
	ctx        context.Context
	cancel     context.CancelCauseFunc // cancels with a cause; idle uses it too
	stop       context.CancelFunc
	first      *time.Timer
	began      time.Time
	deadline   time.Time // when total runs out
}

// errSkip is a route that turned out unable to serve the request once asked (a backend that
// cannot count these tokens): the attempt is discarded, as if never made.
var errSkip = &providers.Error{Class: providers.Unsupported, Message: "the route cannot serve this request"}

// failover tries the planned routes in order until one serves the client. try makes one
// attempt: it returns nil when it answered the client (and finished the attempt), errSkip to
// pass the route by, or the failure that came before any output. A failure moves on while it
// may and routes remain; else the client gets its answer, except that with fallback the last
// route's failure is left to the caller (count_tokens answers its estimate). It reports
// whether the client has been answered.
func (q *request) failover(routes []*route, fallback bool, try func(a *attempt) *providers.Error) bool {
	for i, rt := range routes {
		a := q.begin(rt, i)
		pe := try(a)
		switch {
		case pe == nil:
			return true
		case pe == errSkip:
			a.end()
			q.rc.attempts--
			continue
		}
		if !a.failedBeforeOutput(pe, fallback || i+1 < len(routes)) {
			return true
		}
	}
	return false
}

// begin starts the n-th attempt (0-based) of the request on rt.
func (q *request) begin(rt *route, n int) *attempt {
	rc, m := &q.rc, q.m
	rc.attempts++
	rec := q.g.newAttempt(rc, rt, n)
	a := &attempt{q: q, rt: rt, rec: rec}
	ctx, cancel := context.WithCancelCause(a.startTrace(q.r.Context()))
	a.began = time.Now()
	a.deadline = a.began.Add(m.timeouts.Total.D())
	a.ctx, a.stop = context.WithDeadlineCause(ctx, a.deadline, errTotalTimeout)
	a.cancel = cancel
	a.first = time.AfterFunc(m.timeouts.FirstByte.D(), func() { cancel(providers.ErrFirstByteTimeout) })
	return a
}

// finish is the one end of every attempt: its clocks stop and its call is released, pe (nil
// when it did not fail) and outcome are recorded, what it used is charged and priced, and its
// line is logged, which ends its span and tells OnAttempt.
func (a *attempt) finish(outcome string, pe *providers.Error) {
	a.end()
	if pe != nil {
		setError(a.rec, pe)
	}
	if a.hit && outcome == record.OutcomeOK {
		outcome = record.OutcomeCacheHit
	}
	a.rec.Outcome = outcome
	a.charge()
	a.q.g.logAttempt(a)
}

// finishError finishes an attempt that the gateway itself ended with the client's error e (the
// time limit came, a guardrail failed closed): no upstream failure to record, so the record
// takes e's code and message.
func (a *attempt) finishError(e *llm.Error) {
	a.rec.ErrorCode, a.rec.ErrorMessage = e.Code, e.Message
	a.finish(record.OutcomeError, nil)
}

// clientLeft finishes the attempt and the request of a client that left: nothing more is
// written to it.
func (a *attempt) clientLeft() {
	a.finish(record.OutcomeClientClosed, nil)
	a.q.done(statusClientClosed, a.rt.id, nil)
}

// charge records what the attempt used, prices it and charges it to the key's counters, once.
// Impossible counts are dropped here, so a stream's end charges before the client is sent
// its usage.
func (a *attempt) charge() {
	if a.usage == nil || a.hit {
		a.usage = nil
		return
	}
	q := a.q
	q.g.setUsage(a, a.usage, q.m, &q.rc)
	a.usage = nil
}

// failedBeforeOutput ends an attempt that failed while the client had seen nothing, and
// reports whether the next route should be tried (more: one remains). When it should not
// (the client left, the time limit came, the failure is the request's own fault, no route
// remains) the client has its answer.
func (a *attempt) failedBeforeOutput(pe *providers.Error, more bool) bool {
	q := a.q
	switch {
	case q.timeUp():
		a.finishError(errFunctionTimeout)
		q.fail(a.rt, errFunctionTimeout)
		return false
	case q.clientGone():
		a.clientLeft()
		return false
	}
	more = more && pe.Failover()
	if more {
		a.finish(record.OutcomeFailover, pe)
		return true
	}
	a.finish(record.OutcomeError, pe)
	q.fail(a.rt, pe.ClientError())
	return false
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

// took records the wait of a call answered whole (or failed): the attempt's latency, and
// time the request spent on providers.
func (a *attempt) took() {
	d := a.arrived()
	a.rec.Latency = d
	a.q.rc.upstream += d
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
		return a.q.g.secrets.Scrub(s, maxUpstreamText)
	})
}

// end stops the clocks and cancels the attempt's context, which releases the upstream call.
func (a *attempt) end() {
	a.first.Stop()
	a.stop()
	a.cancel(nil)
}

package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// request is one client request from its arrival to its last log line: the writer the client
// reads, the wire it came on (its door, for the doors), its context (id, key, clocks, usage and
// the log line's fields) and, once decoded, its model and the wire-neutral request. Every
// endpoint runs through it, so each step is written once:
//
//	ServeHTTP        the request value, the platform's time limit, one recover for every endpoint
//	handle           admit (id, trace, key), receive (body, in-flight slot), then the endpoint
//	serveDoor        decode, model, limits, plan, then answer or stream (serveCount, serveEmbeddings:
//	                 their own decode, the same limits, plan and loop)
//	failover         the planned routes in order, each an attempt, until one serves the client
//	attempt.finish   the one end of every attempt: outcome, usage and charge, its line, its span
//	refuse, fail,    the one end of every request: its answer when it is an error, its line,
//	  done           its span, its usage in the history (usage.go)
//
// One allocation holds the value, its writer and its context.
type request struct {
	g    *Gateway
	w    trackingWriter
	r    *http.Request
	wire wire
	rc   requestCtx
	m    *model
	req  *llm.Request
	// cache is the response cache's part in the request; nil when nothing caches it.
	cache *cacheState
	// guard is the guardrails' part in the request; nil when none applies.
	guard *guardState
}

// wire is what every endpoint's requests have: a name in the logs and an error shape. The
// doors are wires that also decode and encode a conversation (door.go); count_tokens and
// embeddings are wires of their own.
type wire interface {
	// endpoint names the requests in logs and attempt records: chat, completions, messages,
	// count_tokens, responses, compact, embeddings.
	endpoint() string
	// writeError answers e as a whole response.
	writeError(w http.ResponseWriter, rc *requestCtx, e *llm.Error)
}

// anthropicWire is a wire of Anthropic's (the Messages door, count_tokens), whose clients
// read Request-Id.
type anthropicWire interface{ anthropic() }

// openaiWire is an endpoint of OpenAI's that is not a door (embeddings, a stored response):
// OpenAI's error shape, under its name.
type openaiWire string

func (w openaiWire) endpoint() string { return string(w) }

func (openaiWire) writeError(w http.ResponseWriter, _ *requestCtx, e *llm.Error) {
	openai.WriteError(w, e)
}

// ServeHTTP dispatches the API. A request whose context carries a deadline (Lambda's invoke
// deadline) is ended in-band shortly before it, and a panic anywhere under an endpoint is the
// request's failure, never the instance's.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := newRequest(g, w, r)
	if _, ok := r.Context().Deadline(); ok {
		stop := q.limitTime()
		defer stop()
	}
	defer q.recover()
	g.mux.ServeHTTP(&q.w, q.r)
}

func newRequest(g *Gateway, w http.ResponseWriter, r *http.Request) *request {
	q := &request{g: g, r: r}
	q.w.ResponseWriter, q.w.q = w, q
	return q
}

// requestOf is the request value ServeHTTP made for w, or a new one for a handler called
// without it.
func requestOf(g *Gateway, w http.ResponseWriter, r *http.Request) *request {
	if tw, ok := w.(*trackingWriter); ok && tw.q != nil && tw.q.r == r {
		return tw.q
	}
	return newRequest(g, w, r)
}

// handle returns the handler of an endpoint: newWire makes the wire of one request, and serve
// answers it once its key is known, its body is in and its in-flight slot is taken.
func (g *Gateway) handle(newWire func() wire, serve func(q *request, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := requestOf(g, w, r)
		if !q.admit(newWire()) {
			return
		}
		body, release, ok := q.receive()
		if !ok {
			return
		}
		defer release()
		serve(q, body)
	}
}

// admit starts the request on wire: its id, its trace and its key. When it reports false the
// client has been answered.
func (q *request) admit(wi wire) bool {
	q.open(wi, requestID(q.r))
	q.g.startTrace(q.r, &q.rc)
	return q.authenticate()
}

// open starts the request on wire under id: its clocks, its name and its id headers.
func (q *request) open(wi wire, id string) {
	rc := &q.rc
	q.wire = wi
	rc.start, rc.now, rc.id, rc.endpoint = time.Now(), q.g.now, id, wi.endpoint()
	h := q.w.Header()
	h.Set("X-Request-Id", id)
	if _, anthropic := wi.(anthropicWire); anthropic {
		h.Set("Request-Id", id) // the header Anthropic's SDKs read into their errors
	}
}

// authenticate finds the request's key, or refuses it.
func (q *request) authenticate() bool {
	key, oe := q.g.authenticate(q.r, &q.rc)
	if oe != nil {
		q.refuse(oe)
		return false
	}
	q.rc.key = key
	return true
}

// receive reads the request body, then takes one of the instance's in-flight slots for the
// work the request makes it do; the caller calls release when that is done. When either fails
// the client has its answer and ok is false.
//
// The slot is taken only once the body is in. A client that trickles its body (a byte every
// few seconds) then holds a goroutine and what it has sent so far, bounded by max_body_bytes
// and body_read_timeout, but never a slot: otherwise as many such clients as there are slots
// would turn everyone else away with 429s, and by reconnecting keep doing so whatever the
// timeout. Memory is not what the slot guards (a slot taken first would bound bodies only as
// max_in_flight × max_body_bytes, gigabytes at the defaults); it bounds decoding and upstream
// work, which start here. Only clients with a valid key get this far.
func (q *request) receive() (body []byte, release func(), ok bool) {
	body, oe := q.g.readBody(&q.w, q.r)
	if oe != nil {
		q.refuse(oe)
		return nil, nil, false
	}
	release, oe = q.g.slot()
	if oe != nil {
		q.refuse(oe)
		return nil, nil, false
	}
	return body, release, true
}

// refuse answers a request the gateway turns down before any attempt.
func (q *request) refuse(oe *llm.Error) {
	q.wire.writeError(&q.w, &q.rc, oe)
	q.done(oe.Status, "", oe)
}

// fail answers a request whose last attempt, on rt, failed before any output.
func (q *request) fail(rt *route, oe *llm.Error) {
	q.g.setRouteHeaders(&q.w, &q.rc, rt)
	q.wire.writeError(&q.w, &q.rc, oe)
	q.done(oe.Status, rt.id, oe)
}

// done ends the request: its log line, its span and its usage in the history. status is what the client got (499 when
// it left); route the route that answered or was tried last; oe what the client was told when
// it was an error.
func (q *request) done(status int, route string, oe *llm.Error) {
	q.g.logRequest(&q.rc, status, route, oe)
	q.recordUsage()
}

// clientGone reports whether the client has left: the request's context ended, and not for
// the time limit.
func (q *request) clientGone() bool {
	return q.r.Context().Err() != nil && !q.timeUp()
}

// The platform's time limit. Lambda ends an invoke hard at the function timeout, which also
// recycles the execution environment; its request context carries that deadline. The
// request is ended before it, with a cause of its own (one the deadline itself ended could
// only say DeadlineExceeded): the upstream call is cancelled, and the client learns why in
// the door's shape, a 504 before any output and the door's error event after it, while the
// warm instance survives.
var errTimeLimit = errors.New("the platform's time limit for the request is near")

// errFunctionTimeout is what the client is told when the time limit ended its request.
var errFunctionTimeout = &llm.Error{Status: http.StatusGatewayTimeout, Type: llm.TypeTimeout, Code: "function_timeout",
	Message: "the gateway function reached its time limit before the answer was complete"}

// limitTime ends the request deadlineMargin before its context's deadline (or a quarter of
// the time left, when that is less). The caller calls stop when the request is over.
func (q *request) limitTime() (stop func()) {
	deadline, _ := q.r.Context().Deadline()
	ctx, cancel := context.WithCancelCause(q.r.Context())
	cut := time.Until(deadline)
	cut -= min(q.g.deadlineMargin, cut/4)
	t := time.AfterFunc(cut, func() { cancel(errTimeLimit) })
	q.r = q.r.WithContext(ctx)
	return func() {
		t.Stop()
		cancel(nil)
	}
}

// timeUp reports whether the time limit ended the request.
func (q *request) timeUp() bool { return errors.Is(context.Cause(q.r.Context()), errTimeLimit) }

// recover keeps a bug in one request from taking the instance down: a 500 in the wire's
// shape before any output, the stream's error event after it. http.ErrAbortHandler, net/http's
// way to abort a response on purpose, ends an answer as it stands, and before any output is a
// 502 (an empty 200 would read as success); it is not raised again, since a platform without
// net/http's recover (Lambda's lambdaurl) would end the process with it.
func (q *request) recover() {
	v := recover()
	if v == nil {
		return
	}
	e := &llm.Error{Status: http.StatusInternalServerError, Type: llm.TypeServer, Code: "internal_error",
		Message: "the gateway failed while handling this request"}
	if v == http.ErrAbortHandler {
		if q.w.wrote {
			return
		}
		e = &llm.Error{Status: http.StatusBadGateway, Type: llm.TypeServer, Code: "aborted",
			Message: "the gateway aborted this request before answering"}
	} else {
		q.g.log.Error("panic", slog.String("request_id", q.rc.id), slog.String("path", q.r.URL.Path), slog.String("panic", fmt.Sprint(v)))
	}
	q.rc.endTrace(time.Now(), e.Status, "", e)
	switch {
	case !q.w.wrote && q.wire != nil:
		q.wire.writeError(&q.w, &q.rc, e)
	case !q.w.wrote:
		writeBare(&q.w, q.r, e)
	case q.w.events != nil:
		_, _ = q.w.Write(q.w.events.fail(nil, e))
		_ = flush(&q.w)
	}
}

// trackingWriter remembers whether output began, and the stream's encoder once it did, so a
// recovered panic answers correctly.
type trackingWriter struct {
	http.ResponseWriter
	q      *request
	wrote  bool
	events encoder
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the platform's writer (for Flush, deadlines and
// the WebSocket mode's Hijack).
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

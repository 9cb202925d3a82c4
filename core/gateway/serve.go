package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fngate/fngate/core/llm"
)

// Response headers naming what served the request.
const (
	HeaderRoute    = "X-Fngate-Route"
	HeaderAttempts = "X-Fngate-Attempts"
	HeaderOverhead = "X-Fngate-Overhead-Ms"
)

// statusClientClosed is logged when the client leaves (nginx's convention).
const statusClientClosed = 499

// door returns the handler of a front door: newDoor makes the door value of one request.
func (g *Gateway) door(newDoor func() door) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d := newDoor()
		rc, ok := g.admit(w, r, d)
		if !ok {
			return
		}
		tw := &trackingWriter{ResponseWriter: w}
		defer g.recoverPanic(tw, d, rc)
		body, release, ok := g.receive(tw, r, d, rc)
		if !ok {
			return
		}
		defer release()
		g.serve(tw, r, d, rc, body)
	}
}

// serve answers a request whose body is in and whose slot is taken: decode, model, limits,
// plan, then the answer or the stream. The Responses API's WebSocket mode serves each of its
// response.create messages here too (socket.go), so both transports run one pipeline.
func (g *Gateway) serve(tw *trackingWriter, r *http.Request, d door, rc *requestCtx, body []byte) {
	req, m, ok := g.prepare(tw, r, d, rc, body)
	if !ok {
		return
	}
	rc.inputEstimate = estimateTokens(req)
	if !g.admitLimits(tw, r, d, rc, m, rc.inputEstimate, m.reservedOutput(req)) {
		return
	}
	defer g.settle(rc)
	routes, oe := g.plan(m, req, rc)
	if oe != nil {
		g.refuse(tw, d, rc, oe)
		return
	}
	if req.Stream {
		g.stream(tw, r, d, rc, m, req, routes)
		return
	}
	g.answer(tw, r, d, rc, m, req, routes)
}

// admit starts a request: its id and its key. When ok is false the client has been
// answered.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, d door) (rc *requestCtx, ok bool) {
	rc = &requestCtx{start: time.Now(), now: g.now, id: requestID(r), endpoint: d.endpoint()}
	g.startTrace(r, rc)
	h := w.Header()
	h.Set("X-Request-Id", rc.id)
	if _, anthropic := d.(*messagesDoor); anthropic {
		h.Set("Request-Id", rc.id) // the header Anthropic's SDKs read into their errors
	}
	key, oe := g.authenticate(r)
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, false
	}
	rc.key = key
	return rc, true
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
func (g *Gateway) receive(w http.ResponseWriter, r *http.Request, d door, rc *requestCtx) (body []byte, release func(), ok bool) {
	body, oe := g.readBody(w, r)
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	release, oe = g.slot()
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	return body, release, true
}

// slot takes one of the instance's in-flight slots, or answers 429 gateway_busy.
func (g *Gateway) slot() (release func(), oe *llm.Error) {
	if n := g.inFlight.Add(1); n > g.maxIn {
		g.inFlight.Add(-1)
		return nil, &llm.Error{Status: http.StatusTooManyRequests, Type: llm.TypeRateLimit, Code: "gateway_busy", RetryAfter: "1",
			Message: "this gateway instance is at its limit of concurrent requests; retry shortly"}
	}
	return func() { g.inFlight.Add(-1) }, nil
}

// prepare decodes the body and finds the model. When ok is false the client has been
// answered and the request logged.
func (g *Gateway) prepare(w http.ResponseWriter, r *http.Request, d door, rc *requestCtx, body []byte) (*llm.Request, *model, bool) {
	req, oe := d.decode(r, rc, body, decoding{limits: g.limits, profile: g.profile(rc.key)})
	if oe != nil {
		rc.model = modelAskedFor(body)
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	rc.model, rc.stream = req.Model, req.Stream
	rc.labels = labels(req, rc)
	rc.traceDecoded(req)
	m, oe := g.lookup(req.Model, rc)
	if oe == nil {
		oe = m.servesChat()
	}
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	if oe := m.checkOutputMax(req, d); oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	return req, m, true
}

// modelAskedFor reads the model a body that failed to decode asked for, for its log line; ""
// when the body is not a JSON object with a string model.
func modelAskedFor(body []byte) string {
	var v struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Model
}

// refuse answers a request the gateway turns down before any attempt.
func (g *Gateway) refuse(w http.ResponseWriter, d door, rc *requestCtx, oe *llm.Error) {
	d.writeError(w, rc, oe)
	g.logRequest(rc, oe.Status, "", oe)
}

// errBodyTimeout is a body that did not arrive within body_read_timeout.
var errBodyTimeout = errors.New("the request body did not arrive in time")

// readBody reads the whole body within the configured size and time limits. The Content-Type
// is not checked: the body must be JSON either way, and `curl -d` sends a form type.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *llm.Error) {
	if oe := identityOnly(w, r); oe != nil {
		return nil, oe
	}
	if r.ContentLength > g.maxBody {
		return nil, tooLarge(g.maxBody)
	}
	if r.Body == nil { // a request built by hand rather than by a server
		r.Body = http.NoBody
	}
	body, err := g.readWithin(w, io.LimitReader(r.Body, g.maxBody+1))
	switch {
	case errors.Is(err, errBodyTimeout) || errors.Is(err, os.ErrDeadlineExceeded):
		// The rest of the body may still be on its way: the connection cannot carry another
		// request.
		w.Header().Set("Connection", "close")
		return nil, &llm.Error{Status: http.StatusRequestTimeout, Type: llm.TypeInvalidRequest, Code: "request_timeout",
			Message: "the request body did not arrive within " + g.bodyTime.String() + " (limits.body_read_timeout)"}
	case err != nil:
		return nil, llm.BadRequest("", "could not read the request body: "+err.Error())
	case int64(len(body)) > g.maxBody:
		return nil, tooLarge(g.maxBody)
	}
	return body, nil
}

// readWithin reads body to its end within body_read_timeout. Where the platform's writer
// takes a read deadline (net/http's does: the local server, and Cloud Functions, whose
// http.Server belongs to functions-framework) the connection enforces it, and a stalled read
// returns at the deadline. Elsewhere (Lambda hands over the body whole; writers that hide the
// connection) a timer gives up on the read instead, leaving it to end when the platform closes
// the body.
func (g *Gateway) readWithin(w http.ResponseWriter, body io.Reader) ([]byte, error) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(g.bodyTime)); err == nil {
		b, err := io.ReadAll(body)
		if err == nil {
			// At once: after the body net/http keeps reading the connection to notice a
			// client that leaves, and a deadline passing then would cancel the request.
			_ = rc.SetReadDeadline(time.Time{})
		}
		return b, err
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(body)
		done <- result{b, err}
	}()
	timer := time.NewTimer(g.bodyTime)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.b, res.err
	case <-timer.C:
		return nil, errBodyTimeout
	}
}

// identityOnly refuses a body sent with a content coding. The gateway does not inflate
// request bodies (JSON this small gains little, and inflating lets a few bytes cost a lot of
// memory), and reading a compressed body as JSON would answer with a baffling parse error.
// RFC 9110 section 15.5.16: a 415 for a coding names the acceptable ones in Accept-Encoding.
func identityOnly(w http.ResponseWriter, r *http.Request) *llm.Error {
	for _, v := range r.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			c = strings.TrimSpace(c)
			if c == "" || strings.EqualFold(c, "identity") {
				continue
			}
			named := "Content-Encoding: " + c
			if len(c) > 32 || !tokenChars(c) {
				named = "A Content-Encoding other than identity"
			}
			w.Header().Set("Accept-Encoding", "identity")
			return &llm.Error{Status: http.StatusUnsupportedMediaType, Type: llm.TypeInvalidRequest, Code: "unsupported_content_encoding",
				Message: named + " is not supported: send the request body uncompressed"}
		}
	}
	return nil
}

func tooLarge(limit int64) *llm.Error {
	return &llm.Error{Status: http.StatusRequestEntityTooLarge, Type: llm.TypeInvalidRequest, Code: "request_too_large",
		Message: fmt.Sprintf("the request body exceeds the gateway's limit of %d bytes", limit)}
}

// lookup finds the model the key asked for. A model the key may not use gets the very answer
// of one that does not exist (OpenAI's own wording covers both), so a key cannot learn which
// models the gateway serves to others.
func (g *Gateway) lookup(name string, rc *requestCtx) (*model, *llm.Error) {
	m, ok := g.models[name]
	if !ok || !allowsModel(rc.key, name) {
		return nil, modelNotFound(name)
	}
	return m, nil
}

func modelNotFound(name string) *llm.Error {
	return &llm.Error{Status: http.StatusNotFound, Type: llm.TypeNotFound, Param: "model", Code: "model_not_found",
		Message: "The model `" + name + "` does not exist or you do not have access to it. GET /v1/models lists the models you can use."}
}

// defaultMaxDoor is a door whose requests carry no output maximum of their own (Codex never
// sends max_output_tokens; /v1/responses/compact has no such field): defaultMaximum gives the
// maximum such a request gets, from the model's ceiling (0 when it has none) and whether the
// model is priced; ok false when it gets none and the model's rules apply as they stand.
type defaultMaxDoor interface {
	defaultMaximum(ceiling int, priced bool) (n int, ok bool)
}

// checkOutputMax applies the model's token rules: a priced model needs an explicit output
// maximum (so no request can run up an unbounded bill), and none may exceed the ceiling.
// A defaultMaxDoor's request that gave none gets the door's default instead.
func (m *model) checkOutputMax(req *llm.Request, d door) *llm.Error {
	param, v := req.MaxTokensParam, req.MaxTokens
	dm, defaults := d.(defaultMaxDoor)
	if v == nil && defaults {
		if n, ok := dm.defaultMaximum(m.cfg.MaxOutputTokens, m.cfg.Priced()); ok && n > 0 {
			req.MaxTokens = &n
			return nil
		}
	}
	if v == nil {
		if !m.cfg.Priced() {
			return nil
		}
		msg := param + " is required for the priced model " + m.cfg.Name
		if defaults {
			msg += " (or a max_output_tokens ceiling on the model, which then bounds requests that give none)"
		}
		return llm.BadRequest(param, msg)
	}
	if m.cfg.MaxOutputTokens > 0 && *v > m.cfg.MaxOutputTokens {
		return llm.BadRequest(param, param+" is "+strconv.Itoa(*v)+", above the limit of "+strconv.Itoa(m.cfg.MaxOutputTokens)+" for "+m.cfg.Name)
	}
	return nil
}

// labels are log-only: user, metadata and the session never reach a provider as labels.
func labels(req *llm.Request, rc *requestCtx) []slog.Attr {
	var out []slog.Attr
	if rc.key != nil {
		out = append(out, slog.String("key", rc.key.Name))
	}
	if req.User != "" {
		out = append(out, slog.String("user", req.User))
	}
	if req.Session != "" {
		out = append(out, slog.String("session", req.Session))
	}
	for k, v := range req.Metadata {
		out = append(out, slog.String("metadata."+k, v))
	}
	return out
}

func (g *Gateway) setRouteHeaders(w http.ResponseWriter, rc *requestCtx, rt *route) {
	h := w.Header()
	h.Set(HeaderRoute, rt.id)
	h.Set(HeaderAttempts, strconv.Itoa(rc.attempts))
	h.Set(HeaderOverhead, strconv.FormatFloat(ms(rc.overhead(time.Now())), 'f', 3, 64))
}

// recoverPanic keeps a bug in one request from taking the instance down: a 500 before any
// output, an in-band error event after it.
func (g *Gateway) recoverPanic(w *trackingWriter, d door, rc *requestCtx) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	g.log.Error("panic", slog.String("request_id", rc.id), slog.String("panic", fmt.Sprint(v)))
	e := &llm.Error{Status: http.StatusInternalServerError, Type: llm.TypeServer, Code: "internal_error",
		Message: "the gateway failed while handling this request"}
	rc.endTrace(time.Now(), e.Status, "", e)
	if !w.wrote {
		d.writeError(w, rc, e)
		return
	}
	if w.events != nil {
		_, _ = w.Write(w.events.fail(nil, e))
		_ = flush(w)
	}
}

// trackingWriter remembers whether output began, and the stream's encoder once it did, so a
// recovered panic answers correctly.
type trackingWriter struct {
	http.ResponseWriter
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

// Unwrap lets http.ResponseController reach the platform's writer (for Flush).
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

package gateway

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
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
		rc, release, ok := g.admit(w, r, d)
		if !ok {
			return
		}
		defer release()
		tw := &trackingWriter{ResponseWriter: w}
		defer g.recoverPanic(tw, d, rc)
		req, m, ok := g.prepare(tw, r, d, rc)
		if !ok {
			return
		}
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
}

// admit starts a request: its id, an in-flight slot, its key. When ok is false the client
// has been answered.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request, d door) (rc *requestCtx, release func(), ok bool) {
	rc = &requestCtx{start: time.Now(), now: g.now, id: requestID(r), endpoint: d.endpoint()}
	h := w.Header()
	h.Set("X-Request-Id", rc.id)
	if _, anthropic := d.(*messagesDoor); anthropic {
		h.Set("Request-Id", rc.id) // the header Anthropic's SDKs read into their errors
	}
	if n := g.inFlight.Add(1); n > g.maxIn {
		g.inFlight.Add(-1)
		d.writeError(w, rc, &llm.Error{Status: http.StatusTooManyRequests, Type: llm.TypeRateLimit, Code: "gateway_busy", RetryAfter: "1",
			Message: "this gateway instance is at its limit of concurrent requests; retry shortly"})
		return nil, nil, false
	}
	release = func() { g.inFlight.Add(-1) }
	key, oe := g.authenticate(r)
	if oe != nil {
		release()
		d.writeError(w, rc, oe)
		return nil, nil, false
	}
	rc.key = key
	return rc, release, true
}

// prepare reads and decodes the body and finds the model. When ok is false the client has
// been answered and the request logged.
func (g *Gateway) prepare(w http.ResponseWriter, r *http.Request, d door, rc *requestCtx) (*llm.Request, *model, bool) {
	body, oe := g.readBody(w, r)
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	req, oe := d.decode(r, body, g.limits)
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	rc.model, rc.stream = req.Model, req.Stream
	rc.labels = labels(req, rc)
	m, oe := g.lookup(req.Model, rc)
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	if oe := m.checkOutputMax(req); oe != nil {
		g.refuse(w, d, rc, oe)
		return nil, nil, false
	}
	return req, m, true
}

// refuse answers a request the gateway turns down before any attempt.
func (g *Gateway) refuse(w http.ResponseWriter, d door, rc *requestCtx, oe *llm.Error) {
	d.writeError(w, rc, oe)
	g.logRequest(rc, oe.Status, "", oe)
}

// readBody reads the whole body within the configured limit. The Content-Type is not
// checked: the body must be JSON either way, and `curl -d` sends a form type.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *llm.Error) {
	if r.ContentLength > g.maxBody {
		return nil, tooLarge(g.maxBody)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(g.maxBody)
		}
		return nil, llm.BadRequest("", "could not read the request body: "+err.Error())
	}
	return body, nil
}

func tooLarge(limit int64) *llm.Error {
	return &llm.Error{Status: http.StatusRequestEntityTooLarge, Type: llm.TypeInvalidRequest, Code: "request_too_large",
		Message: fmt.Sprintf("the request body exceeds the gateway's limit of %d bytes", limit)}
}

func (g *Gateway) lookup(name string, rc *requestCtx) (*model, *llm.Error) {
	m, ok := g.models[name]
	if !ok {
		return nil, &llm.Error{Status: http.StatusNotFound, Type: llm.TypeNotFound, Param: "model", Code: "model_not_found",
			Message: "The model `" + name + "` does not exist on this gateway. GET /v1/models lists the models you can use."}
	}
	if !allowsModel(rc.key, name) {
		return nil, &llm.Error{Status: http.StatusForbidden, Type: llm.TypePermission, Param: "model", Code: "model_not_allowed",
			Message: "This key may not use the model `" + name + "`."}
	}
	return m, nil
}

// checkOutputMax applies the model's token rules: a priced model needs an explicit output
// maximum (so no request can run up an unbounded bill), and none may exceed the ceiling.
func (m *model) checkOutputMax(req *llm.Request) *llm.Error {
	param, v := req.MaxTokensParam, req.MaxTokens
	if v == nil {
		if m.cfg.Priced() {
			return llm.BadRequest(param, param+" is required for the priced model "+m.cfg.Name)
		}
		return nil
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

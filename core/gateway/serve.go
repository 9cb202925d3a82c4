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
	return g.handle(func() wire { return newDoor() }, (*request).serveDoor)
}

// serveDoor answers a door's request whose body is in and whose slot is taken: decode, model,
// limits, plan, then the answer or the stream. The Responses API's WebSocket mode serves each
// of its response.create messages here too (socket.go), so both transports run one pipeline.
func (q *request) serveDoor(body []byte) {
	if !q.prepare(body) {
		return
	}
	req, rc := q.req, &q.rc
	rc.inputEstimate = estimateTokens(req)
	if !q.admitLimits(rc.inputEstimate, q.m.reservedOutput(req)) {
		return
	}
	defer q.g.settle(rc)
	if !q.guardInput() {
		return
	}
	if q.fromCache() {
		return
	}
	routes, oe := q.g.plan(q.m, req, rc)
	if oe != nil {
		q.refuse(oe)
		return
	}
	if req.Stream {
		q.stream(routes)
		return
	}
	q.answer(routes)
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

// prepare decodes the body with the request's door and finds the model. When it reports false
// the client has been answered and the request logged.
func (q *request) prepare(body []byte) bool {
	d, rc := q.wire.(door), &q.rc
	req, oe := d.decode(q.r, rc, body, decoding{limits: q.g.limits, profile: q.g.profile(rc.key)})
	if oe != nil {
		rc.model = modelAskedFor(body)
		q.refuse(oe)
		return false
	}
	rc.model, rc.stream = req.Model, req.Stream
	rc.labels = labels(req, rc)
	rc.traceDecoded(req)
	m, oe := q.g.lookup(req.Model, rc)
	if oe == nil {
		oe = m.servesChat()
	}
	if oe == nil {
		oe = m.checkOutputMax(req, d)
	}
	if oe != nil {
		q.refuse(oe)
		return false
	}
	q.m, q.req = m, req
	return true
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
	// Read to its end, and closed so net/http knows it: a body left open, even at its end, is
	// drained again when the response starts (chunkWriter.writeHeader's io.CopyN to
	// io.Discard), which at a stream's first flush is what took the handler's goroutine past
	// 8 KB of stack, and it then held 16 KB for the rest of the stream.
	_ = r.Body.Close()
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
	out := appendKey(nil, rc.key)
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

package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/responsestore"
)

// The Responses API's WebSocket mode: GET /v1/responses upgraded to a WebSocket, on which the
// client sends response.create messages (a POST /v1/responses body with "type" beside it)
// and gets each response's events as text messages, the very events its SSE stream carries,
// one response at a time. A continuation names the connection's last response by
// previous_response_id, which works with store: false too: the connection keeps that one
// response (its input items and output) in memory while it is open.
//
// Each response.create is one request of the gateway's: its own request id, in-flight slot,
// limits and budgets, attempts, log line and trace, run by Gateway.serve, the code POST
// /v1/responses runs. socketWriter is the only adapter: the stream code writes the
// Responses door's server-sent events to it as it would to an HTTP client, and it sends each
// event's data as one message.

// sockets are the WebSocket mode's settings (Options.WebSockets and limits.websocket_*) and
// its open connections, which a server's shutdown does not see (CloseWebSockets).
type sockets struct {
	on         bool
	maxMessage int64         // a message, and the conversation a connection keeps
	idle       time.Duration // without a response or a message
	lifetime   time.Duration // of one connection

	mu       sync.Mutex
	open     int             // connections
	draining chan struct{}   // closed by CloseWebSockets
	closed   chan struct{}   // closed once draining and no connection is open
	stop     context.Context // cancelled when CloseWebSockets gives up waiting
	stopNow  context.CancelFunc
}

func newSockets(l *config.Limits, on bool) *sockets {
	s := &sockets{on: on, maxMessage: l.WebSocketMaxMessageBytes, idle: l.WebSocketIdleTimeout.D(), lifetime: l.WebSocketMaxDuration.D(),
		draining: make(chan struct{}), closed: make(chan struct{})}
	s.stop, s.stopNow = context.WithCancel(context.Background())
	return s
}

// errShutdown cancels the connections still open when CloseWebSockets stops waiting.
var errShutdown = errors.New("the server shut down")

// CloseWebSockets ends the Responses API's WebSocket connections for a server that shuts
// down, which net/http's Shutdown leaves alone once they are upgraded: each closes (1001)
// as soon as the response it is running has ended, and new handshakes are refused. It
// returns when every connection has closed, or when ctx ends, having cut those still open.
func (g *Gateway) CloseWebSockets(ctx context.Context) error {
	s := g.sockets
	s.mu.Lock()
	select {
	case <-s.draining:
	default:
		close(s.draining)
		if s.open == 0 {
			close(s.closed)
		}
	}
	s.mu.Unlock()
	select {
	case <-s.closed:
		return nil
	case <-ctx.Done():
		s.stopNow()
		<-s.closed
		return ctx.Err()
	}
}

// enter counts a connection in; false once the gateway is closing its connections.
func (s *sockets) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.draining:
		return false
	default:
	}
	s.open++
	return true
}

func (s *sockets) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	select {
	case <-s.draining:
		if s.open == 0 {
			close(s.closed)
		}
	default:
	}
}

// serveResponsesSocket answers GET /v1/responses. A WebSocket handshake opens a connection
// where the platform passes upgrades (Options.WebSockets) and gets a 426 naming HTTP
// streaming where it does not; any other GET gets the 405 it always did.
func (g *Gateway) serveResponsesSocket(w http.ResponseWriter, r *http.Request) {
	if !handshake(r) {
		methodNotAllowed(w, r, http.MethodPost)
		return
	}
	// The upgrade is not traced: each response.create on the connection is.
	q := requestOf(g, w, r)
	q.open(&responsesDoor{g: g}, requestID(r))
	if !q.authenticate() {
		return
	}
	rc, key := &q.rc, q.rc.key
	if oe := g.checkHandshake(r); oe != nil {
		q.refuse(oe)
		return
	}
	// checkHandshake has checked the Origin: the library's check would answer in plain text.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		// Accept has answered: the platform's writer cannot hand over its connection.
		q.done(http.StatusNotImplemented, "", &llm.Error{Status: http.StatusNotImplemented, Type: llm.TypeServer,
			Code: "websocket_unavailable", Message: err.Error()})
		return
	}
	if !g.sockets.enter() { // CloseWebSockets began since checkHandshake
		_ = conn.Close(websocket.StatusGoingAway, "the server is shutting down")
		return
	}
	defer g.sockets.leave()
	newSocket(g, conn, r, key, rc.id).serve()
}

// handshake reports whether r asks for a WebSocket. Sec-WebSocket-Key counts alone: a front
// end that drops the hop-by-hop Upgrade and Connection headers passes it on.
func handshake(r *http.Request) bool {
	return headerHasToken(r.Header, "Upgrade", "websocket") || r.Header.Get("Sec-WebSocket-Key") != ""
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// checkHandshake refuses, in OpenAI's error shape, a handshake the gateway will not accept.
func (g *Gateway) checkHandshake(r *http.Request) *llm.Error {
	if !g.sockets.on {
		return &llm.Error{Status: http.StatusUpgradeRequired, Type: llm.TypeInvalidRequest, Code: "websocket_not_supported",
			Message: "The Responses API's WebSocket mode is not served here: this gateway runs where WebSocket upgrades do not reach it (an AWS Lambda function URL passes none). Use HTTP streaming instead: POST /v1/responses with \"stream\": true."}
	}
	select {
	case <-g.sockets.draining:
		return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "shutting_down", RetryAfter: "1",
			Message: "This gateway instance is shutting down: connect again."}
	default:
	}
	bad := func(msg string) *llm.Error {
		return &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Code: "invalid_websocket_handshake", Message: msg}
	}
	switch {
	case r.ProtoMajor != 1 || r.ProtoMinor < 1:
		return bad("A WebSocket handshake needs HTTP/1.1; this request came as " + r.Proto + ".")
	case !headerHasToken(r.Header, "Upgrade", "websocket") || !headerHasToken(r.Header, "Connection", "upgrade"):
		return bad("A WebSocket handshake needs the headers Connection: Upgrade and Upgrade: websocket.")
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return bad("This gateway speaks WebSocket version 13 (RFC 6455); send Sec-WebSocket-Version: 13.")
	case r.Header.Get("Sec-WebSocket-Key") == "":
		return bad("A WebSocket handshake needs a Sec-WebSocket-Key header.")
	}
	// A web page's script may open a WebSocket to any host, with the user's network behind
	// it: a gateway on loopback without keys would serve it. Browsers always send Origin;
	// the API's clients (SDKs, Codex) send none, or their own host.
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || !strings.EqualFold(u.Host, r.Host) {
			return &llm.Error{Status: http.StatusForbidden, Type: llm.TypePermission, Code: "origin_not_allowed",
				Message: "A WebSocket from a web page (Origin " + strconv.Quote(o) + ") is refused: the Responses API's WebSocket mode is for API clients, which send no Origin."}
		}
	}
	return nil
}

// errSocketClosed cancels a connection whose client closed it or went away.
var errSocketClosed = errors.New("the client closed the WebSocket connection")

// socket is one WebSocket connection. Its loop (serve) takes the client's messages one at a
// time and serves each before it takes the next; a reader goroutine reads them as they come,
// so a client that closes or leaves cancels the response that is running.
type socket struct {
	g       *Gateway
	conn    *websocket.Conn
	id      string     // the upgrade's request id, in each of its requests' log lines
	key     *clientKey // authenticated at the upgrade; every message is its key's (a stored key's checked again: rekey)
	req     *http.Request
	ctx     context.Context
	cancel  context.CancelCauseFunc
	unhook  func() bool // from the gateway's shutdown
	in      chan inbound
	read    chan struct{} // closed when the reader has stopped
	w       socketWriter
	started time.Time
	// last is the connection's last response, which a continuation may name even when it
	// was not stored; nil when there is none or it was evicted.
	last     *responsestore.Stored
	messages int
	closed   string // why the connection closed, for its log line
}

// inbound is one message from the client.
type inbound struct {
	typ    websocket.MessageType
	data   []byte
	tooBig bool // data is not read: the message exceeds limits.websocket_max_message_bytes
}

func newSocket(g *Gateway, conn *websocket.Conn, r *http.Request, key *clientKey, id string) *socket {
	// The library's own limit would close the connection before the client learns why; the
	// reader bounds each message itself (read).
	conn.SetReadLimit(-1)
	// r's context lasts while the handler runs, which is the connection's whole life, and
	// ends early when the platform's request deadline does (Cloud Run's timeout).
	ctx, cancel := context.WithCancelCause(r.Context())
	s := &socket{g: g, conn: conn, id: id, key: key, req: r.WithContext(ctx), ctx: ctx, cancel: cancel,
		unhook: context.AfterFunc(g.sockets.stop, func() { cancel(errShutdown) }),
		in:     make(chan inbound), read: make(chan struct{}), started: time.Now()}
	s.w = socketWriter{s: s, h: http.Header{}}
	return s
}

// serve runs the connection to its end: the client closes it, it is idle for
// limits.websocket_idle_timeout, it reaches limits.websocket_max_duration (or the platform's
// request deadline), or a message is too large.
func (s *socket) serve() {
	defer s.end()
	go s.reader()
	idle := time.NewTimer(s.g.sockets.idle)
	defer idle.Stop()
	deadline := s.deadline()
	limit := time.NewTimer(time.Until(deadline))
	defer limit.Stop()
	for {
		select {
		case m, ok := <-s.in:
			if !ok {
				s.closed = context.Cause(s.ctx).Error()
				return
			}
			if !time.Now().Before(deadline) {
				s.reachedLimit()
				return
			}
			s.respond(m)
			if m.tooBig {
				s.close(websocket.StatusMessageTooBig, "message too big (limits.websocket_max_message_bytes)")
				return
			}
			idle.Reset(s.g.sockets.idle)
		case <-idle.C:
			s.close(websocket.StatusNormalClosure, "idle for "+s.g.sockets.idle.String()+" (limits.websocket_idle_timeout)")
			return
		case <-limit.C:
			s.reachedLimit()
			return
		case <-s.g.sockets.draining:
			s.close(websocket.StatusGoingAway, "the server is shutting down")
			return
		case <-s.ctx.Done():
			s.closed = context.Cause(s.ctx).Error()
			return
		}
	}
}

// deadline is when the connection stops taking messages: limits.websocket_max_duration after
// it opened, or, when that comes first, a little before the request's time limit (limitTime)
// would cancel the connection's context, which would leave no time to tell the client why.
func (s *socket) deadline() time.Time {
	end := s.started.Add(s.g.sockets.lifetime)
	if d, ok := s.req.Context().Deadline(); ok {
		left := time.Until(d)
		cut := left - min(s.g.deadlineMargin, left/4)
		if early := time.Now().Add(cut - min(time.Second, cut/10)); early.Before(end) {
			end = early
		}
	}
	return end
}

// reachedLimit ends a connection at its deadline with OpenAI's error for it, which clients
// (Codex) take as the cue to open a new connection.
func (s *socket) reachedLimit() {
	e := &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Code: "websocket_connection_limit_reached",
		Message: "This WebSocket connection reached its limit of " + s.g.sockets.lifetime.String() +
			" (limits.websocket_max_duration, or the platform's request timeout): open a new connection to continue. " +
			"A store: false response is not carried over: send the whole conversation, or continue a stored one."}
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	_ = s.send(ctx, appendSocketError(nil, e, nil))
	s.close(websocket.StatusNormalClosure, "connection limit reached")
}

func (s *socket) close(code websocket.StatusCode, reason string) {
	s.closed = reason
	_ = s.conn.Close(code, reason)
}

// end releases the connection and logs it.
func (s *socket) end() {
	s.unhook()
	s.cancel(errSocketClosed)
	_ = s.conn.CloseNow()
	<-s.read
	attrs := []slog.Attr{
		slog.String("websocket_id", s.id),
		slog.Int("messages", s.messages),
		slog.Float64("duration_ms", ms(time.Since(s.started))),
		slog.String("closed", s.closed),
	}
	attrs = appendKey(attrs, s.key)
	s.g.log.LogAttrs(context.Background(), slog.LevelInfo, record.MsgWebSocket, attrs...)
}

// reader reads the client's messages into s.in until the connection ends. A message larger
// than the limit is read no further than the limit: the loop answers it and closes.
func (s *socket) reader() {
	defer close(s.read)
	defer close(s.in)
	limit := s.g.sockets.maxMessage
	for {
		typ, r, err := s.conn.Reader(s.ctx)
		var data []byte
		if err == nil {
			data, err = io.ReadAll(io.LimitReader(r, limit+1))
		}
		if err != nil {
			s.cancel(errSocketClosed)
			return
		}
		m := inbound{typ: typ, data: data}
		if int64(len(data)) > limit {
			m = inbound{tooBig: true}
		}
		select {
		case s.in <- m:
		case <-s.ctx.Done():
			return
		}
		if m.tooBig {
			return
		}
	}
}

// send writes one text message.
func (s *socket) send(ctx context.Context, msg []byte) error {
	return s.conn.Write(ctx, websocket.MessageText, msg)
}

// respond serves one message: a response.create through the gateway's pipeline, anything
// else refused with an error event. Either way the connection goes on.
func (s *socket) respond(m inbound) {
	s.messages++
	g := s.g
	d := &responsesDoor{g: g, socket: s}
	w := s.writer()
	defer w.done()
	q := newRequest(g, w, s.req)
	defer q.recover()
	q.open(d, "req_"+randomID(24))
	rc := &q.rc
	rc.key, rc.socket = s.key, s.id
	g.startTrace(s.req, rc)
	c, oe := parseCreate(m, g.sockets.maxMessage)
	defer s.remember(d, c.previous)
	if ke := s.rekey(rc); ke != nil { // the key first, as over HTTP
		oe = ke
	}
	if oe != nil {
		rc.model = c.model
		q.refuse(oe)
		return
	}
	release, oe := g.slot()
	if oe != nil {
		rc.model = c.model
		q.refuse(oe)
		return
	}
	defer release()
	if !c.generate {
		d.warmUp = true
		q.warmUp(c.body)
		return
	}
	q.serveDoor(c.body)
}

// rekey checks a stored key again for each response.create, so a connection opened before
// its key was revoked, disabled or rotated serves it no longer than a new request would be
// (keycache.go); the message then runs under the key as it now is (its limits, its models).
// A config key is as it was at the upgrade.
func (s *socket) rekey(rc *requestCtx) *llm.Error {
	if s.key == nil || !s.key.stored {
		return nil
	}
	k, oe := s.g.stored.find(s.ctx, s.key.Hash, rc)
	if oe != nil {
		return oe
	}
	s.key, rc.key = k, k
	return nil
}

// warmUp answers a response.create with generate: false, which Codex sends as a session
// starts so that its first turn need only add to it: the request is decoded and planned like
// any other (its mistakes show now), and answered as a completed response with no output and
// no usage, which the next turn continues. No model is called, so nothing is charged.
func (q *request) warmUp(body []byte) {
	if !q.prepare(body) {
		return
	}
	if _, oe := q.g.plan(q.m, q.req, &q.rc); oe != nil {
		q.refuse(oe)
		return
	}
	enc := q.wire.(door).encoder(&q.rc)
	zero := 0
	b := enc.start(make([]byte, 0, 1024), nil)
	b = enc.end(b, &llm.Usage{InputTokens: &zero, OutputTokens: &zero})
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(b)
	q.done(http.StatusOK, "", nil)
}

// lastResponse is the connection's last response when id names it.
func (s *socket) lastResponse(id string) *responsestore.Stored {
	if s.last != nil && s.last.ID == id {
		return s.last
	}
	return nil
}

// remember keeps the response a response.create ended with as the connection's last, unless
// it failed. A failed continuation of the last response evicts it, as OpenAI's does: the
// client starts over (from a stored response, or with the whole conversation) rather than
// building on a turn that failed. The conversation kept is bounded like a message: one too
// large to keep could not be sent whole either.
func (s *socket) remember(d *responsesDoor, previous string) {
	if d.final != nil && d.req != nil && responseStatus(d.final) != "failed" {
		st := &responsestore.Stored{ID: d.obj.ID, Model: d.obj.Model, Input: d.req.LLM.Responses.Input, Response: d.final}
		s.last = st
		if int64(len(st.Input)+len(st.Response)) > s.g.sockets.maxMessage {
			s.last = nil
		}
		return
	}
	if s.last != nil && previous == s.last.ID {
		s.last = nil
	}
}

// responseStatus is a response object's status.
func responseStatus(obj []byte) string {
	var st string
	_ = jsonx.Members(obj, func(key string, v []byte) error {
		if key == "status" {
			_ = json.Unmarshal(v, &st)
		}
		return nil
	})
	return st
}

// create is a response.create message read for the pipeline.
type create struct {
	body     []byte // the POST /v1/responses body it stands for: without type, with stream: true
	previous string // its previous_response_id
	model    string
	generate bool
}

// parseCreate reads a message as a response.create. The body it gives the door is the
// message less the WebSocket's own fields (type, generate), streaming as every response on a
// WebSocket does.
func parseCreate(m inbound, limit int64) (create, *llm.Error) {
	c := create{generate: true}
	bad := func(param, code, msg string) *llm.Error {
		return &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Param: param, Code: code, Message: msg}
	}
	switch {
	case m.tooBig:
		e := tooLarge(limit)
		e.Message = "The message exceeds the gateway's limit of " + strconv.FormatInt(limit, 10) +
			" bytes (limits.websocket_max_message_bytes); the connection closes. Continue on a new connection, or shorten the conversation."
		return c, e
	case m.typ != websocket.MessageText:
		return c, bad("", "invalid_message", "Send each response.create as a text message holding a JSON object; this was a binary message.")
	}
	data := bytes.TrimSpace(m.data)
	if !json.Valid(data) || jsonx.KindOf(data) != jsonx.Object {
		return c, bad("", "invalid_json", `The message is not a JSON object: send {"type": "response.create", ...} with the fields of a POST /v1/responses body.`)
	}
	body := make([]byte, 0, len(data)+16)
	body = append(body, '{')
	var typ string
	var problem *llm.Error
	err := jsonx.Members(data, func(key string, v []byte) error {
		switch key {
		case "type":
			_ = json.Unmarshal(v, &typ)
			return nil
		case "generate":
			switch string(v) {
			case "true":
			case "false":
				c.generate = false
			default:
				problem = cmp.Or(problem, bad("generate", "invalid_type", "Invalid type for 'generate': expected a boolean."))
			}
			return nil
		case "stream":
			// Codex sends stream: true; it is implied.
			if string(v) != "true" {
				problem = cmp.Or(problem, bad("stream", "invalid_value", "A response over WebSocket always streams: leave stream out."))
			}
			return nil
		case "background":
			if string(v) != "false" {
				problem = cmp.Or(problem, bad("background", "unsupported_parameter", "background is not supported over WebSocket: send the request with POST /v1/responses."))
			}
			return nil
		case "previous_response_id":
			_ = json.Unmarshal(v, &c.previous)
		case "model":
			_ = json.Unmarshal(v, &c.model)
		}
		if len(body) > 1 {
			body = append(body, ',')
		}
		body = openai.AppendString(body, key)
		body = append(body, ':')
		body = append(body, v...)
		return nil
	})
	var dup *jsonx.DuplicateError
	switch {
	case errors.As(err, &dup):
		return c, bad(dup.Key, "invalid_json", "The message repeats the key "+strconv.Quote(dup.Key)+".")
	case err != nil:
		return c, bad("", "invalid_json", "The message could not be read: "+err.Error()+".")
	case typ == "":
		return c, bad("type", "missing_required_parameter", `Missing required parameter: 'type'. Send {"type": "response.create", ...}.`)
	case typ != "response.create":
		return c, bad("type", "invalid_value", "Invalid value: "+strconv.Quote(typ)+". Supported values are: 'response.create'.")
	case problem != nil:
		return c, problem
	}
	if len(body) > 1 {
		body = append(body, ',')
	}
	c.body = append(body, `"stream":true}`...)
	return c, nil
}

// writeSocketError answers e, a refusal of a response.create, as the WebSocket mode's error
// event: what a POST would have got, in the envelope OpenAI's WebSocket sends.
func writeSocketError(w http.ResponseWriter, e *llm.Error) {
	h := w.Header()
	if e.RetryAfter != "" {
		h.Set("Retry-After", e.RetryAfter)
	}
	if e.NoRetry {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(appendSocketError(make([]byte, 0, 256+len(e.Message)), e, h))
}

// appendSocketError appends the error event {"type":"error","status","error":{"type","code",
// "message","param"},"headers"}. code is always a string there (the Open Responses schema
// requires one): an error without a code gets its type. headers carries what an HTTP answer
// would have in its headers (the request id, Retry-After, the rate limits), which Codex reads.
func appendSocketError(b []byte, e *llm.Error, h http.Header) []byte {
	b = append(b, `{"type":"error","status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"error":{"type":`...)
	b = openai.AppendString(b, e.Type)
	b = append(b, `,"code":`...)
	b = openai.AppendString(b, cmp.Or(e.Code, e.Type))
	b = append(b, `,"message":`...)
	b = openai.AppendString(b, e.Message)
	b = append(b, `,"param":`...)
	if e.Param != "" {
		b = openai.AppendString(b, e.Param)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, '}')
	names := make([]string, 0, len(h))
	for name := range h {
		if name != "Content-Type" && name != "Content-Length" {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		sort.Strings(names)
		b = append(b, `,"headers":{`...)
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = openai.AppendString(b, strings.ToLower(name))
			b = append(b, ':')
			b = openai.AppendString(b, h.Get(name))
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// writer readies the connection's writer for one response. Until a stream sets its
// attempt's deadline (SetWriteDeadline), writes are bounded by limits.websocket_idle_timeout:
// a client that sends messages and never reads what they get back cannot hold the connection
// open past it.
func (s *socket) writer() *socketWriter {
	w := &s.w
	clear(w.h)
	w.status, w.pending, w.err = 0, w.pending[:0], nil
	_ = w.SetWriteDeadline(time.Now().Add(s.g.sockets.idle))
	return w
}

// socketWriter is the http.ResponseWriter a response.create is served through. The stream
// code writes the Responses door's server-sent events to it; it sends each event's data as
// one text message as soon as the event is whole. A refusal (any status but 200) comes
// written as one error event (writeSocketError) and goes as one message.
//
// The error event the Responses stream sends before response.failed is not sent: on a
// WebSocket each response ends with one terminal message, which clients (Codex, the Open
// Responses suite) take as the end of that response, and response.failed carries the same
// error.
type socketWriter struct {
	s       *socket
	h       http.Header
	status  int
	pending []byte // the start of an event not yet whole
	ctx     context.Context
	cancel  context.CancelFunc // of ctx's deadline, when SetWriteDeadline set one
	err     error              // the first failed write: the client is gone
}

func (w *socketWriter) Header() http.Header { return w.h }

func (w *socketWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

// SetWriteDeadline bounds the response's writes by its attempt's total, as net/http's writer
// does for an HTTP stream: a client that stops reading cannot hold the slot.
func (w *socketWriter) SetWriteDeadline(t time.Time) error {
	w.done()
	w.ctx = w.s.ctx
	if !t.IsZero() {
		w.ctx, w.cancel = context.WithDeadline(w.s.ctx, t)
	}
	return nil
}

// done releases the write deadline.
func (w *socketWriter) done() {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
}

var sseEnd = []byte("\n\n")

func (w *socketWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.status != http.StatusOK {
		w.err = w.s.send(w.ctx, bytes.TrimSpace(b))
		return len(b), w.err
	}
	buf, held := b, len(w.pending) > 0
	if held {
		w.pending = append(w.pending, b...)
		buf = w.pending
	}
	for {
		i := bytes.Index(buf, sseEnd)
		if i < 0 {
			break
		}
		name, data := sseEvent(buf[:i])
		buf = buf[i+len(sseEnd):]
		if len(data) == 0 || string(name) == "error" {
			continue
		}
		if w.err = w.s.send(w.ctx, data); w.err != nil {
			return len(b), w.err
		}
	}
	if held {
		w.pending = w.pending[:copy(w.pending, buf)]
	} else {
		w.pending = append(w.pending, buf...)
	}
	return len(b), nil
}

// sseEvent splits one server-sent event into its name and its data (data lines joined by
// newlines, as an SSE client joins them).
func sseEvent(ev []byte) (name, data []byte) {
	lines := 0
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		if v, ok := bytes.CutPrefix(line, []byte("event:")); ok {
			name = bytes.TrimPrefix(v, []byte(" "))
			continue
		}
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		v = bytes.TrimPrefix(v, []byte(" "))
		if lines++; lines == 1 {
			data = v
		} else {
			data = append(append(append([]byte(nil), data...), '\n'), v...)
		}
	}
	return name, data
}

// transport names how the request came: record.TransportWebSocket, or "" for HTTP.
func (rc *requestCtx) transport() string {
	if rc.socket != "" {
		return record.TransportWebSocket
	}
	return ""
}

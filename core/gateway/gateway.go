// Package gateway is the http.Handler every platform serves: authenticate, receive the body
// within its size and time limits, take an in-flight slot, decode strictly, plan routes,
// attempt them with failover before any output, answer in JSON or SSE, and log each attempt.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/telemetry"
)

// Options are the gateway's dependencies; the core holds no global state, so tests and each
// platform wire their own.
type Options struct {
	// Registry holds the provider kinds this binary ships. Required.
	Registry providers.Registry
	// HTTPClient is shared by HTTP providers; nil builds one tuned for functions.
	HTTPClient *http.Client
	// Logger receives the attempt and request lines; nil logs JSON to stdout.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// RouteState is the health overlay; nil treats every route as active.
	RouteState routestate.Reader
	// RequireKeys refuses an open gateway (no keys configured) unless the config says
	// auth: none. The cloud functions set it; the local server does not.
	RequireKeys bool
	// OnAttempt, when set, receives every attempt record after it is logged. It runs on the
	// request path and must not block (the EventBridge publisher queues and returns).
	OnAttempt func(*AttemptRecord)
}

// Gateway serves the OpenAI-compatible API. Safe for concurrent use.
type Gateway struct {
	models    map[string]*model
	names     []string // sorted model names, for /v1/models
	keys      []config.Key
	open      bool
	log       *slog.Logger
	now       func() time.Time
	state     routestate.Reader
	limits    openai.Limits
	maxBody   int64
	bodyTime  time.Duration
	maxIn     int64
	inFlight  atomic.Int64
	started   int64
	onAttempt func(*AttemptRecord)
	secrets   *telemetry.Secrets // the config's secrets, blanked out of upstream texts
}

type model struct {
	cfg      *config.Model
	routes   []*route
	timeouts config.Timeouts
}

type route struct {
	id        string
	conn      string
	kind      string
	provider  providers.Provider
	target    providers.Target
	residency string
	weight    int
}

// New builds a gateway from a loaded config.
func New(cfg *config.Config, opt Options) (*Gateway, error) {
	if opt.Registry == nil {
		return nil, errors.New("gateway: Options.Registry is required")
	}
	if opt.RequireKeys && len(cfg.Keys) == 0 && cfg.Auth != "none" {
		return nil, errors.New("gateway: no client keys are configured; add keys (sha256 or value) or set auth: none to serve without authentication")
	}
	g := &Gateway{
		keys:      cfg.Keys,
		open:      len(cfg.Keys) == 0,
		log:       opt.Logger,
		now:       opt.Now,
		state:     opt.RouteState,
		maxBody:   cfg.Limits.MaxBodyBytes,
		bodyTime:  cfg.Limits.BodyReadTimeout.D(),
		maxIn:     int64(cfg.Limits.MaxInFlight),
		limits:    openai.Limits{MaxMessages: cfg.Limits.MaxMessages, MaxTools: cfg.Limits.MaxTools},
		models:    make(map[string]*model, len(cfg.Models)),
		onAttempt: opt.OnAttempt,
		secrets:   telemetry.NewSecrets(cfg.Secrets),
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(cfg.Logging.Format), cfg.Secrets)
	}
	if g.maxBody <= 0 {
		g.maxBody = config.DefaultMaxBodyBytes
	}
	if g.maxIn <= 0 {
		g.maxIn = config.DefaultMaxInFlight
	}
	if g.bodyTime <= 0 {
		g.bodyTime = config.DefaultBodyReadTimeout
	}
	g.started = g.now().Unix()
	client := opt.HTTPClient
	if client == nil {
		client = providers.NewHTTPClient(cfg.Timeouts.Connect.D())
	}
	env := providers.Env{HTTPClient: client, Timeouts: cfg.Timeouts, Now: g.now}
	built := map[string]providers.Provider{}
	for name, conn := range cfg.Connections {
		p, err := opt.Registry.Build(conn, env)
		if err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		built[name] = p
	}
	var unservable []string // routes a provider refuses before any request
	for name, mc := range cfg.Models {
		m := &model{cfg: mc, timeouts: cfg.Timeouts}
		if mc.Timeouts != nil {
			m.timeouts = mc.Timeouts.Merge(cfg.Timeouts)
		}
		for i := range mc.Routes {
			rc := &mc.Routes[i]
			rt := &route{
				id:        rc.ID(),
				conn:      rc.Connection,
				kind:      cfg.Connections[rc.Connection].Kind,
				provider:  built[rc.Connection],
				target:    providers.Target{Model: rc.Model, API: rc.API, MaxOutputTokens: mc.MaxOutputTokens},
				residency: rc.Residency,
				weight:    rc.Weight,
			}
			if c, ok := rt.provider.(providers.RouteChecker); ok {
				if err := c.CheckRoute(rt.target); err != nil {
					unservable = append(unservable, fmt.Sprintf("%s: %v", cfg.Locate(fmt.Sprintf("models.%s.routes[%d]", name, i)), err))
				}
			}
			m.routes = append(m.routes, rt)
		}
		g.models[name] = m
		g.names = append(g.names, name)
	}
	sortStrings(g.names)
	if len(unservable) > 0 {
		sortStrings(unservable)
		return nil, fmt.Errorf("gateway: %s", strings.Join(unservable, "; "))
	}
	return g, nil
}

// ServeHTTP dispatches the API.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		g.serveHealth(w, r)
		return
	case "/v1/chat/completions", "/v1/completions", "/v1/models":
	default:
		(&openai.Error{Status: http.StatusNotFound, Type: openai.TypeNotFound, Code: "unknown_url",
			Message: "Unknown request URL: " + r.Method + " " + r.URL.Path + ". The gateway serves POST /v1/chat/completions, POST /v1/completions and GET /v1/models."}).Write(w)
		return
	}
	rc := &requestCtx{start: time.Now(), id: requestID(r)}
	w.Header().Set("X-Request-Id", rc.id)
	tw := &trackingWriter{ResponseWriter: w}
	defer g.recoverPanic(tw, rc)

	key, oe := g.authenticate(r)
	if oe != nil {
		oe.Write(tw)
		return
	}
	rc.key = key
	switch r.URL.Path {
	case "/v1/models":
		if r.Method != http.MethodGet {
			methodNotAllowed(tw, r, http.MethodGet)
			return
		}
		g.serveModels(tw, key)
	case "/v1/chat/completions":
		if r.Method != http.MethodPost {
			methodNotAllowed(tw, r, http.MethodPost)
			return
		}
		g.serveChat(tw, r, rc)
	case "/v1/completions":
		if r.Method != http.MethodPost {
			methodNotAllowed(tw, r, http.MethodPost)
			return
		}
		g.serveCompletion(tw, r, rc)
	}
}

// requestCtx is the per-request state shared by planning, attempts and logging.
type requestCtx struct {
	id       string
	start    time.Time
	key      *config.Key
	endpoint string
	model    string
	stream   bool
	labels   []slog.Attr
	// upstream is the time spent waiting on providers; the rest is the gateway's overhead.
	upstream time.Duration
	attempts int
	costUSD  float64
	costSet  bool
	usage    openai.Usage
	skipped  []string
}

func (rc *requestCtx) overhead(now time.Time) time.Duration {
	return max(now.Sub(rc.start)-rc.upstream, 0)
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	(&openai.Error{Status: http.StatusMethodNotAllowed, Type: openai.TypeInvalidRequest, Code: "method_not_allowed",
		Message: r.Method + " is not allowed on " + r.URL.Path + "; use " + allow}).Write(w)
}

// receive reads the request body, then takes one of the instance's in-flight slots for the
// work the request makes it do; the caller calls release when that is done. When either fails
// the client has its answer and ok is false.
//
// The slot is taken only once the body is in. A client that trickles its body (a byte every
// few seconds) then holds a goroutine and what it has sent so far, bounded by max_body_bytes
// and body_read_timeout, but never a slot: otherwise as many such clients as there are slots
// would turn everyone else away with 429s, and by reconnecting keep doing so whatever the
// timeout. Memory is not what the slot guards (a slot taken first would bound
// bodies only as max_in_flight × max_body_bytes, gigabytes at the defaults); it bounds decoding
// and upstream work, which start here. Only clients with a valid key get this far.
func (g *Gateway) receive(w *trackingWriter, r *http.Request, rc *requestCtx) (body []byte, release func(), ok bool) {
	body, oe := g.readBody(w, r)
	if oe != nil {
		g.refuse(w, rc, oe)
		return nil, nil, false
	}
	if n := g.inFlight.Add(1); n > g.maxIn {
		g.inFlight.Add(-1)
		(&openai.Error{Status: http.StatusTooManyRequests, Type: openai.TypeRateLimit, Code: "gateway_busy", RetryAfter: "1",
			Message: "this gateway instance is at its limit of concurrent requests; retry shortly"}).Write(w)
		return nil, nil, false
	}
	return body, func() { g.inFlight.Add(-1) }, true
}

// errBodyTimeout is a body that did not arrive within body_read_timeout.
var errBodyTimeout = errors.New("the request body did not arrive in time")

// readBody reads the whole body within the configured size and time limits. The Content-Type
// is not checked: the body must be JSON either way, and `curl -d` sends a form type.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *openai.Error) {
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
		return nil, &openai.Error{Status: http.StatusRequestTimeout, Type: openai.TypeInvalidRequest, Code: "request_timeout",
			Message: "the request body did not arrive within " + g.bodyTime.String() + " (limits.body_read_timeout)"}
	case err != nil:
		return nil, openai.BadRequest("", "could not read the request body: "+err.Error())
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
func identityOnly(w http.ResponseWriter, r *http.Request) *openai.Error {
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
			return &openai.Error{Status: http.StatusUnsupportedMediaType, Type: openai.TypeInvalidRequest, Code: "unsupported_content_encoding",
				Message: named + " is not supported: send the request body uncompressed"}
		}
	}
	return nil
}

func tooLarge(limit int64) *openai.Error {
	return &openai.Error{Status: http.StatusRequestEntityTooLarge, Type: openai.TypeInvalidRequest, Code: "request_too_large",
		Message: fmt.Sprintf("the request body exceeds the gateway's limit of %d bytes", limit)}
}

// requestID keeps a caller's X-Request-Id when it is a sane token, else makes one.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 && tokenChars(id) {
		return id
	}
	return "req_" + randomID(24)
}

func tokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomID is for response and request ids: unique enough, not secret, and cheap.
func randomID(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = idAlphabet[rand.IntN(len(idAlphabet))]
	}
	return string(b)
}

// recoverPanic keeps a bug in one request from taking the instance down: a 500 before any
// output, an in-band error event after it.
func (g *Gateway) recoverPanic(w *trackingWriter, rc *requestCtx) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	g.log.Error("panic", slog.String("request_id", rc.id), slog.String("panic", fmt.Sprint(v)))
	e := &openai.Error{Status: http.StatusInternalServerError, Type: openai.TypeServer, Code: "internal_error",
		Message: "the gateway failed while handling this request"}
	if !w.wrote {
		e.Write(w)
		return
	}
	if w.sse {
		_, _ = w.Write(openai.AppendErrorEvent(nil, e))
		flush(w)
	}
}

// trackingWriter remembers whether output began, so a recovered panic answers correctly.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
	sse   bool
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

// flush pushes buffered bytes to the client when the platform can; platforms that stream
// every write (Lambda's lambdaurl) do not implement it, which is fine.
func flush(w http.ResponseWriter) error {
	err := http.NewResponseController(w).Flush()
	if errors.Is(err, http.ErrNotSupported) {
		return nil
	}
	return err
}

// clientGone reports whether the request's client has left.
func clientGone(ctx context.Context) bool { return ctx.Err() != nil }

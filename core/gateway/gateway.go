// Package gateway is the http.Handler every platform serves: route the endpoint to its front
// door, authenticate, decode strictly, plan routes, attempt them with failover before any
// output, answer in JSON or SSE, and log each attempt. What it says of each request and
// attempt (the records, outcomes, message names, endpoints and error classes) is core/record.
//
//	gateway.go        Options, New, the endpoint table
//	request.go        one request, written once: its value, ServeHTTP (time limit, recover), the
//	                  prelude (admit, receive) and its ends (refuse, fail, done)
//	serve.go          a door's request: body, decode, model, limits, plan, then an answer
//	attempt.go        the failover loop, and one attempt on one route: its timers, finish
//	answer.go         a non-streamed answer
//	stream.go         a streamed answer, committing at the first visible delta
//	door.go           what a front door is: decode, encode answers, events and errors
//	door_chat.go      OpenAI Chat Completions and legacy Completions
//	door_messages.go  Anthropic Messages (and count_tokens in count.go)
//	door_responses.go OpenAI Responses, and the stored responses (GET, DELETE /v1/responses/{id})
//	door_compact.go   POST /v1/responses/compact: passed through to OpenAI, else a sealed summary
//	socket.go         the Responses API's WebSocket mode: response.create messages on GET /v1/responses
//	door_embeddings.go  OpenAI Embeddings: its own decode over the same request and loop
//	plan.go           which routes, in which order
//	record.go         the attempt and request log lines, usage and cost
//	trace.go          the tracer's hooks (record.Tracer): nothing when off
//	limits.go         keys' rate limits and budgets on shared counters: admit, charge, settle
//	usage.go          each request's usage into the history (Options.History), off the request path
//	auth.go           the request's key: a config key, else a stored one
//	region.go         a key pinned to a residency is refused by a region of another (region.residency)
//	keycache.go       the stored keys (Options.KeyStore) an instance caches, and how it keeps
//	                  them current: look-ups, "changes since" reads, the store unreachable
//	models.go, count.go
package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fngate/fngate/core/compaction"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsestore"
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
	OnAttempt func(*record.Attempt)
	// Tracer, when set, traces every request and attempt (trace.go); nil traces nothing and
	// costs nothing.
	Tracer record.Tracer
	// ResponseStore keeps the Responses door's stored responses (store: true,
	// previous_response_id, GET and DELETE /v1/responses/{id}); nil stores none, and
	// responses say store: false.
	ResponseStore responsestore.Store
	// Counters holds the keys' rate limits and budgets (limits.go), shared by every instance;
	// nil, with limits configured, counts in this process's memory when the config says
	// counters.store: memory and is an error otherwise.
	Counters counters.Store
	// History keeps every request's usage per key, UTC day and model (usage.go), written off
	// the request path; nil keeps none. Lambda calls FlushUsage before an invoke ends.
	History counters.History
	// Metrics receives the EMF line of each failed counter call and history write; nil
	// writes to stdout.
	Metrics io.Writer
	// KeyStore holds the keys issued at runtime (core/keystore), served beside the config's
	// keys and exactly like them, through a cache each instance keeps current (keycache.go;
	// Close stops its background reads). Nil serves the config's keys alone.
	KeyStore keystore.Store
	// WebSockets serves the Responses API's WebSocket mode on GET /v1/responses (socket.go).
	// The platform must pass the upgrade and let the handler take over the connection: the
	// local server and Cloud Functions gen2 set it. Off (Lambda function URLs pass no
	// upgrade), a handshake gets a 426 that names HTTP streaming instead.
	WebSockets bool
	// Cache keeps the answers of the models and keys that opt into the response cache
	// (cache.go); required when one does, and unused otherwise.
	Cache responsecache.Store
	// Guardrails makes the checkers of the configured guardrails (guardrails.go); nil builds
	// the local kind alone, and a config with a cloud guardrail is refused.
	Guardrails GuardrailFactory
	// DeadlineMargin is how long before its context's deadline a request is ended in-band
	// (request.go: Lambda's invoke deadline is the request context's); zero means
	// DefaultDeadlineMargin. A request whose context has no deadline has no time limit.
	DeadlineMargin time.Duration
	// MCP serves /mcp (core/mcp, built by the platform where it links the MCP SDK); nil
	// answers /mcp 404. A config with mcp_servers needs one. MCPOAuth accepts OAuth access
	// tokens on /mcp beside gateway keys (core/mcpauth), when mcp_oauth is configured.
	MCP      http.Handler
	MCPOAuth MCPOAuth
}

// DefaultDeadlineMargin leaves a streamed answer the time to end with its error event and
// the request's lines to be logged before Lambda ends the invoke.
const DefaultDeadlineMargin = time.Second

// Gateway serves the API. Safe for concurrent use.
type Gateway struct {
	// mcp serves /mcp (mcp.go); mcpOAuth and mcpOAuthAccess accept OAuth callers there.
	mcp            http.Handler
	mcpOAuth       MCPOAuth
	mcpOAuthAccess config.MCPAccess
	captureContent bool // telemetry.otlp.capture_content: tool call content in records
	models         map[string]*model
	names          []string // sorted model names, for /v1/models
	keys           []clientKey
	stored         *keyCache     // nil: no key store
	region         config.Region // where this instance runs, in a deployment across regions (region.go)
	open           bool
	log            *slog.Logger
	now            func() time.Time
	state          routestate.Reader
	limits         llm.Limits
	// openProfile is the request profile when no key is configured.
	openProfile openai.Profile
	maxBody     int64
	bodyTime    time.Duration
	maxIn       int64
	inFlight    atomic.Int64
	started     int64
	onAttempt   func(*record.Attempt)
	limiter     *limiter           // nil: no key has a limit
	usage       *usageLog          // nil: no history
	tracer      record.Tracer      // nil: nothing traced
	secrets     *telemetry.Secrets // the config's secrets, blanked out of upstream texts
	mux         *http.ServeMux

	responses   responsestore.Store // nil: none
	responseTTL time.Duration
	compaction  *compaction.Keyring // nil: no responses.compaction_keys
	sockets     *sockets
	// deadlineMargin is Options.DeadlineMargin.
	deadlineMargin time.Duration

	cache           responsecache.Store // nil: nothing cached
	cacheTimeout    time.Duration
	cacheWrites     *cacheWriter
	keyDefaultCache *config.Cache // key_defaults' cache setting

	guardrails *guardrails // nil: none configured
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
	// embedder is the provider's embeddings, set on the routes of embedding models.
	embedder providers.Embedder
}

// New builds a gateway from a loaded config (config.Load, Parse or Default), whose validation
// gave every limit, timeout and the response TTL its default: New takes them as they are.
func New(cfg *config.Config, opt Options) (*Gateway, error) {
	if opt.Registry == nil {
		return nil, errors.New("gateway: Options.Registry is required")
	}
	if opt.RequireKeys && len(cfg.Keys) == 0 && opt.KeyStore == nil && cfg.Auth != "none" {
		return nil, errors.New("gateway: no client keys are configured; add keys (sha256 or value) or set auth: none to serve without authentication")
	}
	g := &Gateway{
		keys:     make([]clientKey, len(cfg.Keys)),
		open:     len(cfg.Keys) == 0 && opt.KeyStore == nil,
		log:      opt.Logger,
		now:      opt.Now,
		state:    opt.RouteState,
		maxBody:  cfg.Limits.MaxBodyBytes,
		bodyTime: cfg.Limits.BodyReadTimeout.D(),
		maxIn:    int64(cfg.Limits.MaxInFlight),
		limits:   llm.Limits{MaxMessages: cfg.Limits.MaxMessages, MaxTools: cfg.Limits.MaxTools},
		openProfile: openai.Profile{Extended: cfg.RequestProfile == config.ProfileExtended,
			NamesOptional: slices.Contains(cfg.RequestProfileIgnore, config.IgnoreMessageNames)},
		models:    make(map[string]*model, len(cfg.Models)),
		onAttempt: opt.OnAttempt,
		tracer:    opt.Tracer,
		secrets:   telemetry.NewSecrets(cfg.Secrets),

		responses:   opt.ResponseStore,
		responseTTL: cfg.Responses.TTL.D(),

		deadlineMargin: cmp.Or(opt.DeadlineMargin, DefaultDeadlineMargin),
		region:         cfg.Region,
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(cfg.Logging.Format), cfg.Secrets)
	}
	for i := range cfg.Keys {
		k := &g.keys[i]
		k.Key = cfg.Keys[i]
		k.ID = cmp.Or(k.ID, k.Name) // validation sets it; a config built in code may not
		k.rules = compileRules(cfg.KeyLimitsOf(&k.Key))
	}
	g.started = g.now().Unix()
	if err := g.mcpSetup(cfg, &opt); err != nil {
		return nil, err
	}
	if opt.History != nil {
		g.usage = newUsageLog(opt.History, g.log, opt.Metrics, g.now)
	}
	g.sockets = newSockets(&cfg.Limits, opt.WebSockets)
	if cfg.Caches() {
		if opt.Cache == nil {
			return nil, errors.New("gateway: a model or key opts into the response cache (cache: {ttl: ...}), but no response cache store was given (Options.Cache)")
		}
		g.cache, g.cacheTimeout = opt.Cache, cfg.ResponseCache.Timeout.D()
		g.cacheWrites = newCacheWriter(opt.Cache, g.cacheTimeout, g.log, opt.Metrics, g.now)
		if cfg.KeyDefaults != nil {
			g.keyDefaultCache = cfg.KeyDefaults.Cache
		}
	}
	var err error
	if g.guardrails, err = newGuardrails(cfg, opt.Guardrails, opt.Metrics, g.now); err != nil {
		return nil, err
	}
	if g.compaction, err = cfg.CompactionKeyring(); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if g.limiter, err = newLimiter(cfg, g.keys, opt.KeyStore != nil, opt.Counters, opt.Metrics); err != nil {
		return nil, err
	}
	client := opt.HTTPClient
	if client == nil {
		client = providers.NewHTTPClient(cfg.Timeouts.Connect.D())
	}
	if g.tracer != nil {
		client = propagating(client, g.tracer)
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
			if err := rt.bindKind(mc); err != nil {
				unservable = append(unservable, fmt.Sprintf("%s: %v", cfg.Locate(fmt.Sprintf("models.%s.routes[%d]", name, i)), err))
			}
			m.routes = append(m.routes, rt)
		}
		g.models[name] = m
		g.names = append(g.names, name)
	}
	sort.Strings(g.names)
	if len(unservable) > 0 {
		sort.Strings(unservable)
		return nil, fmt.Errorf("gateway: %s", strings.Join(unservable, "; "))
	}
	g.mux = g.routes()
	if opt.KeyStore != nil {
		g.stored = newKeyCache(cfg, opt.KeyStore, g.now, g.log)
		go g.stored.run()
	}
	return g, nil
}

// Close stops the gateway's background work: the key cache's reads of its store. The
// gateway still serves, its stored keys from the cache as it stands (then, past
// key_store.stale_for, not at all). It waits, up to closeFlush, for the usage of the
// requests that have ended to reach the history.
func (g *Gateway) Close() {
	if g.stored != nil {
		g.stored.close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeFlush)
	defer cancel()
	_ = g.Flush(ctx)
}

// closeFlush bounds how long Close waits for the usage history.
const closeFlush = 5 * time.Second

// endpoint is one row of the API: its path pattern, method and handler.
type endpoint struct {
	pattern string
	method  string
	serve   http.HandlerFunc
}

// routes is the whole API at a glance. A path served with the wrong method gets 405 with
// Allow, in the door's error shape; an unknown path a 404.
func (g *Gateway) routes() *http.ServeMux {
	table := []endpoint{
		{"/healthz", http.MethodGet, g.serveHealth},
		{"/{$}", http.MethodHead, g.serveHealth}, // Claude Code and SDKs probe with HEAD at start
		{"/api/hello", http.MethodHead, g.serveHealth},
		{"/v1/models", http.MethodGet, g.serveModels},
		{"/v1/models/{id}", http.MethodGet, g.serveModel},
		{"/v1/chat/completions", http.MethodPost, g.door(func() door { return &chatDoor{} })},
		{"/v1/completions", http.MethodPost, g.door(func() door { return &completionsDoor{} })},
		{"/v1/messages", http.MethodPost, g.door(func() door { return &messagesDoor{} })},
		{"/v1/messages/count_tokens", http.MethodPost, g.handle(func() wire { return &countDoor{} }, (*request).serveCountTokens)},
		{"/v1/embeddings", http.MethodPost, g.handle(func() wire { return openaiWire(record.EndpointEmbeddings) }, (*request).serveEmbeddings)},
		{"/v1/responses", http.MethodPost, g.door(func() door { return &responsesDoor{g: g} })},
		{"/v1/responses/compact", http.MethodPost, g.door(func() door { return &compactDoor{g: g} })},
		{"/v1/responses", http.MethodGet, g.serveResponsesSocket}, // WebSocket mode
		{"/v1/responses/{id}", http.MethodGet, g.serveStoredResponse},
		{"/v1/responses/{id}", http.MethodDelete, g.serveDeleteResponse},
	}
	byPath := map[string][]endpoint{}
	var paths []string
	for _, e := range table {
		if byPath[e.pattern] == nil {
			paths = append(paths, e.pattern)
		}
		byPath[e.pattern] = append(byPath[e.pattern], e)
	}
	mux := http.NewServeMux()
	for _, path := range paths {
		rows := byPath[path]
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			for i := range rows {
				if e := &rows[i]; r.Method == e.method || r.Method == http.MethodHead && e.method == http.MethodGet {
					e.serve(w, r)
					return
				}
			}
			g.wrongMethod(w, r, rows)
		})
	}
	// /mcp takes every method: its handler answers what MCP's transport does not allow.
	mux.HandleFunc("/mcp", g.serveMCP)
	if g.mcpOAuth != nil {
		for _, p := range g.mcpOAuth.MetadataPaths() {
			mux.HandleFunc(p, g.mcpOAuth.ServeMetadata)
		}
	}
	mux.HandleFunc("/", g.unknownURL)
	return mux
}

// wrongMethod answers a request on path rows whose method none of them serves. It is apart
// from the handler above so that the handler's frame stays small: every stream runs under it
// (see committed).
func (g *Gateway) wrongMethod(w http.ResponseWriter, r *http.Request, rows []endpoint) {
	if len(rows) == 1 && rows[0].method == http.MethodHead {
		g.unknownURL(w, r) // a probe path is not an endpoint
		return
	}
	allow := make([]string, len(rows))
	for i, e := range rows {
		allow[i] = e.method
	}
	methodNotAllowed(w, r, strings.Join(allow, ", "))
}

// anthropicClient reports whether a request comes from an Anthropic client, which wants its
// errors (and its model list) in Anthropic's shapes.
func anthropicClient(r *http.Request) bool {
	return r.Header.Get("Anthropic-Version") != "" || strings.HasPrefix(r.URL.Path, "/v1/messages")
}

// writeBare answers e before any door has the request, in the shape its client reads.
func writeBare(w http.ResponseWriter, r *http.Request, e *llm.Error) {
	if anthropicClient(r) {
		(&messagesDoor{}).writeError(w, &requestCtx{id: w.Header().Get("X-Request-Id")}, e)
		return
	}
	openai.WriteError(w, e)
}

func (g *Gateway) unknownURL(w http.ResponseWriter, r *http.Request) {
	writeBare(w, r, &llm.Error{Status: http.StatusNotFound, Type: llm.TypeNotFound, Code: "unknown_url",
		Message: "Unknown request URL: " + r.Method + " " + r.URL.Path + ". The gateway serves POST /v1/chat/completions, POST /v1/completions, POST /v1/messages, POST /v1/messages/count_tokens, POST /v1/responses, POST /v1/responses/compact, GET and DELETE /v1/responses/{id}, POST /v1/embeddings and GET /v1/models."})
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	writeBare(w, r, &llm.Error{Status: http.StatusMethodNotAllowed, Type: llm.TypeInvalidRequest, Code: "method_not_allowed",
		Message: r.Method + " is not allowed on " + r.URL.Path + "; use " + allow})
}

// requestCtx is the per-request state shared by planning, attempts and logging.
type requestCtx struct {
	id       string
	start    time.Time
	now      func() time.Time
	key      *clientKey
	endpoint string
	model    string
	stream   bool
	labels   []slog.Attr
	// upstream is the time spent waiting on providers; the rest is the gateway's overhead.
	upstream time.Duration
	attempts int
	costUSD  float64
	costSet  bool
	usage    llm.Usage
	used     usedTokens // every attempt's reported tokens, added up, for the history (usage.go)
	skipped  []string
	ttft     time.Duration       // streams: from the request's start to its commit
	trace    record.RequestTrace // nil: not traced
	lease    *lease              // what the key's counters reserved for the request (limits.go)
	// inputEstimate is estimateTokens of the decoded request, worked out once for the
	// limits and kept for the Messages door's message_start (door_messages.go). It is never
	// logged, charged or traced: those take what the backend reported.
	inputEstimate int
	// socket is the WebSocket connection a response.create came on (socket.go), "" over HTTP.
	socket string
	// cache is the response cache's result (record.CacheHit ...), "" when nothing caches;
	// saved is a hit's cached usage, which the request did not use.
	cache string
	saved llm.Usage
	// cacheLookup is how long the response cache's look-up took: the store's round trip,
	// which is what a miss adds to the request.
	cacheLookup time.Duration
	// guardrails are the guardrails' decisions (guardrails.go), for the request's line and
	// span; guardUSD what their calls cost.
	guardrails []record.Guardrail
	guardUSD   float64
}

func (rc *requestCtx) guardCost() float64 { return rc.guardUSD }

func (rc *requestCtx) overhead(now time.Time) time.Duration {
	return max(now.Sub(rc.start)-rc.upstream, 0)
}

// created is the answer's creation time, in Unix seconds.
func (rc *requestCtx) created() int64 { return rc.now().Unix() }

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

// flush pushes buffered bytes to the client when the platform can; platforms that stream
// every write (Lambda's lambdaurl) do not implement it, which is fine.
func flush(w http.ResponseWriter) error {
	err := http.NewResponseController(w).Flush()
	if errors.Is(err, http.ErrNotSupported) {
		return nil
	}
	return err
}

// WriteError answers e for a platform wrapper that fails around the gateway (a function that
// could not start), in the shape the request's client reads: Anthropic's for a Messages
// client, OpenAI's otherwise.
func WriteError(w http.ResponseWriter, r *http.Request, e *llm.Error) { writeBare(w, r, e) }

// propagating returns a copy of client whose transport the tracer wraps.
func propagating(client *http.Client, t record.Tracer) *http.Client {
	c := *client
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = t.Transport(next)
	return &c
}

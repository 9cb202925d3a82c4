// Package mcp is the gateway's MCP endpoint: one streamable HTTP endpoint (/mcp) that
// aggregates the organisation's upstream MCP servers, built on the official Go SDK.
//
//	handler.go   Handler: the endpoint, served stateless, so any instance serves any message
//	sessions.go  the sessions of the protocol versions whose initialize opens one, in a
//	             shared store (core/mcpsessions), so another instance continues them
//	catalog.go   what each upstream offers, namespaced <server>__<name>, filtered per caller
//	forward.go   tools/call, prompts/get and resources/read sent to the owning upstream,
//	             limited, bounded, logged and traced
//	relay.go     an upstream's progress and log notifications relayed on the call's stream
//	upstream.go  one client session per upstream, with the upstream's own credentials
//
// The caller (who it is, what it may use, its limits and records) comes from the gateway in
// the request's context (core/mcpcall). Server-to-client requests (elicitation, sampling)
// cannot cross a stateless gateway and are answered to the upstream as unsupported.
package mcp

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/core/mcpsessions"
)

// Version is what the gateway calls itself in initialize, to clients and upstreams.
const Version = "1"

// sessionlessVersion is the first protocol version without sessions; clients that ask for
// an earlier one open a session with initialize.
const sessionlessVersion = "2026-07-28"

// Bounds.
const (
	DefaultMaxMessageBytes = 4 << 20
	DefaultMaxResultBytes  = 4 << 20
	DefaultCatalogTTL      = time.Minute
	// maxListed bounds what one upstream may offer of each kind.
	maxListed = 1000
)

// Options configure a Handler.
type Options struct {
	Servers map[string]*config.MCPServer
	// Sessions keeps the sessions legacy protocol versions open; nil serves those clients
	// without sessions, each message on its own (what the SDK's stateless mode does).
	Sessions   mcpsessions.Store
	SessionTTL time.Duration
	// Transport carries the calls to upstreams and their token endpoints.
	Transport http.RoundTripper
	// MaxMessageBytes bounds a client's message; MaxResultBytes an upstream's answer.
	MaxMessageBytes, MaxResultBytes int64
	// CatalogTTL is how long an instance trusts what an upstream listed, unless the upstream
	// says its list changed.
	CatalogTTL time.Duration
	// AllowSSE admits upstreams of the legacy SSE transport, which hold a connection open
	// between calls: not on Lambda.
	AllowSSE bool
	Logger   *slog.Logger
	Now      func() time.Time
}

// Handler serves /mcp.
type Handler struct {
	opt       Options
	upstreams map[string]*upstream
	names     []string // the upstreams' names, sorted: the order of every list
	server    *sdk.Server
	stateless http.Handler
}

// New returns the handler of opt.Servers. It opens no connection: an upstream is dialed on
// the first message that needs it.
func New(opt Options) (*Handler, error) {
	if opt.Transport == nil {
		opt.Transport = http.DefaultTransport
	}
	if opt.MaxMessageBytes <= 0 {
		opt.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opt.MaxResultBytes <= 0 {
		opt.MaxResultBytes = DefaultMaxResultBytes
	}
	if opt.CatalogTTL <= 0 {
		opt.CatalogTTL = DefaultCatalogTTL
	}
	if opt.SessionTTL <= 0 {
		opt.SessionTTL = config.DefaultMCPSessionTTL
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	h := &Handler{opt: opt, upstreams: map[string]*upstream{}}
	for name, cfg := range opt.Servers {
		if cfg.Transport == config.MCPTransportSSE && !opt.AllowSSE {
			return nil, fmt.Errorf("mcp_servers.%s: the sse transport holds a connection open between calls, which this platform cannot; use the server's streamable HTTP endpoint", name)
		}
		h.upstreams[name] = newUpstream(h, name, cfg)
		h.names = append(h.names, name)
	}
	slices.Sort(h.names)

	h.server = sdk.NewServer(&sdk.Implementation{Name: "fngate", Title: "fngate MCP gateway", Version: Version}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{},
			Prompts:   &sdk.PromptCapabilities{},
			Resources: &sdk.ResourceCapabilities{},
			Logging:   &sdk.LoggingCapabilities{},
		},
		// The SDK logs every message's session at INFO; the gateway's own lines say what
		// happened.
	})
	h.server.AddReceivingMiddleware(h.dispatch)
	h.stateless = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return h.server }, &sdk.StreamableHTTPOptions{
		Stateless: true,
		// The gateway authenticates every caller; an open gateway's is checked below.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        opt.MaxMessageBytes,
	})
	return h, nil
}

// Close ends the upstreams' sessions.
func (h *Handler) Close() {
	for _, u := range h.upstreams {
		u.close()
	}
}

// ServeHTTP serves one message (or batch) of a caller the gateway authenticated and put in
// the request's context.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller := mcpcall.FromContext(r.Context())
	if caller == nil {
		http.Error(w, "no authenticated caller", http.StatusInternalServerError)
		return
	}
	if caller.Anonymous && rebinding(r) {
		// A page in the user's browser may reach an open gateway on loopback under a name
		// of its own (DNS rebinding); nothing else tells its requests apart.
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, caller)
	case http.MethodDelete:
		h.deleteSession(w, r, caller)
	default:
		// Nothing to stream outside a call: a standing GET stream would hold a billed
		// function instance, and stateless instances have nothing to send on it.
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "Method Not Allowed: /mcp takes POST (and DELETE of a session)", http.StatusMethodNotAllowed)
	}
}

// rebinding reports a request that reached a loopback listener under a name that is not
// loopback's.
func rebinding(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return false
	}
	return !isLoopback(r.Host)
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errNotAllowed is a name outside the caller's access, or one no upstream has.
var errNotAllowed = errors.New("not allowed")

// ForConfig returns the handler of cfg's mcp_servers and mcp_sessions, with the platform's
// session store (nil where mcp_sessions is none) and transport.
func ForConfig(cfg *config.Config, sessions mcpsessions.Store, transport http.RoundTripper, allowSSE bool, logger *slog.Logger) (*Handler, error) {
	return New(Options{
		Servers: cfg.MCPServers, Sessions: sessions, SessionTTL: cfg.MCPSessions.TTL.D(),
		Transport: transport, AllowSSE: allowSSE, Logger: logger,
	})
}

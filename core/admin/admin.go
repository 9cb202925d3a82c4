// Package admin is the control plane's HTTP API under /admin/v1/: gateway keys issued and
// revoked at runtime, their usage beside their limits, the routes' health with cool and
// restore by hand, and the audit log of every change. Callers authenticate with an admin key
// from config, a stored key that carries a role, or an ID token from the organisation's
// identity provider (OIDC); the console, in the same process, hands its signed-in principal
// over with WithPrincipal. The paths and their JSON are a contract (ADMIN-API in
// docs/admin-api.md) that the console and the fngate command code against.
//
//	admin.go      Options, New, the route table and the one funnel every request takes
//	principal.go  Principal, WithPrincipal: who is calling
//	auth.go       bearer tokens: admin keys, stored keys with a role, OIDC ID tokens
//	oidc.go       the ID-token verifier (coreos/go-oidc) and the claims-to-role mapping
//	roles.go      who may call which route
//	bounds.go     a team-admin's bounds on what it grants
//	errors.go     the one error shape (OpenAI's) and the statuses it maps to
//	decode.go     strict, bounded JSON bodies and query parameters
//	harden.go     request ids, security headers, no-store, CORS only for named origins
//	keys.go       /keys: create, list, get, patch, disable, enable, rotate, delete
//	keyjson.go    the key object as the API shows it (never the hash)
//	usage.go      /usage: history per day or month with the limits and what remains
//	routes.go     /routes: state, reasons, remediation records; cool and restore by hand
//	audit.go      /audit, and the entries written with every change
//	openapi.go    /openapi.json: the embedded OpenAPI 3.1 document (openapi.json)
package admin

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/telemetry"
)

// Prefix is where the admin API is served.
const Prefix = "/admin/v1/"

// Options wire a Handler to the stores the gateway shares.
type Options struct {
	// Keys is the key store (keys issued at runtime, and the audit log). If nil, keys come
	// from config alone: they are listed, and every change answers 503.
	Keys keystore.Store
	// History is the usage history per key, day and model. If nil, /usage answers 503.
	History counters.History
	// Counters are the live rate-limit and budget counters; when set, /usage reports what
	// the current minute, day and month have left from them. If nil, spend comes from
	// History and the rate's current minute is not reported.
	Counters counters.Store
	// Routes is the route-state store remediation writes. If nil, /routes shows the config's
	// routes as active and cool and restore answer 503.
	Routes routestate.Store
	// Verifier checks OIDC ID tokens. If nil and the config has admin.oidc, one is built
	// from it (discovery on first use, with HTTPClient).
	Verifier Verifier
	// HTTPClient fetches the issuer's discovery document and keys. If nil,
	// http.DefaultClient is used.
	HTTPClient *http.Client
	// Now is the clock. If nil, time.Now is used.
	Now func() time.Time
	// Logger receives one line per request and per change. If nil, JSON to stdout.
	Logger *slog.Logger
}

// Handler serves the admin API. It is safe for concurrent use.
type Handler struct {
	cfg      *config.Config
	keys     keystore.Store
	history  counters.History
	counters counters.Store
	routes   routestate.Store
	verifier Verifier
	now      func() time.Time
	log      *slog.Logger
	mux      *http.ServeMux
	cors     map[string]bool
	adminKey []config.AdminKey
	cfgKeys  map[string]*config.Key // config gateway keys by name
}

// route is one operation of the API: a method, a ServeMux pattern, who may call it.
type route struct {
	method, pattern string
	allow           access
	serve           func(h *Handler, w http.ResponseWriter, r *http.Request, p *Principal)
}

// routes is every operation the handler serves; openapi.json documents exactly these (a
// test holds the two together).
var routes = []route{
	{http.MethodGet, Prefix + "openapi.json", public, (*Handler).openAPI},
	{http.MethodGet, Prefix + "me", anyone, (*Handler).me},
	{http.MethodGet, Prefix + "keys", keysRead, (*Handler).listKeys},
	{http.MethodPost, Prefix + "keys", keysWrite, (*Handler).createKey},
	{http.MethodGet, Prefix + "keys/{id}", keysRead, (*Handler).getKey},
	{http.MethodPatch, Prefix + "keys/{id}", keysWrite, (*Handler).patchKey},
	{http.MethodDelete, Prefix + "keys/{id}", keysWrite, (*Handler).deleteKey},
	{http.MethodPost, Prefix + "keys/{id}/disable", keysWrite, (*Handler).disableKey},
	{http.MethodPost, Prefix + "keys/{id}/enable", keysWrite, (*Handler).enableKey},
	{http.MethodPost, Prefix + "keys/{id}/rotate", keysWrite, (*Handler).rotateKey},
	{http.MethodGet, Prefix + "usage", keysRead, (*Handler).usage},
	{http.MethodGet, Prefix + "routes", allRead, (*Handler).listRoutes},
	{http.MethodPost, Prefix + "routes/{id}/cool", adminOnly, (*Handler).coolRoute},
	{http.MethodPost, Prefix + "routes/{id}/restore", adminOnly, (*Handler).restoreRoute},
	{http.MethodGet, Prefix + "audit", auditRead, (*Handler).audit},
}

// New returns the admin API of cfg on the stores in opt.
func New(cfg *config.Config, opt Options) (*Handler, error) {
	h := &Handler{
		cfg: cfg, keys: opt.Keys, history: opt.History, counters: opt.Counters, routes: opt.Routes,
		verifier: opt.Verifier, now: opt.Now, log: opt.Logger, adminKey: cfg.Admin.Keys,
		cors: map[string]bool{}, cfgKeys: map[string]*config.Key{},
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(""), cfg.Secrets)
	}
	if h.verifier == nil && cfg.Admin.OIDC != nil {
		v, err := NewVerifier(cfg.Admin.OIDC, opt.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("admin: %w", err)
		}
		h.verifier = v
	}
	for _, o := range cfg.Admin.CORSOrigins {
		h.cors[o] = true
	}
	for i := range cfg.Keys {
		h.cfgKeys[cfg.Keys[i].Name] = &cfg.Keys[i]
	}
	h.mux = http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range routes {
		h.mux.Handle(rt.method+" "+rt.pattern, h.funnel(rt))
		allowed[rt.pattern] = append(allowed[rt.pattern], rt.method)
	}
	for pattern, methods := range allowed {
		h.mux.Handle(pattern, h.wrongMethod(methods))
	}
	h.mux.Handle("/", h.notFound())
	return h, nil
}

// ServeHTTP serves one admin request: hardened, identified, authenticated, authorised.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.harden(w, r, h.mux)
}

// funnel is every operation's path: authenticate (unless public), check the role, serve.
func (h *Handler) funnel(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p *Principal
		if rt.allow != public {
			var e *apiError
			p, e = h.authenticate(r)
			if e == nil {
				e = rt.allow.check(p, r.Method)
			}
			if e != nil {
				h.fail(w, r, e)
				return
			}
		}
		rt.serve(h, w, r, p)
	})
}

func (h *Handler) wrongMethod(methods []string) http.Handler {
	allow := ""
	for i, m := range methods {
		if i > 0 {
			allow += ", "
		}
		allow += m
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		h.fail(w, r, &apiError{status: http.StatusMethodNotAllowed, typ: typeInvalid, code: "method_not_allowed",
			msg: r.Method + " is not allowed here; allowed: " + allow})
	})
}

func (h *Handler) notFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, &apiError{status: http.StatusNotFound, typ: typeNotFound, code: "unknown_path",
			msg: "no admin API operation at " + r.URL.Path + " (see " + Prefix + "openapi.json)"})
	})
}

// me answers the caller's principal.
func (h *Handler) me(w http.ResponseWriter, r *http.Request, p *Principal) {
	if _, e := query(r); e != nil {
		h.fail(w, r, e)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": p.ID, "name": p.Name, "role": p.Role, "team": p.Team})
}

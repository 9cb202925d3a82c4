package console

import (
	"context"
	"crypto/hmac"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/fngate/fngate/core/config"
)

// preCookie holds a random id for the sign-in page's forms, which are drawn before there
// is a session: their tokens are bound to it, so another site cannot sign a browser in
// with a key of its own choosing (login CSRF).
const preCookie = "fngate_console_pre"

// maxSecret bounds a pasted key.
const maxSecret = 512

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	c.renderSignin(w, r, http.StatusOK, "")
}

func (c *Console) renderSignin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	pre := ""
	if ck, err := r.Cookie(preCookie); err == nil && len(ck.Value) == 22 {
		pre = ck.Value
	} else {
		pre = random(16)
		http.SetCookie(w, cookie(preCookie, pre, Prefix, loginTTL))
	}
	ret := safeReturn(r.FormValue("return"))
	c.renderAs(w, r, nil, pre, status, "signin", map[string]any{
		"OIDC": c.oidc != nil, "Error": msg, "Return": ret, "Out": r.URL.Query().Get("out") != "",
	})
}

// preChecked checks a sign-in page form's token against the pre-session cookie.
func (c *Console) preChecked(w http.ResponseWriter, r *http.Request) bool {
	ck, err := r.Cookie(preCookie)
	if err == nil {
		err = r.ParseForm()
	}
	if err != nil || !c.sign.checkForm(r.PostForm.Get("csrf"), "pre:"+ck.Value, r.URL.Path, c.now()) {
		c.fail(w, r, nil, http.StatusForbidden, "This sign-in form has expired or was not drawn by this console: reload the page and try again.")
		return false
	}
	return true
}

// signinKey signs in with an admin key pasted in the form. The admin API authenticates it
// (GET /admin/v1/me with the key as a bearer token), so what a key may do is decided in one
// place; the session keeps the principal it answers, never the key.
func (c *Console) signinKey(w http.ResponseWriter, r *http.Request) {
	if !c.preChecked(w, r) {
		return
	}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	if key == "" || len(key) > maxSecret {
		c.renderSignin(w, r, http.StatusBadRequest, "Paste an admin key.")
		return
	}
	var m me
	if err := c.callBearer(r.Context(), key, http.MethodGet, "/admin/v1/me", &m); err != nil {
		var e *apiError
		if errors.As(err, &e) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden) {
			c.log.Warn("console: key sign-in refused", slog.Int("status", e.Status))
			c.renderSignin(w, r, http.StatusUnauthorized, "That key does not sign in: it is unknown, revoked, or has no admin role.")
			return
		}
		c.failAPI(w, r, nil, err)
		return
	}
	if !strings.HasPrefix(m.ID, "key:") {
		c.fail(w, r, nil, http.StatusBadGateway, "The admin API answered a principal that is not a key.")
		return
	}
	if err := c.startSession(w, &m, "key"); err != nil {
		c.failAPI(w, r, nil, err)
		return
	}
	http.Redirect(w, r, safeReturn(r.PostForm.Get("return")), http.StatusSeeOther)
}

// oidcLogin is the sign-in with the organisation's identity provider: authorization code
// with PKCE (S256), state and nonce checked on the way back. Discovery waits for the first
// sign-in, so a cold control-plane function starts without a call to the provider.
type oidcLogin struct {
	cfg    *config.OIDC
	client *http.Client

	mu       sync.Mutex
	provider *oidc.Provider
}

func newOIDCLogin(cfg *config.OIDC, client *http.Client) *oidcLogin {
	if client == nil {
		client = http.DefaultClient
	}
	return &oidcLogin{cfg: cfg, client: client}
}

// discover returns the provider, fetching its discovery document on first use (and again
// after a failure, which is not kept).
func (o *oidcLogin) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, o.client), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	o.provider = p
	return p, nil
}

func (o *oidcLogin) oauth(p *oidc.Provider, r *http.Request) *oauth2.Config {
	redirect := o.cfg.RedirectURL
	if redirect == "" {
		scheme := "https"
		if r.TLS == nil && isLoopbackHost(r.Host) {
			scheme = "http"
		}
		redirect = scheme + "://" + r.Host + Prefix + "/callback"
	}
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirect, Scopes: append([]string{oidc.ScopeOpenID}, o.cfg.Scopes...)}
}

// loginStart sends the browser to the identity provider. It is a POST from the sign-in
// page's button (GET changes nothing); the state, nonce and PKCE verifier go in a signed,
// short-lived cookie scoped to the callback.
func (c *Console) loginStart(w http.ResponseWriter, r *http.Request) {
	if c.oidc == nil {
		c.fail(w, r, nil, http.StatusNotFound, "This console has no identity provider configured (admin.oidc with admin.session_key).")
		return
	}
	if !c.preChecked(w, r) {
		return
	}
	p, err := c.oidc.discover(r.Context())
	if err != nil {
		c.log.Error("console: identity provider discovery failed", slog.String("issuer", c.oidc.cfg.Issuer), slog.String("error", err.Error()))
		c.fail(w, r, nil, http.StatusBadGateway, "The identity provider could not be reached; try again, or sign in with an admin key.")
		return
	}
	l := login{State: random(24), Nonce: random(24), Verifier: oauth2.GenerateVerifier(),
		Return: safeReturn(r.PostForm.Get("return")), Expires: c.now().Add(loginTTL).Unix()}
	v, err := seal(c.sign.login, l)
	if err != nil {
		c.failAPI(w, r, nil, err)
		return
	}
	http.SetCookie(w, cookie(loginCookie, v, Prefix+"/callback", loginTTL))
	u := c.oidc.oauth(p, r).AuthCodeURL(l.State, oauth2.S256ChallengeOption(l.Verifier), oidc.Nonce(l.Nonce))
	http.Redirect(w, r, u, http.StatusSeeOther)
}

// loginCallback is the identity provider's redirect back: the state must be the one in the
// login cookie, the code is exchanged with the PKCE verifier, the ID token is verified
// (issuer, audience, expiry, signature) and must carry the nonce. The admin API then maps
// its claims to a role (GET /admin/v1/me with the token), as it does for a bearer token.
func (c *Console) loginCallback(w http.ResponseWriter, r *http.Request) {
	if c.oidc == nil {
		c.fail(w, r, nil, http.StatusNotFound, "This console has no identity provider configured.")
		return
	}
	var l login
	ck, err := r.Cookie(loginCookie)
	if err == nil {
		err = open(c.sign.login, ck.Value, &l)
	}
	http.SetCookie(w, cookie(loginCookie, "", Prefix+"/callback", 0))
	q := r.URL.Query()
	switch {
	case err != nil || c.now().Unix() >= l.Expires:
		c.fail(w, r, nil, http.StatusBadRequest, "This sign-in took too long or did not start here: sign in again.")
		return
	case q.Get("error") != "":
		c.log.Warn("console: identity provider refused", slog.String("error", q.Get("error")))
		c.fail(w, r, nil, http.StatusUnauthorized, "The identity provider did not sign you in ("+limit(q.Get("error"), 64)+").")
		return
	case !hmac.Equal([]byte(q.Get("state")), []byte(l.State)):
		c.fail(w, r, nil, http.StatusBadRequest, "This sign-in's state does not match: sign in again.")
		return
	}
	p, err := c.oidc.discover(r.Context())
	if err != nil {
		c.fail(w, r, nil, http.StatusBadGateway, "The identity provider could not be reached; try again.")
		return
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(r.Context(), c.oidc.client), 15*time.Second)
	defer cancel()
	tok, err := c.oidc.oauth(p, r).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(l.Verifier))
	if err != nil {
		c.log.Warn("console: code exchange failed", slog.String("error", err.Error()))
		c.fail(w, r, nil, http.StatusUnauthorized, "The identity provider did not accept this sign-in's code: sign in again.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := p.Verifier(&oidc.Config{ClientID: c.oidc.cfg.ClientID, Now: c.now}).Verify(ctx, raw)
	if err != nil || !hmac.Equal([]byte(idt.Nonce), []byte(l.Nonce)) {
		c.log.Warn("console: ID token refused", slog.Bool("nonce_mismatch", err == nil))
		c.fail(w, r, nil, http.StatusUnauthorized, "The identity provider's ID token was not valid for this console.")
		return
	}
	var m me
	if err := c.callBearer(r.Context(), raw, http.MethodGet, "/admin/v1/me", &m); err != nil {
		var e *apiError
		if errors.As(err, &e) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden) {
			c.fail(w, r, nil, http.StatusForbidden, "You signed in, but no admin role is mapped to your account: ask an administrator (admin.oidc.roles).")
			return
		}
		c.failAPI(w, r, nil, err)
		return
	}
	if err := c.startSession(w, &m, "oidc"); err != nil {
		c.failAPI(w, r, nil, err)
		return
	}
	http.Redirect(w, r, safeReturn(l.Return), http.StatusSeeOther)
}

// safeReturn keeps a return address only when it is a console page, so the sign-in never
// sends a browser to another site (an open redirect).
func safeReturn(s string) string {
	if strings.HasPrefix(s, Prefix+"/") && !strings.HasPrefix(s, "//") && !strings.ContainsAny(s, "\\\r\n") &&
		!strings.HasPrefix(s, Prefix+"/signin") && len(s) < 512 {
		return s
	}
	return Prefix + "/keys"
}

func isLoopbackHost(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = hostport
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func limit(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

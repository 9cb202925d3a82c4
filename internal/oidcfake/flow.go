package oidcfake

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// codeTTL is how long an authorization code may wait to be redeemed (RFC 6749 advises at
// most ten minutes; a test needs seconds).
const codeTTL = time.Minute

// authCode is one issued authorization code and what it was issued for.
type authCode struct {
	redirect, challenge, nonce, scope string
	user                              Claims
	expires                           time.Time
}

// SetUser sets who /authorize signs in (claims of their ID token: sub, email, hd, groups...);
// nil refuses every sign-in (access_denied), as a user who cancels would. The default is
// {sub: user-1, email: ops@example.com, email_verified: true}.
func (i *Issuer) SetUser(c Claims) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.user = c
}

func (i *Issuer) flowRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /authorize", i.authorize)
	mux.HandleFunc("POST /token", i.token)
}

// authorize signs the current user in at once (no page to click through) and redirects
// back with a code, as a provider does for a user with a session. Before the redirect URI is
// known to be the client's, errors are answered here; after, they go to it, as RFC 6749 4.1.2.1
// says.
func (i *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	if q.Get("client_id") != i.opt.ClientID {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	if !i.redirectAllowed(redirect) {
		http.Error(w, "redirect_uri is not registered for this client", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		u, _ := url.Parse(redirect)
		v := u.Query()
		for k, vs := range params {
			v[k] = vs
		}
		if s := q.Get("state"); s != "" {
			v.Set("state", s)
		}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fail := func(code, desc string) { back(url.Values{"error": {code}, "error_description": {desc}}) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only response_type=code")
		return
	case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		fail("invalid_scope", "scope must include openid")
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256")
		return
	}
	i.mu.Lock()
	user := i.user
	i.mu.Unlock()
	if user == nil {
		fail("access_denied", "the user did not sign in")
		return
	}
	code := random()
	i.mu.Lock()
	i.codes[code] = &authCode{redirect: redirect, challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), scope: q.Get("scope"),
		user: user, expires: i.opt.Now().Add(codeTTL)}
	i.mu.Unlock()
	back(url.Values{"code": {code}})
}

// redirectAllowed: a registered redirect URI, or, with none registered, any loopback one.
func (i *Issuer) redirectAllowed(redirect string) bool {
	if len(i.opt.RedirectURIs) > 0 {
		return slices.Contains(i.opt.RedirectURIs, redirect)
	}
	u, err := url.Parse(redirect)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h := u.Hostname()
	return h == "127.0.0.1" || h == "localhost" || h == "::1"
}

// token redeems a code, once, for an ID token: the client authenticated (when it has a
// secret), the redirect URI the code was issued for, and the PKCE verifier whose S256 is the
// challenge.
func (i *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	switch {
	case id != i.opt.ClientID:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	case i.opt.ClientSecret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(i.opt.ClientSecret)) != 1:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "the client secret is wrong")
		return
	case r.PostForm.Get("grant_type") != "authorization_code":
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code")
		return
	}
	code := r.PostForm.Get("code")
	i.mu.Lock()
	c := i.codes[code]
	delete(i.codes, code) // one use, whatever happens next
	i.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case c == nil || !i.opt.Now().Before(c.expires):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, used or expired")
		return
	case r.PostForm.Get("redirect_uri") != c.redirect:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code_verifier does not match the code_challenge")
		return
	}
	claims := Claims{}
	for k, v := range c.user {
		claims[k] = v
	}
	if c.nonce != "" {
		claims["nonce"] = c.nonce
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": random(), "token_type": "Bearer", "expires_in": 3600,
		"scope": c.scope, "id_token": i.Mint(claims)})
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func random() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

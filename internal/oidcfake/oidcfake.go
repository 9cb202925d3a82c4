// Package oidcfake is an OpenID Connect issuer on loopback for tests: the discovery document,
// the JWKS of one RS256 key, ID tokens minted on demand (with any claim overridden, signed by
// another key, or not signed at all, to test what a verifier refuses), and the
// authorization-code flow with PKCE (flow.go) that a browser signs in through.
//
//	oidcfake.go  the issuer: discovery, keys, Mint and its variants

package oidcfake

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Options configure an issuer.
type Options struct {
	// ClientID is the one client the issuer knows: the audience of its tokens.
	ClientID string
	// ClientSecret, when set, must authenticate the client at /token (basic or post);
	// empty is a public client (PKCE alone).
	ClientSecret string
	// RedirectURIs are the client's registered redirect URIs; none allows any loopback URL.
	RedirectURIs []string
	// Now is the clock of iat and exp. If nil, time.Now is used.
	Now func() time.Time
}

// Claims are an ID token's claims; Mint fills iss, aud, sub, iat and exp when absent, and
// leaves out a claim set to nil (a token with no aud, say).
type Claims map[string]any

// Issuer is a running fake identity provider.
type Issuer struct {
	// URL is the issuer: its discovery document is URL + /.well-known/openid-configuration.
	URL string

	opt Options
	srv *httptest.Server
	key *rsa.PrivateKey
	kid string

	mu    sync.Mutex
	user  Claims               // who /authorize signs in
	codes map[string]*authCode // issued, not yet redeemed
}

// keyID names the issuer's signing key in its JWKS and its tokens' headers.
const keyID = "oidcfake-1"

// Start runs an issuer on 127.0.0.1 until Close.
func Start(opt Options) (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	i := &Issuer{opt: opt, key: key, kid: keyID, codes: map[string]*authCode{},
		user: Claims{"sub": "user-1", "email": "ops@example.com", "email_verified": true}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", i.discovery)
	// RFC 8414's name for the same document, which OAuth-only clients and resource servers
	// ask for; the issuer has no path, so nothing is inserted after the well-known prefix.
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", i.discovery)
	mux.HandleFunc("GET /jwks", i.jwks)
	i.flowRoutes(mux)
	i.srv = httptest.NewServer(mux)
	i.URL = i.srv.URL
	return i, nil
}

// Close stops the issuer.
func (i *Issuer) Close() { i.srv.Close() }

// ClientID is the audience of the issuer's tokens.
func (i *Issuer) ClientID() string { return i.opt.ClientID }

func (i *Issuer) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                i.URL,
		"authorization_endpoint":                i.URL + "/authorize",
		"token_endpoint":                        i.URL + "/token",
		"jwks_uri":                              i.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "email", "profile", "groups"},
		"code_challenge_methods_supported":      []string{"S256"},
		"grant_types_supported":                 []string{"authorization_code"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
		"claims_supported":                      []string{"sub", "email", "email_verified", "hd", "groups", "name"},
	})
}

func (i *Issuer) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &i.key.PublicKey, KeyID: i.kid, Algorithm: string(jose.RS256), Use: "sig"}}})
}

// Mint returns an ID token for c, signed by the issuer's key: iss, aud (the client id), sub,
// iat and exp (an hour on) are filled in unless c sets them (set exp in the past for an
// expired token, aud or iss to another for a misdirected one).
func (i *Issuer) Mint(c Claims) string { return i.sign(i.key, i.kid, i.fill(c)) }

// MintSignedBy returns the token Mint would, signed by key under the issuer's key id: a
// forged signature the issuer's JWKS does not verify.
func (i *Issuer) MintSignedBy(key *rsa.PrivateKey, c Claims) string {
	return i.sign(key, i.kid, i.fill(c))
}

// MintUnsigned returns the token Mint would with alg "none" and no signature.
func (i *Issuer) MintUnsigned(c Claims) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"` + i.kid + `"}`))
	body, _ := json.Marshal(i.fill(c))
	return head + "." + base64.RawURLEncoding.EncodeToString(body) + "."
}

func (i *Issuer) fill(c Claims) Claims {
	now := i.opt.Now()
	out := Claims{"iss": i.URL, "aud": i.opt.ClientID, "sub": "user-1", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range c {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

func (i *Issuer) sign(key *rsa.PrivateKey, kid string, c Claims) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		panic("oidcfake: " + err.Error()) // an RSA key always makes an RS256 signer
	}
	body, err := json.Marshal(c)
	if err != nil {
		panic("oidcfake: claims: " + err.Error())
	}
	jws, err := signer.Sign(body)
	if err != nil {
		panic("oidcfake: " + err.Error())
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		panic("oidcfake: " + err.Error())
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

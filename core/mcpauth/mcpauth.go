// Package mcpauth authenticates OAuth callers of /mcp, per MCP's authorization spec: the
// gateway is an OAuth protected resource (RFC 9728) that accepts JWT access tokens from one
// authorization server, issued for its own /mcp URI (RFC 8707), and tells the clients that
// come without one where to get one.
//
//	mcpauth.go    the Verifier: lazy discovery, token checks, Principal and errors
//	challenge.go  401/403 answers with WWW-Authenticate, and the protected resource metadata
package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/fngate/fngate/core/config"
)

// Principal is who an accepted token speaks for.
type Principal struct {
	Subject string
	// Scopes are all the scopes the token grants, not only the required ones.
	Scopes []string
}

// The kinds of refusal; a Verify error matches one of them with errors.Is.
var (
	// ErrNoToken is a request without an access token: a 401 that names no error, so the
	// client starts the authorization flow rather than reporting a failure (RFC 6750 3.1).
	ErrNoToken = errors.New("mcpauth: no access token")
	// ErrInvalidToken is a token that is malformed, forged, expired, from another issuer or
	// for another audience: a 401 with error="invalid_token".
	ErrInvalidToken = errors.New("invalid_token")
	// ErrInsufficientScope is a valid token without every required scope: a 403 with
	// error="insufficient_scope", so the client asks for more scope instead of a new login.
	ErrInsufficientScope = errors.New("insufficient_scope")
	// ErrUnavailable is a token that could not be checked at all (the authorization server's
	// metadata or keys unreachable): no evidence against the token, so a 503, not a 401 that
	// would send the client to throw away a good token and sign in again.
	ErrUnavailable = errors.New("mcpauth: the authorization server cannot be reached")
)

// Error is one refusal: its Kind (a sentinel above), a Description safe to show the client,
// and the Cause for the log.
type Error struct {
	Kind        error
	Description string
	Cause       error
}

func (e *Error) Error() string {
	msg := e.Kind.Error() + ": " + e.Description
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

func (e *Error) Unwrap() []error { return []error{e.Kind, e.Cause} }

func refuse(kind error, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Description: fmt.Sprintf(format, args...), Cause: cause}
}

// Verifier checks access tokens for the configured resource. It is safe for concurrent use.
type Verifier struct {
	cfg         config.MCPOAuth
	client      *http.Client
	metadataURL string
	metadata    []byte
	now         func() time.Time // tests move it

	mu      sync.Mutex
	tokens  *oidc.IDTokenVerifier
	lastTry time.Time
	lastErr error
}

// discoveryTimeout bounds each request to the authorization server; RetryAfter spaces
// discovery attempts after one failed, so an unreachable server is not asked once per
// request to /mcp, and one that comes back is used without a restart.
const (
	discoveryTimeout = 10 * time.Second
	RetryAfter       = 30 * time.Second
	maxMetadataBytes = 1 << 20
)

// signingAlgs are the algorithms a token may be signed with: every asymmetric JWS
// algorithm. Access tokens need not use the ID tokens' algorithms that a discovery
// document lists (RFC 8414 lists none); symmetric ones (HS*) are left out because the
// "secret" would be a key anyone can read from the JWKS.
var signingAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA,
}

// New returns the verifier of cfg, a validated mcp_oauth. It makes no request: the
// authorization server is discovered on the first token, so a cold start does not wait on
// it and a server down at start does not stop the gateway. client (nil:
// http.DefaultClient) fetches the metadata and keys, each request bounded by
// discoveryTimeout.
func New(cfg *config.MCPOAuth, client *http.Client) *Verifier {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	if c.Timeout == 0 || c.Timeout > discoveryTimeout {
		c.Timeout = discoveryTimeout
	}
	v := &Verifier{cfg: *cfg, client: &c, now: time.Now}
	v.cfg.Scopes = slices.Clone(cfg.Scopes)
	v.metadataURL = metadataURL(cfg.Resource)
	v.metadata, _ = json.Marshal(resourceMetadata{
		Resource:               cfg.Resource,
		AuthorizationServers:   []string{cfg.Issuer},
		ScopesSupported:        v.cfg.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "fngate MCP gateway",
	})
	return v
}

// Verify checks raw, a bearer token from a request to /mcp: its signature against the
// issuer's keys, its issuer, expiry and not-before (go-oidc), its audience (exactly the
// configured resource) and the required scopes.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	if raw == "" {
		return Principal{}, ErrNoToken
	}
	// A token that is no JWS at all is refused before discovery: it is known bad without
	// the issuer, so it costs the issuer no request and is a 401 even when the issuer is down.
	if strings.Count(raw, ".") != 2 {
		return Principal{}, refuse(ErrInvalidToken, nil, "the token is not a signed JWT access token")
	}
	tv, err := v.get()
	if err != nil {
		return Principal{}, err
	}
	tok, err := tv.Verify(oidc.ClientContext(ctx, v.client), raw)
	if err != nil {
		return Principal{}, v.classify(err)
	}
	// RFC 8707 and MCP's spec: a token is accepted only if it was issued for this
	// resource. The comparison is byte for byte (RFC 9728 3.3's simple string comparison):
	// the resource is validated to end in /mcp, so the empty-path ambiguity that makes some
	// servers fold a trailing slash never arises, and folding anything else would accept
	// tokens issued for another URI that may be another service.
	if !slices.Contains(tok.Audience, v.cfg.Resource) {
		return Principal{}, refuse(ErrInvalidToken, nil, "the token is not for this resource: its audience must include %s", v.cfg.Resource)
	}
	// The subject is whom the gateway logs and binds sessions to; a token naming no one
	// cannot be told apart from another.
	if tok.Subject == "" {
		return Principal{}, refuse(ErrInvalidToken, nil, "the token has no subject")
	}
	var claims struct {
		Scope json.RawMessage `json:"scope"`
		Scp   json.RawMessage `json:"scp"`
	}
	if err := tok.Claims(&claims); err != nil {
		return Principal{}, refuse(ErrInvalidToken, err, "the token's claims cannot be read")
	}
	scopes := scopeList(claims.Scope)
	if scopes == nil {
		scopes = scopeList(claims.Scp)
	}
	var missing []string
	for _, s := range v.cfg.Scopes {
		if !slices.Contains(scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		noun := "scope"
		if len(missing) > 1 {
			noun = "scopes"
		}
		return Principal{}, refuse(ErrInsufficientScope, nil, "the token lacks the %s %s", noun, strings.Join(missing, " "))
	}
	return Principal{Subject: tok.Subject, Scopes: scopes}, nil
}

// scopeList reads a scope claim: RFC 9068's space-separated string, or the list some
// servers send as scp (Okta; Entra sends scp as a string).
func scopeList(b json.RawMessage) []string {
	if len(b) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return strings.Fields(s)
	}
	var list []string
	if json.Unmarshal(b, &list) == nil {
		return list
	}
	return nil
}

// classify turns go-oidc's refusal into ours. go-oidc's errors are strings apart from
// expiry, so the messages are matched (verify.go, jwks.go of go-oidc v3).
func (v *Verifier) classify(err error) error {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return refuse(ErrInvalidToken, err, "the token has expired")
	case strings.Contains(msg, "fetching keys"):
		return &Error{Kind: ErrUnavailable, Description: "the authorization server's keys cannot be fetched", Cause: err}
	case strings.Contains(msg, "issued by a different provider"):
		return refuse(ErrInvalidToken, err, "the token was not issued by %s", v.cfg.Issuer)
	case strings.Contains(msg, "nbf"):
		return refuse(ErrInvalidToken, err, "the token is not valid yet")
	case strings.Contains(msg, "failed to verify signature"):
		return refuse(ErrInvalidToken, err, "the token's signature does not verify against the issuer's keys")
	}
	return refuse(ErrInvalidToken, err, "the token is not a signed JWT access token")
}

// get returns the token verifier, discovering the authorization server on first use.
func (v *Verifier) get() (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tokens != nil {
		return v.tokens, nil
	}
	if v.lastErr != nil && v.now().Sub(v.lastTry) < RetryAfter {
		return nil, v.lastErr
	}
	v.lastTry = v.now()
	jwks, err := v.discover()
	if err != nil {
		v.lastErr = &Error{Kind: ErrUnavailable, Description: "the authorization server's metadata cannot be fetched", Cause: err}
		return nil, v.lastErr
	}
	// The key set keeps this context for its later fetches (new keys on rotation): it must
	// outlive the request that triggered discovery, so it is not that request's.
	keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), v.client), jwks)
	// SkipClientIDCheck: go-oidc's audience check is for a client's ID tokens; ours,
	// the resource, is in Verify.
	v.tokens = oidc.NewVerifier(v.cfg.Issuer, keys, &oidc.Config{
		SkipClientIDCheck:    true,
		SupportedSigningAlgs: signingAlgs,
		Now:                  v.now,
	})
	v.lastErr = nil
	return v.tokens, nil
}

// discover returns the issuer's jwks_uri: from its OpenID Connect discovery document, else
// its RFC 8414 authorization server metadata (servers that are OAuth only).
func (v *Verifier) discover() (string, error) {
	// Not a request's context: the answer is shared by every later request, so a caller
	// that hangs up must not make it a failure remembered for RetryAfter.
	ctx, cancel := context.WithTimeout(context.Background(), discoveryTimeout)
	defer cancel()
	var errs []error
	for _, u := range discoveryURLs(v.cfg.Issuer) {
		m, err := v.fetch(ctx, u)
		if err == nil {
			// OpenID Connect Discovery 4.3 and RFC 8414 3.3: a document naming another
			// issuer is not this issuer's (a mix-up or an impersonation).
			switch {
			case m.Issuer != v.cfg.Issuer:
				err = fmt.Errorf("it names the issuer %q, not %q", m.Issuer, v.cfg.Issuer)
			case m.JWKSURI == "":
				err = errors.New("it has no jwks_uri")
			default:
				return m.JWKSURI, nil
			}
		}
		errs = append(errs, fmt.Errorf("%s: %w", u, err))
	}
	return "", errors.Join(errs...)
}

// discoveryURLs are where the issuer's metadata may be: OpenID Connect's (appended to the
// issuer), then RFC 8414's (inserted between the host and the issuer's path).
func discoveryURLs(issuer string) []string {
	oidcURL := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	u, err := url.Parse(issuer)
	if err != nil {
		return []string{oidcURL}
	}
	u.Path = "/.well-known/oauth-authorization-server" + strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return []string{oidcURL, u.String()}
}

type serverMetadata struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

func (v *Verifier) fetch(ctx context.Context, u string) (*serverMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("content type %q, not application/json", resp.Header.Get("Content-Type"))
	}
	var m serverMetadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes)).Decode(&m); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	return &m, nil
}

package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// Claims are what the admin API reads from a verified ID token.
type Claims struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified *bool
	HD            string   // Google Workspace's hosted domain
	Groups        []string // the groups claim (admin.oidc.groups_claim)
}

// Name is how the person is named in answers and the audit: the email, else the subject.
func (c *Claims) Name() string {
	if c.Email != "" {
		return c.Email
	}
	return c.Subject
}

// Verifier checks an ID token: its signature against the issuer's keys, its issuer, its
// audience (the console's client id) and its expiry.
type Verifier interface {
	Verify(ctx context.Context, raw string) (*Claims, error)
}

// UnavailableError is a token that could not be checked at all (the issuer's discovery
// document or keys unreachable): no evidence either way, so a 503, not a 401.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string {
	return "oidc: the issuer cannot be reached: " + e.Err.Error()
}
func (e *UnavailableError) Unwrap() error { return e.Err }

// OIDCVerifier verifies ID tokens with coreos/go-oidc. It reads the issuer's discovery
// document on first use, not at start: a control-plane function's cold start does not wait
// on the identity provider, and one that is down at start recovers without a restart.
type OIDCVerifier struct {
	cfg    *config.OIDC
	client *http.Client

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	lastTry  time.Time
	lastErr  error
}

// discoveryTimeout bounds each request to the issuer; retryAfter spaces discovery attempts
// after one failed, so a down issuer is not asked once per admin request.
const (
	discoveryTimeout = 10 * time.Second
	retryAfter       = 5 * time.Second
)

// NewVerifier returns the verifier of cfg. client (nil: http.DefaultClient) fetches the
// discovery document and keys, each request bounded by discoveryTimeout.
func NewVerifier(cfg *config.OIDC, client *http.Client) (*OIDCVerifier, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" {
		return nil, errors.New("admin.oidc needs issuer and client_id")
	}
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	if c.Timeout == 0 || c.Timeout > discoveryTimeout {
		c.Timeout = discoveryTimeout
	}
	return &OIDCVerifier{cfg: cfg, client: &c}, nil
}

func (v *OIDCVerifier) get() (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	if v.lastErr != nil && time.Since(v.lastTry) < retryAfter {
		return nil, v.lastErr
	}
	v.lastTry = time.Now()
	// The provider keeps this context for its key set's later fetches: it must outlive
	// the request, so it is not the request's (the client's timeout bounds each fetch).
	ctx := oidc.ClientContext(context.Background(), v.client)
	p, err := oidc.NewProvider(ctx, v.cfg.Issuer)
	if err != nil {
		v.lastErr = &UnavailableError{Err: err}
		return nil, v.lastErr
	}
	// go-oidc checks the signature against the keys of the issuer's JWKS, refusing "none"
	// and any algorithm the discovery document does not list; the issuer; the audience;
	// the expiry.
	v.verifier, v.lastErr = p.Verifier(&oidc.Config{ClientID: v.cfg.ClientID}), nil
	return v.verifier, nil
}

// Verify checks raw and returns its claims.
func (v *OIDCVerifier) Verify(ctx context.Context, raw string) (*Claims, error) {
	iv, err := v.get()
	if err != nil {
		return nil, err
	}
	tok, err := iv.Verify(oidc.ClientContext(ctx, v.client), raw)
	if err != nil {
		// go-oidc wraps a failed key fetch in its own message; the key set's fetch error
		// reads "fetching keys" (remote_keyset.go).
		if strings.Contains(err.Error(), "fetching keys") {
			return nil, &UnavailableError{Err: err}
		}
		return nil, fmt.Errorf("oidc: %w", err)
	}
	var all map[string]json.RawMessage
	if err := tok.Claims(&all); err != nil {
		return nil, fmt.Errorf("oidc: claims: %w", err)
	}
	c := &Claims{Issuer: tok.Issuer, Subject: tok.Subject}
	_ = json.Unmarshal(all["email"], &c.Email)
	if b, ok := all["email_verified"]; ok {
		var ev bool
		if json.Unmarshal(b, &ev) == nil {
			c.EmailVerified = &ev
		}
	}
	_ = json.Unmarshal(all["hd"], &c.HD)
	c.Groups = stringsClaim(all[v.cfg.GroupsClaim])
	return c, nil
}

// stringsClaim reads a claim that is a list of strings, or one string (some providers send
// a single group bare).
func stringsClaim(b json.RawMessage) []string {
	var list []string
	if json.Unmarshal(b, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(b, &one) == nil && one != "" {
		return []string{one}
	}
	return nil
}

// RoleOf is the role the config's admin.oidc.roles grants c: admin when any of its lists
// matches, else viewer when any of viewer's does, else "" (signed in, but no role). An
// email counts only when the provider has not said it is unverified.
func RoleOf(cfg *config.OIDC, c *Claims) string {
	for _, role := range []string{keystore.RoleAdmin, keystore.RoleViewer} {
		if rc := cfg.Roles[role]; rc != nil && matches(rc, c) {
			return role
		}
	}
	return ""
}

func matches(rc *config.RoleClaim, c *Claims) bool {
	verified := c.EmailVerified == nil || *c.EmailVerified
	if verified && c.Email != "" && slices.ContainsFunc(rc.Emails, func(e string) bool { return strings.EqualFold(e, c.Email) }) {
		return true
	}
	if c.HD != "" && slices.ContainsFunc(rc.HD, func(d string) bool { return strings.EqualFold(d, c.HD) }) {
		return true
	}
	for _, g := range c.Groups {
		if slices.Contains(rc.Groups, g) {
			return true
		}
	}
	return false
}

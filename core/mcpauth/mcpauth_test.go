package mcpauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/mcpauth"
	"github.com/fngate/fngate/internal/oidcfake"
)

const (
	resource  = "https://gw.example.com/mcp"
	consoleID = "console-client" // the admin console's client id: the fake's default audience
)

// recorder is the verifier's transport: it counts the requests that reach the issuer, and
// fails them (down) or answers 404 for some paths (missing), as an issuer may.
type recorder struct {
	mu      sync.Mutex
	paths   []string
	down    atomic.Bool
	missing map[string]bool
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.paths = append(r.paths, req.URL.Path)
	missing := r.missing[req.URL.Path]
	r.mu.Unlock()
	if r.down.Load() {
		return nil, errors.New("connection refused")
	}
	if missing {
		return &http.Response{StatusCode: http.StatusNotFound, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.paths)
}

func fixture(t *testing.T, scopes ...string) (*mcpauth.Verifier, *oidcfake.Issuer, *recorder) {
	t.Helper()
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: consoleID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	rec := &recorder{missing: map[string]bool{}}
	v := mcpauth.New(&config.MCPOAuth{Issuer: iss.URL, Resource: resource, Scopes: scopes}, &http.Client{Transport: rec})
	return v, iss, rec
}

func TestVerify(t *testing.T) {
	v, iss, _ := fixture(t, "mcp")
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * time.Hour).Unix()
	future := time.Now().Add(time.Hour).Unix()
	for _, tc := range []struct {
		name   string
		token  string
		kind   error // nil: accepted
		desc   string
		scopes []string
	}{
		{"a token for the resource", iss.Mint(oidcfake.Claims{"aud": resource, "scope": "mcp"}), nil, "", []string{"mcp"}},
		{"more scopes than required", iss.Mint(oidcfake.Claims{"aud": resource, "scope": "openid mcp mcp:admin"}), nil, "", []string{"openid", "mcp", "mcp:admin"}},
		{"scp as a list", iss.Mint(oidcfake.Claims{"aud": resource, "scp": []string{"mcp"}}), nil, "", []string{"mcp"}},
		{"scp as a string", iss.Mint(oidcfake.Claims{"aud": resource, "scp": "mcp other"}), nil, "", []string{"mcp", "other"}},
		{"the resource among audiences", iss.Mint(oidcfake.Claims{"aud": []string{"https://other.example.com", resource}, "scope": "mcp"}), nil, "", []string{"mcp"}},

		{"no token", "", mcpauth.ErrNoToken, "", nil},
		{"the console's token", iss.Mint(oidcfake.Claims{"scope": "mcp"}), mcpauth.ErrInvalidToken, "the token is not for this resource: its audience must include " + resource, nil},
		{"another audience", iss.Mint(oidcfake.Claims{"aud": "https://other.example.com/mcp", "scope": "mcp"}), mcpauth.ErrInvalidToken, "the token is not for this resource: its audience must include " + resource, nil},
		{"the resource with a trailing slash", iss.Mint(oidcfake.Claims{"aud": resource + "/", "scope": "mcp"}), mcpauth.ErrInvalidToken, "the token is not for this resource: its audience must include " + resource, nil},
		{"no audience", iss.Mint(oidcfake.Claims{"aud": nil, "scope": "mcp"}), mcpauth.ErrInvalidToken, "the token is not for this resource: its audience must include " + resource, nil},
		{"expired", iss.Mint(oidcfake.Claims{"aud": resource, "scope": "mcp", "exp": past, "iat": past - 3600}), mcpauth.ErrInvalidToken, "the token has expired", nil},
		{"not valid yet", iss.Mint(oidcfake.Claims{"aud": resource, "scope": "mcp", "nbf": future}), mcpauth.ErrInvalidToken, "the token is not valid yet", nil},
		{"another issuer", iss.Mint(oidcfake.Claims{"aud": resource, "scope": "mcp", "iss": "https://idp.example.net"}), mcpauth.ErrInvalidToken, "the token was not issued by " + iss.URL, nil},
		{"a forged signature", iss.MintSignedBy(other, oidcfake.Claims{"aud": resource, "scope": "mcp"}), mcpauth.ErrInvalidToken, "the token's signature does not verify against the issuer's keys", nil},
		{"unsigned (alg none)", iss.MintUnsigned(oidcfake.Claims{"aud": resource, "scope": "mcp"}), mcpauth.ErrInvalidToken, "the token is not a signed JWT access token", nil},
		{"not a JWT", "opaque-token-123", mcpauth.ErrInvalidToken, "the token is not a signed JWT access token", nil},
		{"no subject", iss.Mint(oidcfake.Claims{"aud": resource, "scope": "mcp", "sub": nil}), mcpauth.ErrInvalidToken, "the token has no subject", nil},
		{"no scope", iss.Mint(oidcfake.Claims{"aud": resource}), mcpauth.ErrInsufficientScope, "the token lacks the scope mcp", nil},
		{"another scope", iss.Mint(oidcfake.Claims{"aud": resource, "scope": "mcp:read"}), mcpauth.ErrInsufficientScope, "the token lacks the scope mcp", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tc.token)
			if tc.kind == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.Subject != "user-1" || !slices.Equal(p.Scopes, tc.scopes) {
					t.Errorf("principal %+v, want user-1 with %v", p, tc.scopes)
				}
				return
			}
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want %v", err, tc.kind)
			}
			for _, k := range []error{mcpauth.ErrNoToken, mcpauth.ErrInvalidToken, mcpauth.ErrInsufficientScope, mcpauth.ErrUnavailable} {
				if k != tc.kind && errors.Is(err, k) {
					t.Errorf("error %v is %v too", err, k)
				}
			}
			var e *mcpauth.Error
			if tc.desc != "" && (!errors.As(err, &e) || e.Description != tc.desc) {
				t.Errorf("error %v, want the description %q", err, tc.desc)
			}
		})
	}
}

// New makes no request (a cold start does not wait on the issuer); the first token
// discovers the issuer once, later tokens reuse it.
func TestDiscoveryIsLazyAndOnce(t *testing.T) {
	v, iss, rec := fixture(t)
	if got := rec.requests(); len(got) != 0 {
		t.Fatalf("New made requests: %v", got)
	}
	if v.MetadataURL() == "" {
		t.Fatal("no metadata URL")
	}
	if _, err := v.Verify(context.Background(), "opaque-token"); !errors.Is(err, mcpauth.ErrInvalidToken) {
		t.Fatalf("an opaque token: %v", err)
	}
	if got := rec.requests(); len(got) != 0 {
		t.Fatalf("an opaque token made requests: %v", got)
	}
	tok := iss.Mint(oidcfake.Claims{"aud": resource})
	for range 3 {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rec.requests(), []string{"/.well-known/openid-configuration", "/jwks"}; !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}

// An issuer with RFC 8414 metadata alone is found there.
func TestDiscoveryFallsBackToRFC8414(t *testing.T) {
	v, iss, rec := fixture(t)
	rec.missing["/.well-known/openid-configuration"] = true
	if _, err := v.Verify(context.Background(), iss.Mint(oidcfake.Claims{"aud": resource})); err != nil {
		t.Fatal(err)
	}
	want := []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server", "/jwks"}
	if got := rec.requests(); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}

// A failed discovery is a 503-kind error, remembered for RetryAfter (the issuer is not asked
// again meanwhile), then retried: the issuer's return needs no restart.
func TestDiscoveryFailureThenRecovery(t *testing.T) {
	v, iss, rec := fixture(t)
	var mu sync.Mutex
	now := time.Now()
	mcpauth.SetClock(v, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	tok := iss.Mint(oidcfake.Claims{"aud": resource})

	rec.down.Store(true)
	for _, step := range []struct {
		name     string
		after    time.Duration
		up       bool
		requests int // total so far
		ok       bool
	}{
		{"issuer down", 0, false, 2, false}, // both discovery URLs tried
		{"asked again at once", 0, true, 2, false},
		{"just before the retry", mcpauth.RetryAfter - time.Second, true, 2, false},
		{"after the retry interval", time.Second, true, 4, true}, // discovery + keys
		{"then cached", time.Minute, true, 4, true},
	} {
		advance(step.after)
		rec.down.Store(!step.up)
		_, err := v.Verify(context.Background(), tok)
		if step.ok != (err == nil) {
			t.Fatalf("%s: error %v", step.name, err)
		}
		if !step.ok && !errors.Is(err, mcpauth.ErrUnavailable) {
			t.Errorf("%s: error %v, want ErrUnavailable", step.name, err)
		}
		if got := rec.requests(); len(got) != step.requests {
			t.Errorf("%s: requests %v, want %d", step.name, got, step.requests)
		}
	}
}

// A discovery document naming another issuer is not used.
func TestDiscoveryRefusesAnotherIssuer(t *testing.T) {
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: consoleID})
	if err != nil {
		t.Fatal(err)
	}
	defer iss.Close()
	// The fake's document names iss.URL; configured with a trailing slash, the issuer differs.
	v := mcpauth.New(&config.MCPOAuth{Issuer: iss.URL + "/", Resource: resource}, nil)
	_, err = v.Verify(context.Background(), iss.Mint(oidcfake.Claims{"aud": resource}))
	if !errors.Is(err, mcpauth.ErrUnavailable) || !strings.Contains(err.Error(), "names the issuer") {
		t.Errorf("error %v, want ErrUnavailable naming the issuer", err)
	}
}

// Keys that cannot be fetched leave the token unchecked: ErrUnavailable (a 503), not a
// refusal of the token.
func TestKeysUnreachable(t *testing.T) {
	v, iss, rec := fixture(t)
	rec.missing["/jwks"] = true
	_, err := v.Verify(context.Background(), iss.Mint(oidcfake.Claims{"aud": resource}))
	if !errors.Is(err, mcpauth.ErrUnavailable) || errors.Is(err, mcpauth.ErrInvalidToken) {
		t.Errorf("error %v, want ErrUnavailable", err)
	}
}

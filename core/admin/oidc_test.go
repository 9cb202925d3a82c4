package admin_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"testing"
	"time"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/internal/oidcfake"
)

// oidcFixture is the admin API with a fake identity provider as its admin.oidc.
func oidcFixture(t *testing.T) (*fixture, *oidcfake.Issuer) {
	t.Helper()
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: "console-client"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	f := newFixture(t, `  oidc:
    issuer: `+iss.URL+`
    client_id: console-client
    roles:
      admin: {emails: [ops@example.com], groups: [fngate-admins]}
      viewer: {hd: [example.com]}
`)
	return f, iss
}

func TestOIDCTokens(t *testing.T) {
	f, iss := oidcFixture(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).Unix()
	for _, tc := range []struct {
		name   string
		token  string
		status int
		role   string
	}{
		{"admin by email", iss.Mint(oidcfake.Claims{"email": "ops@example.com", "email_verified": true}), http.StatusOK, "admin"},
		{"admin by group", iss.Mint(oidcfake.Claims{"email": "dev@elsewhere.org", "groups": []string{"devs", "fngate-admins"}}), http.StatusOK, "admin"},
		{"viewer by hosted domain", iss.Mint(oidcfake.Claims{"email": "someone@example.com", "hd": "example.com"}), http.StatusOK, "viewer"},
		{"an unverified email is no admin", iss.Mint(oidcfake.Claims{"email": "ops@example.com", "email_verified": false}), http.StatusForbidden, ""},
		{"no role", iss.Mint(oidcfake.Claims{"email": "x@elsewhere.org"}), http.StatusForbidden, ""},
		{"expired", iss.Mint(oidcfake.Claims{"email": "ops@example.com", "exp": past, "iat": past - 3600}), http.StatusUnauthorized, ""},
		{"wrong audience", iss.Mint(oidcfake.Claims{"email": "ops@example.com", "aud": "another-client"}), http.StatusUnauthorized, ""},
		{"wrong issuer", iss.Mint(oidcfake.Claims{"email": "ops@example.com", "iss": "https://accounts.example.net"}), http.StatusUnauthorized, ""},
		{"unsigned (alg none)", iss.MintUnsigned(oidcfake.Claims{"email": "ops@example.com"}), http.StatusUnauthorized, ""},
		{"bad signature", iss.MintSignedBy(other, oidcfake.Claims{"email": "ops@example.com"}), http.StatusUnauthorized, ""},
		{"truncated", iss.Mint(oidcfake.Claims{"email": "ops@example.com"})[:200] + ".x", http.StatusUnauthorized, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := f.do(http.MethodGet, "/admin/v1/me", tc.token, nil)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %v", code, tc.status, body)
			}
			if tc.role != "" && body["role"] != tc.role {
				t.Fatalf("role %v, want %s", body["role"], tc.role)
			}
			if code == http.StatusOK && body["id"] != "oidc:"+iss.URL+"#user-1" {
				t.Fatalf("id %v", body["id"])
			}
		})
	}
}

// TestOIDCIssuerDownIs503: a token that cannot be checked is no evidence either way.
func TestOIDCIssuerDownIs503(t *testing.T) {
	f, iss := oidcFixture(t)
	tok := iss.Mint(oidcfake.Claims{"email": "ops@example.com"})
	iss.Close()
	code, body, _ := f.do(http.MethodGet, "/admin/v1/me", tok, nil)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("status %d: %v", code, body)
	}
}

func TestRoleOfPrefersAdmin(t *testing.T) {
	cfg := testConfig(t, `  oidc:
    issuer: http://127.0.0.1:1
    client_id: c
    roles:
      admin: {groups: [a]}
      viewer: {groups: [a, v]}
`)
	for _, tc := range []struct {
		groups []string
		want   string
	}{{[]string{"a"}, "admin"}, {[]string{"v"}, "viewer"}, {[]string{"x"}, ""}, {nil, ""}} {
		if got := admin.RoleOf(cfg.Admin.OIDC, &admin.Claims{Groups: tc.groups}); got != tc.want {
			t.Errorf("groups %v: role %q, want %q", tc.groups, got, tc.want)
		}
	}
}

package admin_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/internal/oidcfake"
)

func TestCORSOnlyForNamedOrigins(t *testing.T) {
	for _, tc := range []struct {
		name, extra, origin string
		allowed             bool
	}{
		{"off by default", "", "https://console.example.com", false},
		{"a named origin", "  cors_origins: [https://console.example.com]\n", "https://console.example.com", true},
		{"another origin", "  cors_origins: [https://console.example.com]\n", "https://evil.example.com", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.extra)
			r := httptest.NewRequest(http.MethodOptions, "/admin/v1/keys", nil)
			r.Header.Set("Origin", tc.origin)
			r.Header.Set("Access-Control-Request-Method", "POST")
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, r)
			got := w.Header().Get("Access-Control-Allow-Origin")
			if tc.allowed != (got == tc.origin) || !tc.allowed && got != "" {
				t.Fatalf("Access-Control-Allow-Origin %q", got)
			}
			if tc.allowed && (w.Code != http.StatusNoContent || !strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization")) {
				t.Fatalf("preflight %d %v", w.Code, w.Header())
			}
		})
	}
}

func TestEveryAnswerIsHardened(t *testing.T) {
	f := newFixture(t, "")
	for _, p := range []string{"/admin/v1/keys", "/admin/v1/nothing", "/admin/v1/openapi.json"} {
		for _, token := range []string{adminSecret, ""} {
			_, _, hd := f.do(http.MethodGet, p, token, nil)
			for h, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
				"Referrer-Policy": "no-referrer"} {
				if hd.Get(h) != want {
					t.Errorf("%s: %s = %q", p, h, hd.Get(h))
				}
			}
			if !strings.HasPrefix(hd.Get("X-Request-Id"), "adm_") {
				t.Errorf("%s: request id %q", p, hd.Get("X-Request-Id"))
			}
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/admin/v1/me", nil)
	r.Header.Set("X-Request-Id", "caller-123")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if w.Header().Get("X-Request-Id") != "caller-123" {
		t.Errorf("a caller's request id is not echoed: %q", w.Header().Get("X-Request-Id"))
	}
	r.Header.Set("X-Request-Id", "bad id\nwith newline")
	w = httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if strings.Contains(w.Header().Get("X-Request-Id"), "bad") {
		t.Errorf("a malformed request id was echoed")
	}
}

// TestWithPrincipal: the console's principal comes through the context, never a header.
func TestWithPrincipal(t *testing.T) {
	f := newFixture(t, "")
	r := httptest.NewRequest(http.MethodGet, "/admin/v1/me", nil)
	r = r.WithContext(admin.WithPrincipal(r.Context(), &admin.Principal{ID: "oidc:https://idp#u1", Name: "ana@example.com", Role: "viewer"}))
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"name":"ana@example.com"`) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	r = httptest.NewRequest(http.MethodGet, "/admin/v1/me", nil)
	for _, h := range []string{"X-Principal", "X-Fngate-Principal", "X-Forwarded-User", "X-Forwarded-Email"} {
		r.Header.Set(h, "admin")
	}
	w = httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("headers made a principal: %d %s", w.Code, w.Body)
	}
}

// TestNoSecretInLogs drives every kind of caller and change and scans the log for the
// tokens and secrets involved.
func TestNoSecretInLogs(t *testing.T) {
	f, iss := oidcFixture(t)
	tok := iss.Mint(oidcfake.Claims{"email": "ops@example.com"})
	bad := iss.Mint(oidcfake.Claims{"email": "ops@example.com", "aud": "x"})
	_, made, _ := f.do(http.MethodPost, "/admin/v1/keys", tok, map[string]any{"name": "svc", "role": "viewer"})
	secret := made["key"].(string)
	f.do(http.MethodGet, "/admin/v1/me", secret, nil)
	_, rot, _ := f.do(http.MethodPost, "/admin/v1/keys/"+made["id"].(string)+"/rotate", adminSecret, nil)
	f.do(http.MethodGet, "/admin/v1/me", secret, nil) // the old secret, now refused
	f.do(http.MethodGet, "/admin/v1/me", bad, nil)
	f.do(http.MethodGet, "/admin/v1/me", "sk-fngate-not-a-key-at-all", nil)
	logs := f.logs.String()
	if !strings.Contains(logs, "admin change") || !strings.Contains(logs, "admin refused") {
		t.Fatalf("the log has no changes or refusals:\n%s", logs)
	}
	for _, s := range []string{tok, bad, secret, rot["key"].(string), adminSecret, "sk-fngate-not-a-key-at-all", tok[len(tok)-30:]} {
		if strings.Contains(logs, s) {
			t.Fatalf("the log holds a secret (%.12s...):\n%s", s, logs)
		}
	}
}

// TestRequestWithoutABody: an in-process caller (the console, the CLI's direct mode) may build
// a request with a nil Body, as http.NewRequest does for none: a clear 400, not a panic.
func TestRequestWithoutABody(t *testing.T) {
	f := newFixture(t, "")
	r, err := http.NewRequest(http.MethodPost, "/admin/v1/keys", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r = r.WithContext(admin.WithPrincipal(r.Context(), &admin.Principal{ID: "key:ops", Name: "ops", Role: "admin"}))
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":"body_required"`) {
		t.Fatalf("a create without a body: %d %s", w.Code, w.Body)
	}
}

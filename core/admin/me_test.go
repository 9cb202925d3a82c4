package admin_test

import (
	"net/http"
	"testing"
)

func TestMeNamesTheCaller(t *testing.T) {
	f := newFixture(t, "")
	for _, tc := range []struct {
		token    string
		status   int
		id, role string
	}{
		{adminSecret, http.StatusOK, "key:ops", "admin"},
		{viewerSecret, http.StatusOK, "key:audit", "viewer"},
		{"sk-app-config-key", http.StatusUnauthorized, "", ""},
		{"nonsense", http.StatusUnauthorized, "", ""},
		{"", http.StatusUnauthorized, "", ""},
	} {
		code, body, hd := f.do(http.MethodGet, "/admin/v1/me", tc.token, nil)
		if code != tc.status {
			t.Errorf("token %q: status %d, want %d: %v", tc.token, code, tc.status, body)
			continue
		}
		if hd.Get("Cache-Control") != "no-store" || hd.Get("X-Request-Id") == "" || hd.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("token %q: hardening headers missing: %v", tc.token, hd)
		}
		if tc.status != http.StatusOK {
			if e, _ := body["error"].(map[string]any); e["type"] != "authentication_error" {
				t.Errorf("token %q: error %v", tc.token, body)
			}
			continue
		}
		if body["id"] != tc.id || body["role"] != tc.role {
			t.Errorf("token %q: me = %v", tc.token, body)
		}
	}
}

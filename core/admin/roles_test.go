package admin_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

const teamAdminSecret = "sk-fngate-teamadmin-test-secret"

// addKey stores k with the secret given (made by the store's contract, as the API would).
func (f *fixture) addKey(k *keystore.Key, secret string) *keystore.Key {
	f.t.Helper()
	k.ID, k.Hash = keystore.NewID(), sha256.Sum256([]byte(secret))
	k.Created, k.Updated, k.Version = f.now, f.now, 1
	if err := f.keys.Create(context.Background(), k, nil); err != nil {
		f.t.Fatal(err)
	}
	return k
}

// teamFixture has a team-admin of team payments (models team/*, 100 requests a minute, $10
// a day), a key of its team and a key of another team.
func teamFixture(t *testing.T) (f *fixture, mine, theirs *keystore.Key) {
	f = newFixture(t, "")
	f.addKey(&keystore.Key{Key: config.Key{Name: "pay-admin", Models: []string{"team/*"}, KeyLimits: config.KeyLimits{
		Rate: &config.Rate{RequestsPerMinute: 100}, Budget: &config.Budget{USDPerDay: 10}}}, Team: "payments", Role: keystore.RoleTeamAdmin}, teamAdminSecret)
	mine = f.addKey(&keystore.Key{Key: config.Key{Name: "pay-svc", Models: []string{"team/chat"}, KeyLimits: config.KeyLimits{
		Rate: &config.Rate{RequestsPerMinute: 10}, Budget: &config.Budget{USDPerDay: 1}}}, Team: "payments"}, "sk-fngate-pay-svc")
	theirs = f.addKey(&keystore.Key{Key: config.Key{Name: "search-svc"}, Team: "search"}, "sk-fngate-search-svc")
	return f, mine, theirs
}

// TestRolesOnEveryRoute calls every operation as each kind of caller.
func TestRolesOnEveryRoute(t *testing.T) {
	const ok, created, denied, unauth = http.StatusOK, http.StatusCreated, http.StatusForbidden, http.StatusUnauthorized
	newKey := map[string]any{"name": "new", "team": "payments", "models": []string{"team/chat"},
		"rate": map[string]any{"requests_per_minute": 10}, "budget": map[string]any{"usd_per_day": 1}}
	for _, tc := range []struct {
		method, path string // {id}: the team-admin's team's key
		body         any
		admin        int
		viewer       int
		teamAdmin    int
		none         int
	}{
		{http.MethodGet, "/admin/v1/openapi.json", nil, ok, ok, ok, ok},
		{http.MethodGet, "/admin/v1/me", nil, ok, ok, ok, unauth},
		{http.MethodGet, "/admin/v1/keys", nil, ok, ok, ok, unauth},
		{http.MethodPost, "/admin/v1/keys", newKey, created, denied, created, unauth},
		{http.MethodGet, "/admin/v1/keys/{id}", nil, ok, ok, ok, unauth},
		{http.MethodPatch, "/admin/v1/keys/{id}", map[string]any{"description": "x"}, ok, denied, ok, unauth},
		{http.MethodDelete, "/admin/v1/keys/{id}", nil, ok, denied, ok, unauth},
		{http.MethodPost, "/admin/v1/keys/{id}/disable", nil, ok, denied, ok, unauth},
		{http.MethodPost, "/admin/v1/keys/{id}/enable", nil, ok, denied, ok, unauth},
		{http.MethodPost, "/admin/v1/keys/{id}/rotate", nil, ok, denied, ok, unauth},
		{http.MethodGet, "/admin/v1/usage?key={id}", nil, ok, ok, ok, unauth},
		{http.MethodGet, "/admin/v1/usage", nil, ok, ok, ok, unauth},
		{http.MethodGet, "/admin/v1/routes", nil, ok, ok, ok, unauth},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/cool", map[string]any{"for": "10m"}, ok, denied, denied, unauth},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/restore", nil, ok, denied, denied, unauth},
		{http.MethodGet, "/admin/v1/audit?target={id}", nil, ok, ok, ok, unauth},
		{http.MethodGet, "/admin/v1/audit", nil, ok, ok, denied, unauth},
	} {
		for _, who := range []struct {
			name, token string
			want        int
		}{{"admin", adminSecret, tc.admin}, {"viewer", viewerSecret, tc.viewer}, {"team-admin", teamAdminSecret, tc.teamAdmin}, {"none", "", tc.none}} {
			t.Run(tc.method+" "+tc.path+" as "+who.name, func(t *testing.T) {
				f, mine, _ := teamFixture(t)
				p := replaceID(tc.path, mine.ID)
				before, _ := f.keys.Audit(context.Background(), keystore.AuditQuery{})
				code, body, _ := f.do(tc.method, p, who.token, tc.body)
				if code != who.want {
					t.Fatalf("status %d, want %d: %v", code, who.want, body)
				}
				if code >= 400 {
					after, _ := f.keys.Audit(context.Background(), keystore.AuditQuery{})
					if len(after.Entries) != len(before.Entries) {
						t.Fatal("a refused call wrote an audit entry")
					}
					k, _ := f.keys.Get(context.Background(), mine.ID)
					if k.Version != mine.Version || k.Disabled || k.Deleted {
						t.Fatalf("a refused call changed the key: %+v", k)
					}
					if st, _ := f.routes.List(context.Background()); len(st) != 0 {
						t.Fatalf("a refused call changed route state: %+v", st)
					}
				}
			})
		}
	}
}

func replaceID(p, id string) string {
	out := ""
	for {
		i := indexOf(p, "{id}")
		if i < 0 {
			return out + p
		}
		out, p = out+p[:i]+id, p[i+4:]
	}
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TestTeamAdminBounds: a team-admin grants nothing beyond its own.
func TestTeamAdminBounds(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{"name": "k", "models": []string{"team/chat"}, "rate": map[string]any{"requests_per_minute": 10},
			"budget": map[string]any{"usd_per_day": 1}}
	}
	with := func(k string, v any) map[string]any {
		b := base()
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want int
	}{
		{"within", base(), http.StatusCreated},
		{"its team by name", with("team", "payments"), http.StatusCreated},
		{"a narrower glob", with("models", []string{"team/chat-*"}), http.StatusCreated},
		{"another team", with("team", "search"), http.StatusForbidden},
		{"role team-admin", with("role", "team-admin"), http.StatusForbidden},
		{"role admin", with("role", "admin"), http.StatusForbidden},
		{"role viewer", with("role", "viewer"), http.StatusForbidden},
		{"a model outside", with("models", []string{"other/chat"}), http.StatusForbidden},
		{"a wider glob", with("models", []string{"*"}), http.StatusForbidden},
		{"a glob across /", with("models", []string{"team/*/x"}), http.StatusForbidden},
		{"every model", with("models", nil), http.StatusForbidden},
		{"a higher rate", with("rate", map[string]any{"requests_per_minute": 101}), http.StatusForbidden},
		{"no rate", with("rate", nil), http.StatusForbidden},
		{"an unlimited rate", with("rate", map[string]any{"requests_per_minute": 0}), http.StatusForbidden},
		{"a higher budget", with("budget", map[string]any{"usd_per_day": 10.5}), http.StatusForbidden},
		{"no budget", with("budget", nil), http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, _ := teamFixture(t)
			code, body, _ := f.do(http.MethodPost, "/admin/v1/keys", teamAdminSecret, tc.body)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %v", code, tc.want, body)
			}
			page, _ := f.keys.List(context.Background(), keystore.Query{Name: "k"})
			if (len(page.Keys) == 1) != (code == http.StatusCreated) {
				t.Fatalf("stored %d keys after a %d", len(page.Keys), code)
			}
			if code == http.StatusCreated && page.Keys[0].Team != "payments" {
				t.Fatalf("team %q", page.Keys[0].Team)
			}
		})
	}
}

// TestTeamAdminSeesOnlyItsTeam: other teams' keys do not exist for it.
func TestTeamAdminSeesOnlyItsTeam(t *testing.T) {
	f, mine, theirs := teamFixture(t)
	for _, tc := range []struct {
		method, path string
		body         any
		want         int
	}{
		{http.MethodGet, "/admin/v1/keys/" + theirs.ID, nil, http.StatusNotFound},
		{http.MethodPatch, "/admin/v1/keys/" + theirs.ID, map[string]any{"owner": "me"}, http.StatusNotFound},
		{http.MethodDelete, "/admin/v1/keys/" + theirs.ID, nil, http.StatusNotFound},
		{http.MethodPost, "/admin/v1/keys/" + theirs.ID + "/rotate", nil, http.StatusNotFound},
		{http.MethodGet, "/admin/v1/usage?key=" + theirs.ID, nil, http.StatusNotFound},
		{http.MethodGet, "/admin/v1/usage?key=app", nil, http.StatusNotFound},
		{http.MethodGet, "/admin/v1/audit?target=" + theirs.ID, nil, http.StatusForbidden},
		{http.MethodGet, "/admin/v1/keys?team=search", nil, http.StatusForbidden},
		{http.MethodPatch, "/admin/v1/keys/" + mine.ID, map[string]any{"team": "search"}, http.StatusForbidden},
		{http.MethodPatch, "/admin/v1/keys/" + mine.ID, map[string]any{"role": "team-admin"}, http.StatusForbidden},
		{http.MethodPatch, "/admin/v1/keys/" + mine.ID, map[string]any{"budget": map[string]any{"usd_per_day": 50}}, http.StatusForbidden},
	} {
		code, body, _ := f.do(tc.method, tc.path, teamAdminSecret, tc.body)
		if code != tc.want {
			t.Errorf("%s %s: %d, want %d: %v", tc.method, tc.path, code, tc.want, body)
		}
	}
	k, _ := f.keys.Get(context.Background(), theirs.ID)
	if k.Version != 1 || k.Owner != "" || k.Deleted {
		t.Fatalf("the other team's key changed: %+v", k)
	}
	_, list, _ := f.do(http.MethodGet, "/admin/v1/keys", teamAdminSecret, nil)
	for _, d := range list["data"].([]any) {
		if d.(map[string]any)["team"] != "payments" {
			t.Fatalf("a team-admin listed %v", d)
		}
	}
}

func TestStoredKeyRoles(t *testing.T) {
	f := newFixture(t, "")
	f.addKey(&keystore.Key{Key: config.Key{Name: "ro"}, Role: keystore.RoleViewer}, "sk-fngate-stored-viewer")
	f.addKey(&keystore.Key{Key: config.Key{Name: "plain"}}, "sk-fngate-stored-plain")
	gone := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f.addKey(&keystore.Key{Key: config.Key{Name: "old"}, Role: keystore.RoleAdmin, ExpiresAt: &gone}, "sk-fngate-stored-expired")
	f.addKey(&keystore.Key{Key: config.Key{Name: "off"}, Role: keystore.RoleAdmin, Disabled: true}, "sk-fngate-stored-disabled")
	for _, tc := range []struct {
		token string
		want  int
	}{
		{"sk-fngate-stored-viewer", http.StatusOK},
		{"sk-fngate-stored-plain", http.StatusForbidden},
		{"sk-fngate-stored-expired", http.StatusUnauthorized},
		{"sk-fngate-stored-disabled", http.StatusUnauthorized},
	} {
		if code, body, _ := f.do(http.MethodGet, "/admin/v1/me", tc.token, nil); code != tc.want {
			t.Errorf("%s: %d, want %d: %v", tc.token, code, tc.want, body)
		}
	}
	if code, _, _ := f.do(http.MethodPost, "/admin/v1/keys", "sk-fngate-stored-viewer", map[string]any{"name": "x"}); code != http.StatusForbidden {
		t.Errorf("a stored viewer made a key: %d", code)
	}
}

// TestTeamAdminKeepsItsGuardrails: a key's guardrails replace key_defaults', so a team-admin
// checked by a guardrail issues keys checked by it too, and may add more.
func TestTeamAdminKeepsItsGuardrails(t *testing.T) {
	pii := map[string]any{"name": "pii", "on": "both", "mode": "block"}
	for _, tc := range []struct {
		name       string
		guardrails any // absent when nil
		want       int
	}{
		{"its own", []any{pii}, http.StatusCreated},
		{"its own, defaults left out", []any{map[string]any{"name": "pii"}}, http.StatusCreated},
		{"its own and more", []any{pii, map[string]any{"name": "words"}}, http.StatusCreated},
		{"none of its own", nil, http.StatusForbidden},
		{"an empty list", []any{}, http.StatusForbidden},
		{"its own, weaker", []any{map[string]any{"name": "pii", "mode": "log"}}, http.StatusForbidden},
		{"its own, on input only", []any{map[string]any{"name": "pii", "on": "input"}}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, guardConfig, "")
			f.addKey(&keystore.Key{Key: config.Key{Name: "pay-admin", KeyLimits: config.KeyLimits{
				Guardrails: []config.GuardrailUse{{Name: "pii", On: "both", Mode: "block"}}}}, Team: "payments", Role: keystore.RoleTeamAdmin}, teamAdminSecret)
			body := map[string]any{"name": "k"}
			if tc.guardrails != nil {
				body["guardrails"] = tc.guardrails
			}
			code, got, _ := f.do(http.MethodPost, "/admin/v1/keys", teamAdminSecret, body)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %v", code, tc.want, got)
			}
		})
	}
}

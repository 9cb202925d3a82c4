package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/keystore"
)

// TestKeyLifecycle walks one key through every change, checking each answer, the store and
// the audit entry the change wrote.
func TestKeyLifecycle(t *testing.T) {
	f := newFixture(t, "")
	code, made, _ := f.do(http.MethodPost, "/admin/v1/keys", adminSecret, map[string]any{
		"name": "billing", "team": "payments", "owner": "ana@example.com", "models": []string{"team/*"},
		"rate": map[string]any{"requests_per_minute": 60}, "budget": map[string]any{"usd_per_day": 5},
	})
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, made)
	}
	id, _ := made["id"].(string)
	secret, _ := made["key"].(string)
	if !strings.HasPrefix(id, "key_") || !strings.HasPrefix(secret, keystore.SecretPrefix) || made["version"] != 1.0 || made["source"] != "store" {
		t.Fatalf("create answered %v", made)
	}
	if _, ok := made["sha256"]; ok {
		t.Fatal("the answer shows the hash")
	}
	stored, err := f.keys.Get(context.Background(), id)
	if err != nil || stored.Name != "billing" || stored.Team != "payments" || stored.Rate.RequestsPerMinute != 60 || stored.CreatedBy != "key:ops" {
		t.Fatalf("stored %+v, %v", stored, err)
	}

	steps := []struct {
		method, path string
		body         any
		action       string
		check        func(map[string]any) bool
	}{
		{http.MethodPatch, "/admin/v1/keys/" + id, map[string]any{"description": "the billing service", "version": 1}, "key.update",
			func(o map[string]any) bool { return o["description"] == "the billing service" && o["version"] == 2.0 }},
		{http.MethodPost, "/admin/v1/keys/" + id + "/disable", nil, "key.disable", func(o map[string]any) bool { return o["disabled"] == true }},
		{http.MethodPost, "/admin/v1/keys/" + id + "/enable", nil, "key.enable", func(o map[string]any) bool { return o["disabled"] == false }},
		{http.MethodPost, "/admin/v1/keys/" + id + "/rotate", nil, "key.rotate", func(o map[string]any) bool {
			k, _ := o["key"].(string)
			return strings.HasPrefix(k, keystore.SecretPrefix) && k != secret
		}},
		{http.MethodDelete, "/admin/v1/keys/" + id, nil, "key.delete", func(o map[string]any) bool { return o["deleted"] == true }},
	}
	for _, s := range steps {
		code, got, _ := f.do(s.method, s.path, adminSecret, s.body)
		if code != http.StatusOK || !s.check(got) {
			t.Fatalf("%s %s: %d %v", s.method, s.path, code, got)
		}
		page, _ := f.keys.Audit(context.Background(), keystore.AuditQuery{Target: id, Limit: 1})
		e := page.Entries[0]
		if e.Action != s.action || e.Actor != "key:ops" || e.Role != "admin" || e.Request == "" || len(e.Before) == 0 || len(e.After) == 0 {
			t.Fatalf("%s: audit entry %+v", s.action, e)
		}
		if s.action == "key.rotate" {
			if k, _ := got["key"].(string); strings.Contains(string(e.After), k) {
				t.Fatal("the audit entry holds the new secret")
			}
		}
	}
	// Every entry, from create to delete, newest first, and none holds a hash or a secret.
	page, _ := f.keys.Audit(context.Background(), keystore.AuditQuery{Target: id})
	if len(page.Entries) != 6 || page.Entries[5].Action != "key.create" || page.Entries[5].Before != nil {
		t.Fatalf("audit of %s: %d entries", id, len(page.Entries))
	}
	hexHash := strings.ToLower(sha(secret))
	for _, e := range page.Entries {
		for _, b := range [][]byte{e.Before, e.After} {
			s := strings.ToLower(string(b))
			if strings.Contains(s, "hash") || strings.Contains(s, "sha256") || strings.Contains(s, hexHash) || strings.Contains(s, keystore.SecretPrefix) {
				t.Fatalf("%s entry shows a hash or secret: %s", e.Action, b)
			}
		}
	}
	// A tombstone changes no more.
	if code, got, _ := f.do(http.MethodPost, "/admin/v1/keys/"+id+"/enable", adminSecret, nil); code != http.StatusConflict {
		t.Fatalf("enable a tombstone: %d %v", code, got)
	}
	if strings.Contains(f.logs.String(), secret) || strings.Contains(f.logs.String(), keystore.SecretPrefix) {
		t.Fatalf("a secret reached the log:\n%s", f.logs)
	}
}

func TestKeyVersionConflict(t *testing.T) {
	f := newFixture(t, "")
	_, made, _ := f.do(http.MethodPost, "/admin/v1/keys", adminSecret, map[string]any{"name": "a"})
	id := made["id"].(string)
	if code, _, _ := f.do(http.MethodPatch, "/admin/v1/keys/"+id, adminSecret, map[string]any{"owner": "x", "version": 1}); code != http.StatusOK {
		t.Fatalf("first patch: %d", code)
	}
	code, got, _ := f.do(http.MethodPatch, "/admin/v1/keys/"+id, adminSecret, map[string]any{"owner": "y", "version": 1})
	if code != http.StatusConflict || got["error"].(map[string]any)["type"] != "conflict_error" {
		t.Fatalf("stale patch: %d %v", code, got)
	}
	k, _ := f.keys.Get(context.Background(), id)
	if k.Owner != "x" {
		t.Fatalf("the stale patch wrote: %+v", k)
	}
}

func TestListKeysPagesAndFilters(t *testing.T) {
	f := newFixture(t, "")
	// Names with a dash, which no base62 key id holds: q searches ids too, and one of five
	// random ids held "a2" in about one run in eleven.
	for _, n := range []string{"a-1", "a-2", "b-1", "b-2", "b-3"} {
		team := n[:1]
		if code, got, _ := f.do(http.MethodPost, "/admin/v1/keys", adminSecret, map[string]any{"name": n, "team": team}); code != http.StatusCreated {
			t.Fatalf("create %s: %d %v", n, code, got)
		}
	}
	names := func(body map[string]any) (out []string) {
		for _, d := range body["data"].([]any) {
			out = append(out, d.(map[string]any)["name"].(string))
		}
		return out
	}
	_, all, _ := f.do(http.MethodGet, "/admin/v1/keys", viewerSecret, nil)
	if got := names(all); len(got) != 6 || got[0] != "app" || all["data"].([]any)[0].(map[string]any)["source"] != "config" {
		t.Fatalf("list: %v", got)
	}
	_, b, _ := f.do(http.MethodGet, "/admin/v1/keys?team=b&limit=2", viewerSecret, nil)
	if got := names(b); len(got) != 2 || b["next"] == "" {
		t.Fatalf("team b, page 1: %v next %v", got, b["next"])
	}
	_, b2, _ := f.do(http.MethodGet, "/admin/v1/keys?team=b&limit=2&after="+b["next"].(string), viewerSecret, nil)
	if got := names(b2); len(got) != 1 || b2["next"] != "" {
		t.Fatalf("team b, page 2: %v next %v", got, b2["next"])
	}
	_, q, _ := f.do(http.MethodGet, "/admin/v1/keys?q=A-2", viewerSecret, nil)
	if got := names(q); len(got) != 1 || got[0] != "a-2" {
		t.Fatalf("q=A-2: %v", got)
	}
}

func TestStoredKeyNameClashesWithConfigKey(t *testing.T) {
	f := newFixture(t, "")
	code, got, _ := f.do(http.MethodPost, "/admin/v1/keys", adminSecret, map[string]any{"name": "app"})
	if code != http.StatusConflict {
		t.Fatalf("%d %v", code, got)
	}
	page, _ := f.keys.List(context.Background(), keystore.Query{})
	if len(page.Keys) != 0 {
		t.Fatal("a clashing key was stored")
	}
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// guardConfig defines the guardrails a key may name.
const guardConfig = `guardrails:
  pii: {kind: local, mask: [email]}
  words: {kind: local, block: ["(?i)forbidden"]}
`

// TestKeyGuardrails: a stored key's guardrails are set on create and update, each a
// configured guardrail, on and mode filled as the config fills a config key's; null clears
// them (key_defaults' apply), [] adds none; anything else is a 400 naming what is wrong.
func TestKeyGuardrails(t *testing.T) {
	both := []any{map[string]any{"name": "pii", "on": "both", "mode": "block"}}
	for _, tc := range []struct {
		name       string
		guardrails any // the field's value; absent when "absent"
		want       int
		shown      any    // the guardrails the answer shows
		inMessage  string // 400: the message names it
	}{
		{"absent", "absent", http.StatusCreated, nil, ""},
		{"null", nil, http.StatusCreated, nil, ""},
		{"empty", []any{}, http.StatusCreated, []any{}, ""},
		{"defaults filled", []any{map[string]any{"name": "pii"}}, http.StatusCreated, both, ""},
		{"on and mode", []any{map[string]any{"name": "pii", "on": "input", "mode": "mask"}}, http.StatusCreated,
			[]any{map[string]any{"name": "pii", "on": "input", "mode": "mask"}}, ""},
		{"two", []any{map[string]any{"name": "pii"}, map[string]any{"name": "words", "on": "output"}}, http.StatusCreated,
			[]any{both[0], map[string]any{"name": "words", "on": "output", "mode": "block"}}, ""},
		{"unknown name", []any{map[string]any{"name": "nope"}}, http.StatusBadRequest, nil, `"nope"`},
		{"bad on", []any{map[string]any{"name": "pii", "on": "sideways"}}, http.StatusBadRequest, nil, "sideways"},
		{"bad mode", []any{map[string]any{"name": "pii", "mode": "shout"}}, http.StatusBadRequest, nil, "shout"},
		{"mask on a guardrail that masks nothing", []any{map[string]any{"name": "words", "mode": "mask"}}, http.StatusBadRequest, nil, "words masks nothing"},
		{"unknown field", []any{map[string]any{"name": "pii", "window": 3}}, http.StatusBadRequest, nil, "window"},
		{"not a list", "pii", http.StatusBadRequest, nil, "guardrails"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, guardConfig, "")
			body := map[string]any{"name": "k"}
			if tc.guardrails != "absent" {
				body["guardrails"] = tc.guardrails
			}
			code, got, _ := f.do(http.MethodPost, "/admin/v1/keys", adminSecret, body)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %v", code, tc.want, got)
			}
			if code != http.StatusCreated {
				e := got["error"].(map[string]any)
				if msg, _ := e["message"].(string); !strings.Contains(msg, tc.inMessage) {
					t.Errorf("message %q does not name %s", msg, tc.inMessage)
				}
				return
			}
			id := got["id"].(string)
			_, read, _ := f.do(http.MethodGet, "/admin/v1/keys/"+id, adminSecret, nil)
			for _, o := range []map[string]any{got, read} {
				if g, _ := json.Marshal(o["guardrails"]); string(g) != mustJSON(tc.shown) {
					t.Errorf("shows guardrails %s, want %s", g, mustJSON(tc.shown))
				}
			}
		})
	}
}

// TestKeyGuardrailsUpdate: a PATCH changes a key's guardrails or clears them, and one that
// names an unknown guardrail changes nothing.
func TestKeyGuardrailsUpdate(t *testing.T) {
	f := newFixtureWith(t, guardConfig, "")
	_, made, _ := f.do(http.MethodPost, "/admin/v1/keys", adminSecret, map[string]any{"name": "k"})
	id := made["id"].(string)
	steps := []struct {
		body  map[string]any
		want  int
		after string // the stored key's guardrails, as JSON
	}{
		{map[string]any{"guardrails": []any{map[string]any{"name": "words", "on": "input"}}}, http.StatusOK, `[{"Name":"words","On":"input","Mode":"block"}]`},
		{map[string]any{"guardrails": []any{map[string]any{"name": "gone"}}}, http.StatusBadRequest, `[{"Name":"words","On":"input","Mode":"block"}]`},
		{map[string]any{"owner": "ana"}, http.StatusOK, `[{"Name":"words","On":"input","Mode":"block"}]`},
		{map[string]any{"guardrails": []any{}}, http.StatusOK, `[]`},
		{map[string]any{"guardrails": nil}, http.StatusOK, `null`},
	}
	for i, s := range steps {
		code, got, _ := f.do(http.MethodPatch, "/admin/v1/keys/"+id, adminSecret, s.body)
		if code != s.want {
			t.Fatalf("step %d: %d %v", i, code, got)
		}
		k, _ := f.keys.Get(context.Background(), id)
		if g, _ := json.Marshal(k.Guardrails); string(g) != s.after {
			t.Fatalf("step %d: stored %s, want %s", i, g, s.after)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

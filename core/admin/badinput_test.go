package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/keystore"
)

// TestBadInputIsA400AndWritesNothing sends every operation what it must refuse, and checks
// the answer's shape and that the stores are as they were.
func TestBadInputIsA400AndWritesNothing(t *testing.T) {
	huge := `{"name":"a","description":"` + strings.Repeat("x", 70<<10) + `"}`
	long := strings.Repeat("y", 600)
	for _, tc := range []struct {
		method, path string // {id}: a stored key
		body         string
		param        string // the param the error names, when it names one
	}{
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","bogus":1}`, "bogus"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","rate":{"rpm":1}}`, "rpm"},
		{http.MethodPost, "/admin/v1/keys", `{"name":1}`, ""},
		{http.MethodPost, "/admin/v1/keys", `{}`, "name"},
		{http.MethodPost, "/admin/v1/keys", ``, ""},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a b"}`, "name"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"key_abc"}`, "name"},
		{http.MethodPost, "/admin/v1/keys", huge, ""},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","rate":{"requests_per_minute":-1}}`, "rate"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","budget":{"usd_per_day":1e12}}`, "budget.usd_per_day"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","rate":{"requests_per_minute":1e30}}`, ""},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","models":["["]}`, "models"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","per_model":{"[":{}}}`, "per_model"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","models":[` + strings.Repeat(`"m",`, 64) + `"m"]}`, "models"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","expires_at":"tomorrow"}`, "expires_at"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","expires_at":"2020-01-01T00:00:00Z"}`, "expires_at"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","role":"root"}`, "role"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","role":"team-admin"}`, "team"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","request_profile":"loose"}`, "request_profile"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","team":"a/b"}`, "team"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","owner":"x\u0000y"}`, "owner"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a","version":3}`, "version"},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a"} {"name":"b"}`, ""},
		{http.MethodPost, "/admin/v1/keys", `{"name":"a"`, ""},
		{http.MethodPost, "/admin/v1/keys", `[1,2]`, ""},
		{http.MethodGet, "/admin/v1/keys?limit=0", "", "limit"},
		{http.MethodGet, "/admin/v1/keys?limit=201", "", "limit"},
		{http.MethodGet, "/admin/v1/keys?limit=100000000000000000000", "", "limit"},
		{http.MethodGet, "/admin/v1/keys?limit=ten", "", "limit"},
		{http.MethodGet, "/admin/v1/keys?after=nope", "", "after"},
		{http.MethodGet, "/admin/v1/keys?deleted=yes", "", "deleted"},
		{http.MethodGet, "/admin/v1/keys?limt=5", "", "limt"},
		{http.MethodGet, "/admin/v1/keys?team=a&team=b", "", "team"},
		{http.MethodGet, "/admin/v1/keys?q=" + long, "", "q"},
		{http.MethodGet, "/admin/v1/keys/nope", "", "id"},
		{http.MethodGet, "/admin/v1/keys/key_short", "", "id"},
		{http.MethodGet, "/admin/v1/keys/key_0000000000000000000000-0", "", "id"},
		{http.MethodPatch, "/admin/v1/keys/nope", `{"owner":"x"}`, "id"},
		{http.MethodPatch, "/admin/v1/keys/{id}", `{"owner":"x","colour":"red"}`, "colour"},
		{http.MethodPatch, "/admin/v1/keys/{id}", `{"version":"one"}`, ""},
		{http.MethodPatch, "/admin/v1/keys/{id}", ``, ""},
		{http.MethodPatch, "/admin/v1/keys/{id}", `{"name":null}`, "name"},
		{http.MethodPatch, "/admin/v1/keys/{id}", `{"budget":{"usd_per_day":-5}}`, "budget.usd_per_day"},
		{http.MethodDelete, "/admin/v1/keys/nope", "", "id"},
		{http.MethodDelete, "/admin/v1/keys/{id}", `{"force":true}`, "force"},
		{http.MethodPost, "/admin/v1/keys/nope/disable", "", "id"},
		{http.MethodPost, "/admin/v1/keys/{id}/disable", `{"reason":"x"}`, "reason"},
		{http.MethodPost, "/admin/v1/keys/nope/enable", "", "id"},
		{http.MethodPost, "/admin/v1/keys/{id}/enable", `{"version":1,"x":1}`, "x"},
		{http.MethodPost, "/admin/v1/keys/nope/rotate", "", "id"},
		{http.MethodPost, "/admin/v1/keys/{id}/rotate", `nonsense`, ""},
		{http.MethodGet, "/admin/v1/usage?from=2026-13-01", "", "from"},
		{http.MethodGet, "/admin/v1/usage?to=yesterday", "", "to"},
		{http.MethodGet, "/admin/v1/usage?from=2026-12-02&to=2026-12-01", "", "from"},
		{http.MethodGet, "/admin/v1/usage?from=2025-01-01&to=2026-12-01", "", "from"},
		{http.MethodGet, "/admin/v1/usage?group=week", "", "group"},
		{http.MethodGet, "/admin/v1/usage?key=key_bad", "", "key"},
		{http.MethodGet, "/admin/v1/usage?key={id}&limit=5", "", "limit"},
		{http.MethodGet, "/admin/v1/usage?limit=999", "", "limit"},
		{http.MethodGet, "/admin/v1/usage?after=x", "", "after"},
		{http.MethodGet, "/admin/v1/usage?keys=x", "", "keys"},
		{http.MethodGet, "/admin/v1/routes?status=cooled", "", "status"},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/cool", `{"for":"forever"}`, "for"},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/cool", `{"for":"1s"}`, "for"},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/cool", `{"for":"800h"}`, "for"},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/cool", `{"reason":"` + long + `"}`, "reason"},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/cool", `{"until":"2027-01-01T00:00:00Z"}`, "until"},
		{http.MethodPost, "/admin/v1/routes/" + strings.Repeat("r", 600) + "/cool", ``, "id"},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/restore", `{"force":true}`, "force"},
		{http.MethodPost, "/admin/v1/routes/m%2Fecho/restore", `{"for":"-5m"}`, "for"},
		{http.MethodGet, "/admin/v1/audit?since=last-week", "", "since"},
		{http.MethodGet, "/admin/v1/audit?since=2026-12-02&until=2026-12-01", "", "until"},
		{http.MethodGet, "/admin/v1/audit?limit=500", "", "limit"},
		{http.MethodGet, "/admin/v1/audit?after=aud_x", "", "after"},
		{http.MethodGet, "/admin/v1/audit?actor=x", "", "actor"},
		{http.MethodGet, "/admin/v1/me?x=1", "", "x"},
	} {
		t.Run(tc.method+" "+clipName(tc.path)+" "+clipName(tc.body), func(t *testing.T) {
			f := newFixture(t, "")
			_, made, _ := f.do(http.MethodPost, "/admin/v1/keys", adminSecret, map[string]any{"name": "existing"})
			id := made["id"].(string)
			before, _ := f.keys.Audit(context.Background(), keystore.AuditQuery{})
			var body any
			if tc.body != "" {
				body = tc.body
			}
			code, got, _ := f.do(tc.method, strings.ReplaceAll(tc.path, "{id}", id), adminSecret, body)
			e, _ := got["error"].(map[string]any)
			if code != http.StatusBadRequest || e == nil || e["type"] != "invalid_request_error" || e["message"] == "" {
				t.Fatalf("status %d: %v", code, got)
			}
			if tc.param != "" && e["param"] != tc.param {
				t.Errorf("param %v, want %s (%v)", e["param"], tc.param, e["message"])
			}
			after, _ := f.keys.Audit(context.Background(), keystore.AuditQuery{})
			page, _ := f.keys.List(context.Background(), keystore.Query{Deleted: true})
			k, _ := f.keys.Get(context.Background(), id)
			states, _ := f.routes.List(context.Background())
			if len(after.Entries) != len(before.Entries) || len(page.Keys) != 1 || k.Version != 1 || k.Disabled || k.Deleted || len(states) != 0 {
				t.Fatalf("a refused call wrote: %d audit entries, %d keys, %+v, %d route states", len(after.Entries), len(page.Keys), k, len(states))
			}
		})
	}
}

func clipName(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

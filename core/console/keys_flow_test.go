package console

import (
	"context"
	"crypto/sha256"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// TestKeyChangesThroughTheForms makes and changes a key with the console's own forms, as a
// person would, and reads each change back from the key store: the admin API did it, with
// its audit entry.
func TestKeyChangesThroughTheForms(t *testing.T) {
	f := newFixture(t, "")
	c := f.browser()
	f.signIn(c, adminSecret)
	id, secret := f.createKey(c, url.Values{"name": {"svc"}, "team": {"web"}, "models": {"mock/*"}, "rpm": {"10"}})
	stored := func() (k struct {
		rpm              int64
		owner            string
		disabled, gone   bool
		hash             [32]byte
		version          int64
		models, perModel int
	}) {
		t.Helper()
		s, err := f.keys.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Rate != nil {
			k.rpm = s.Rate.RequestsPerMinute
		}
		k.owner, k.disabled, k.gone, k.hash, k.version, k.models, k.perModel = s.Owner, s.Disabled, s.Deleted, s.Hash, s.Version, len(s.Models), len(s.PerModel)
		return k
	}
	if k := stored(); k.hash != sha256.Sum256([]byte(secret)) || k.rpm != 10 || k.models != 1 {
		t.Fatalf("the created key: %+v", k)
	}
	page := f.page(c, "/console/keys/"+id)
	if strings.Contains(page, secret) {
		t.Fatal("the key's page shows its secret again")
	}
	post := func(op string, form url.Values) answer {
		t.Helper()
		action := "/console/keys/" + id + "/" + op
		tok := tokens(f.page(c, "/console/keys/"+id))[action]
		if tok == "" {
			t.Fatalf("the key's page has no %s form", op)
		}
		form.Set("csrf", tok)
		return f.post(c, action, form)
	}
	edit := url.Values{"owner": {"ann"}, "models": {"mock/*"}, "rpm": {"60"}, "tpm": {""}, "usd_day": {""}, "usd_month": {""},
		"per_model": {`{"mock/*": {"budget": {"usd_per_day": 1}}}`}, "expires_at": {""}, "description": {""}, "team": {"web"}, "version": {"1"}}
	if a := post("edit", edit); a.status != http.StatusSeeOther || !strings.Contains(a.location, "done=edit") {
		t.Fatalf("edit: %d %q\n%s", a.status, a.location, a.body)
	}
	if k := stored(); k.owner != "ann" || k.rpm != 60 || k.perModel != 1 || k.version != 2 {
		t.Errorf("after the edit: %+v", k)
	}
	// The same form again, drawn from version 1: someone changed the key since, a 409.
	edit.Set("owner", "bob")
	if a := post("edit", edit); a.status != http.StatusConflict {
		t.Errorf("an edit of an old version: %d, want 409\n%s", a.status, a.body)
	}
	if k := stored(); k.owner != "ann" {
		t.Errorf("the stale edit was written: %+v", k)
	}
	if a := post("disable", url.Values{}); a.status != http.StatusSeeOther || !stored().disabled {
		t.Errorf("disable: %d, stored %+v", a.status, stored())
	}
	if a := post("enable", url.Values{}); a.status != http.StatusSeeOther || stored().disabled {
		t.Errorf("enable: %d, stored %+v", a.status, stored())
	}
	a := post("rotate", url.Values{})
	m := secretRE.FindStringSubmatch(a.body)
	if a.status != http.StatusOK || m == nil || m[1] == secret || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("rotate: %d, no new secret shown (or cacheable)\n%s", a.status, a.body)
	}
	if k := stored(); k.hash != sha256.Sum256([]byte(m[1])) {
		t.Error("the stored hash is not the new secret's")
	}
	if a := post("delete", url.Values{}); a.status != http.StatusSeeOther || !stored().gone {
		t.Errorf("delete: %d, stored %+v", a.status, stored())
	}
	audit := f.page(c, "/console/audit?target="+id)
	for _, action := range []string{"key.create", "key.update", "key.disable", "key.enable", "key.rotate", "key.delete"} {
		if !strings.Contains(audit, action) {
			t.Errorf("the audit page does not list %s", action)
		}
	}
	if list := f.page(c, "/console/keys?q=sv"); strings.Contains(list, ">svc</a>") {
		t.Error("a deleted key is listed without include-deleted")
	}
	if list := f.page(c, "/console/keys?q=sv&deleted=true"); !strings.Contains(list, ">svc</a>") || !strings.Contains(list, "status-deleted") {
		t.Error("the deleted key is not listed with include-deleted")
	}
}

// TestBadFormsAnsweredClearly: a form the console cannot turn into an admin request is a
// 400 that says why, and one the admin API refuses shows the API's reason with its status.
func TestBadFormsAnsweredClearly(t *testing.T) {
	f := newFixture(t, "")
	c := f.browser()
	f.signIn(c, adminSecret)
	tok := tokens(f.page(c, "/console/keys"))["/console/keys"]
	for _, tc := range []struct {
		form   url.Values
		status int
		says   string
	}{
		{url.Values{"name": {"x"}, "rpm": {"-3"}}, http.StatusBadRequest, "Requests per minute must be"},
		{url.Values{"name": {"x"}, "per_model": {"nope"}}, http.StatusBadRequest, "Per-model limits must be JSON"},
		{url.Values{"name": {""}}, http.StatusBadRequest, "name"},
		{url.Values{"name": {"bad name!"}}, http.StatusBadRequest, "name"},
	} {
		tc.form.Set("csrf", tok)
		a := f.post(c, "/console/keys", tc.form)
		if a.status != tc.status || !strings.Contains(a.body, tc.says) {
			t.Errorf("%v: %d, want %d saying %q\n%s", tc.form, a.status, tc.status, tc.says, a.body)
		}
	}
	if n := len(f.storedKeys()); n != 0 {
		t.Errorf("%d keys written by bad forms", n)
	}
	for _, path := range []string{"/console/keys/not-an-id", "/console/keys/key_000000000000000000000000", "/console/keys/" + url.PathEscape("../../admin")} {
		if a := f.get(c, path); a.status != http.StatusBadRequest && a.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 400 or 404", path, a.status)
		}
	}
	if a := f.get(c, "/console/keys/key_000000000000000000000000?group=week"); a.status != http.StatusNotFound && a.status != http.StatusBadRequest {
		t.Errorf("an unknown key: %d", a.status)
	}
}

// TestTeamAdminWithinItsTeam: a stored key with role team-admin signs in, makes keys of its
// own team only (the form offers no team or role), may not grant more than it has, and
// draws no route forms; its session carries its current limits from the store.
func TestTeamAdminWithinItsTeam(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	secret, hash := keystore.NewSecret()
	lead := &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: "web-lead", Hash: hash, Models: []string{"mock/*"},
		KeyLimits: config.KeyLimits{Budget: &config.Budget{USDPerDay: 10}}},
		Team: "web", Role: keystore.RoleTeamAdmin, Created: f.clock.Now(), Updated: f.clock.Now(), Version: 1}
	if err := f.keys.Create(ctx, lead, &keystore.Entry{ID: keystore.NewEntryID(), Time: f.clock.Now(), Action: "key.create", Target: lead.ID}); err != nil {
		t.Fatal(err)
	}
	c := f.browser()
	f.signIn(c, secret)
	page := f.page(c, "/console/keys")
	if strings.Contains(page, `id="team"`) || strings.Contains(page, `id="role"`) {
		t.Error("a team-admin is offered the team or role fields")
	}
	id, _ := f.createKey(c, url.Values{"name": {"web-app"}, "models": {"mock/echo"}, "usd_day": {"5"}})
	k, err := f.keys.Get(ctx, id)
	if err != nil || k.Team != "web" {
		t.Fatalf("the team-admin's key: %+v, %v", k, err)
	}
	tok := tokens(f.page(c, "/console/keys"))["/console/keys"]
	if a := f.post(c, "/console/keys", url.Values{"csrf": {tok}, "name": {"greedy"}, "models": {"mock/echo"}, "usd_day": {"50"}}); a.status != http.StatusForbidden && a.status != http.StatusBadRequest {
		t.Errorf("a budget above its own: %d\n%s", a.status, a.body)
	}
	if page := f.page(c, "/console/routes"); strings.Count(page, `method="post"`) != 1 {
		t.Error("a team-admin is offered route changes")
	}
}

// TestKeysPageByPage: more keys than a page holds are listed a page at a time, the next
// page's link carrying the search, and every key appears once.
func TestKeysPageByPage(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	const n = 53
	for i := range n {
		_, hash := keystore.NewSecret()
		k := &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: fmt.Sprintf("svc-%02d", i), Hash: hash}, Created: f.clock.Now(), Updated: f.clock.Now(), Version: 1}
		if err := f.keys.Create(ctx, k, &keystore.Entry{ID: keystore.NewEntryID(), Time: f.clock.Now(), Action: "key.create", Target: k.ID}); err != nil {
			t.Fatal(err)
		}
	}
	c := f.browser()
	f.signIn(c, adminSecret)
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	seen := map[string]int{}
	path := "/console/keys?q=svc"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than keys")
		}
		page := f.page(c, path)
		for _, m := range regexp.MustCompile(`>(svc-\d\d)</a>`).FindAllStringSubmatch(page, -1) {
			seen[m[1]]++
		}
		path = ""
		if m := next.FindStringSubmatch(page); m != nil {
			path = html.UnescapeString(m[1])
			if !strings.Contains(path, "q=svc") {
				t.Errorf("the next page's link drops the search: %s", path)
			}
		}
	}
	if len(seen) != n {
		t.Errorf("%d keys listed, want %d", len(seen), n)
	}
	for name, times := range seen {
		if times != 1 {
			t.Errorf("%s listed %d times", name, times)
		}
	}
	if a := f.get(c, "/console/static/"); a.status != http.StatusNotFound {
		t.Errorf("the static directory is listed: %d", a.status)
	}
}

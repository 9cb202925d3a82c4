package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// TestChangeNeedsItsOwnFormToken: a change whose form token is missing, wrong, expired,
// another form's or another session's is refused with a 403 before the admin API is
// called: no key is written, no audit entry.
func TestChangeNeedsItsOwnFormToken(t *testing.T) {
	f := newFixture(t, "")
	c := f.browser()
	f.signIn(c, adminSecret)
	page := f.page(c, "/console/keys")
	good := tokens(page)["/console/keys"]
	logout := tokens(page)["/console/logout"]
	other := f.browser()
	f.signIn(other, adminSecret)
	otherSession := tokens(f.page(other, "/console/keys"))["/console/keys"]
	expired := f.console.sign.formToken(f.sessionOf(c).SID, "/console/keys", f.clock.Now().Add(-formTTL-time.Second))
	for _, tc := range []struct{ name, token string }{
		{"none", ""},
		{"wrong", "1999999999.bm90IGEgdG9rZW4"},
		{"expired", expired},
		{"another form's", logout},
		{"another session's", otherSession},
		{"this one with its expiry moved", "9" + good[1:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"name": {"leak-" + strings.ReplaceAll(tc.name, " ", "-")}}
			if tc.token != "" {
				form.Set("csrf", tc.token)
			}
			a := f.post(c, "/console/keys", form)
			if a.status != http.StatusForbidden {
				t.Errorf("%d, want 403\n%s", a.status, a.body)
			}
			if n := len(f.storedKeys()); n != 0 {
				t.Errorf("%d keys written", n)
			}
			if n := f.auditCount(); n != 0 {
				t.Errorf("%d audit entries written", n)
			}
		})
	}
	// The same form with its own token goes through: the refusals above were the token's.
	if a := f.post(c, "/console/keys", url.Values{"csrf": {good}, "name": {"fine"}}); a.status != http.StatusCreated {
		t.Fatalf("with its own token: %d\n%s", a.status, a.body)
	}
	if n := len(f.storedKeys()); n != 1 {
		t.Errorf("%d keys, want the one made with a good token", n)
	}
}

// TestCrossSitePostRefused: a form posted from another site is refused whatever it
// carries, as the browser says where it came from.
func TestCrossSitePostRefused(t *testing.T) {
	f := newFixture(t, "")
	c := f.browser()
	f.signIn(c, adminSecret)
	tok := tokens(f.page(c, "/console/keys"))["/console/keys"]
	form := url.Values{"csrf": {tok}, "name": {"x"}}
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "https://evil.example"},
	} {
		if a := f.do(c, http.MethodPost, "/console/keys", form, h...); a.status != http.StatusForbidden {
			t.Errorf("%v: %d, want 403", h, a.status)
		}
	}
	if n := len(f.storedKeys()); n != 0 {
		t.Errorf("%d keys written", n)
	}
}

// TestSessionCookieRefusedWhenTamperedOrExpired: a session cookie whose payload or
// signature was changed, or that has expired, signs nobody in: a page sends the browser
// to the sign-in page, a change is a 403.
func TestSessionCookieRefusedWhenTamperedOrExpired(t *testing.T) {
	f := newFixture(t, "")
	u, _ := url.Parse(f.srv.URL + "/console/")
	signedIn := func() (*http.Client, *http.Cookie, string) {
		c := f.browser()
		f.signIn(c, viewerSecret)
		tok := tokens(f.page(c, "/console/keys"))["/console/logout"]
		for _, ck := range c.Jar.Cookies(u) {
			if ck.Name == sessionCookie {
				return c, ck, tok
			}
		}
		t.Fatal("no session cookie")
		return nil, nil, ""
	}
	set := func(c *http.Client, v string) {
		c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: v, Path: "/console"}})
	}
	for _, tc := range []struct {
		name   string
		change func(c *http.Client, ck *http.Cookie)
	}{
		{"role raised in the payload", func(c *http.Client, ck *http.Cookie) {
			_, sig, _ := strings.Cut(ck.Value, ".")
			var s Session
			if err := open(f.console.sign.session, ck.Value, &s); err != nil {
				return // already changed once: keep the forged value
			}
			s.Role = "admin"
			b, _ := json.Marshal(s)
			set(c, base64.RawURLEncoding.EncodeToString(b)+"."+sig)
		}},
		{"signature cut", func(c *http.Client, ck *http.Cookie) { set(c, ck.Value[:len(ck.Value)-3]) }},
		{"expired", func(*http.Client, *http.Cookie) { f.clock.Add(SessionTTL + time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ck, tok := signedIn()
			tc.change(c, ck)
			a := f.get(c, "/console/keys")
			if a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/console/signin") {
				t.Errorf("GET with the cookie: %d %q, want 303 to the sign-in page", a.status, a.location)
			}
			tc.change(c, ck) // the refusal cleared it
			if a := f.post(c, "/console/logout", url.Values{"csrf": {tok}}); a.status != http.StatusForbidden {
				t.Errorf("POST with the cookie: %d, want 403", a.status)
			}
		})
	}
}

// TestViewerSeesNoChangeForms: a viewer's pages draw no change form (only sign-out), and
// its POSTs, even with a valid token, are refused by the admin API's role check: 403,
// nothing written.
func TestViewerSeesNoChangeForms(t *testing.T) {
	f := newFixture(t, "")
	ops := f.browser()
	f.signIn(ops, adminSecret)
	id, _ := f.createKey(ops, url.Values{"name": {"app"}})
	before := f.auditCount()

	c := f.browser()
	f.signIn(c, viewerSecret)
	for _, path := range []string{"/console/keys", "/console/keys/" + id, "/console/routes", "/console/audit"} {
		page := f.page(c, path)
		for action := range tokens(page) {
			if action != "/console/logout" {
				t.Errorf("%s draws a change form for a viewer: %s", path, action)
			}
		}
		if n := strings.Count(page, `method="post"`); n != 1 {
			t.Errorf("%s has %d POST forms, want only sign-out", path, n)
		}
	}
	sid := f.sessionOf(c).SID
	for _, tc := range []struct {
		action string
		form   url.Values
	}{
		{"/console/keys", url.Values{"name": {"viewer-made"}}},
		{"/console/keys/" + id + "/disable", url.Values{}},
		{"/console/keys/" + id + "/rotate", url.Values{}},
		{"/console/keys/" + id + "/delete", url.Values{}},
		{"/console/keys/" + id + "/edit", url.Values{"owner": {"me"}, "version": {"1"}}},
		{"/console/routes/cool", url.Values{"id": {"mock/echo/0"}, "for": {"15m"}}},
	} {
		tc.form.Set("csrf", f.console.sign.formToken(sid, tc.action, f.clock.Now()))
		if a := f.post(c, tc.action, tc.form); a.status != http.StatusForbidden {
			t.Errorf("viewer POST %s: %d, want 403\n%s", tc.action, a.status, a.body)
		}
	}
	k, err := f.keys.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if k.Disabled || k.Deleted || k.Owner != "" || k.Version != 1 || len(f.storedKeys()) != 1 {
		t.Errorf("a viewer's POST changed the store: %+v", k)
	}
	if n := f.auditCount(); n != before {
		t.Errorf("%d audit entries written by a viewer", n-before)
	}
}

// TestRevokedKeySessionEnds: a session signed in with a stored key ends on the first
// request after the key is deleted, disabled or loses its role; the cookie alone is not
// enough.
func TestRevokedKeySessionEnds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		revoke func(k *keystore.Key)
	}{
		{"deleted", func(k *keystore.Key) { k.Deleted = true }},
		{"disabled", func(k *keystore.Key) { k.Disabled = true }},
		{"role taken away", func(k *keystore.Key) { k.Role = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			ctx := context.Background()
			secret, hash := keystore.NewSecret()
			k := &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: "robot", Hash: hash}, Role: keystore.RoleAdmin,
				Created: f.clock.Now(), Updated: f.clock.Now(), Version: 1}
			if err := f.keys.Create(ctx, k, &keystore.Entry{ID: keystore.NewEntryID(), Time: f.clock.Now(), Action: "key.create", Target: k.ID}); err != nil {
				t.Fatal(err)
			}
			c := f.browser()
			f.signIn(c, secret)
			f.page(c, "/console/keys")
			up := k.Clone()
			tc.revoke(up)
			up.Version++
			if err := f.keys.Update(ctx, up, &keystore.Entry{ID: keystore.NewEntryID(), Time: f.clock.Now(), Action: "key.update", Target: k.ID}); err != nil {
				t.Fatal(err)
			}
			if a := f.get(c, "/console/keys"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/console/signin") {
				t.Errorf("after the key was %s: %d %q, want 303 to the sign-in page", tc.name, a.status, a.location)
			}
		})
	}
}

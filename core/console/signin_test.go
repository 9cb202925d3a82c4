package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// TestSessionCookieAttributes: the cookie the sign-in sets is HttpOnly, Secure,
// SameSite=Lax, scoped to /console, and lasts SessionTTL; it holds no key.
func TestSessionCookieAttributes(t *testing.T) {
	f := newFixture(t, "")
	c := f.browser()
	page := f.get(c, "/console/signin")
	a := f.post(c, "/console/signin", url.Values{"csrf": {tokens(page.body)["/console/signin"]}, "key": {adminSecret}})
	var got *http.Cookie
	for _, ck := range (&http.Response{Header: a.header}).Cookies() {
		if ck.Name == sessionCookie {
			got = ck
		}
	}
	if got == nil {
		t.Fatalf("no session cookie set: %v", a.header)
	}
	raw := strings.Join(a.header.Values("Set-Cookie"), "\n")
	for _, want := range []string{"HttpOnly", "Secure", "SameSite=Lax", "Path=/console", "Max-Age=28800"} {
		if !strings.Contains(raw, want) {
			t.Errorf("Set-Cookie lacks %s: %s", want, raw)
		}
	}
	if strings.Contains(got.Value, adminSecret) || strings.Contains(raw, sha(adminSecret)) {
		t.Error("the session cookie carries the admin key")
	}
}

// TestSignInFormNeedsItsToken: the sign-in form is bound to the browser that drew it, so
// another site cannot sign a browser in with a key of its choosing.
func TestSignInFormNeedsItsToken(t *testing.T) {
	f := newFixture(t, "")
	victim := f.browser()
	attacker := f.browser()
	tok := tokens(f.get(attacker, "/console/signin").body)["/console/signin"]
	f.get(victim, "/console/signin")
	for _, form := range []url.Values{
		{"key": {adminSecret}},
		{"key": {adminSecret}, "csrf": {tok}},
	} {
		if a := f.post(victim, "/console/signin", form); a.status != http.StatusForbidden {
			t.Errorf("%v: %d, want 403", form, a.status)
		}
	}
	if a := f.get(victim, "/console/keys"); a.status != http.StatusSeeOther {
		t.Errorf("the victim is signed in: %d", a.status)
	}
}

// TestSignInRefusals: a wrong key, a gateway key without a role, a blank form: the page
// again, with the reason, and no session.
func TestSignInRefusals(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	secret, hash := keystore.NewSecret()
	k := &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: "plain", Hash: hash}, Created: f.clock.Now(), Updated: f.clock.Now(), Version: 1}
	if err := f.keys.Create(ctx, k, &keystore.Entry{ID: keystore.NewEntryID(), Time: f.clock.Now(), Action: "key.create", Target: k.ID}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key    string
		status int
	}{
		{"sk-nobody-knows-this", http.StatusUnauthorized},
		{secret, http.StatusUnauthorized},
		{"", http.StatusBadRequest},
	} {
		c := f.browser()
		tok := tokens(f.get(c, "/console/signin").body)["/console/signin"]
		a := f.post(c, "/console/signin", url.Values{"csrf": {tok}, "key": {tc.key}})
		if a.status != tc.status || !strings.Contains(a.body, `role="alert"`) {
			t.Errorf("key %q: %d, want %d with the reason\n%s", tc.key, a.status, tc.status, a.body)
		}
		if strings.Contains(a.body, tc.key) && tc.key != "" {
			t.Errorf("the page shows the key back")
		}
		if a := f.get(c, "/console/keys"); a.status != http.StatusSeeOther {
			t.Errorf("key %q signed in", tc.key)
		}
	}
}

package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/oidcfake"
)

const clientID = "fngate-console-test"

// oidcFixture is a console whose identity provider is a local issuer (authorization code
// with PKCE, ID tokens signed by its JWKS).
func oidcFixture(t *testing.T) (*fixture, *oidcfake.Issuer) {
	t.Helper()
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: clientID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	f := newFixtureOIDC(t, "", `{issuer: "`+iss.URL+`", client_id: `+clientID+`, roles: {admin: {emails: [ops@example.com]}, viewer: {groups: [watchers]}}}`)
	return f, iss
}

// startLogin presses the sign-in page's single sign-on button and returns the identity
// provider's authorization URL the console sends the browser to.
func (f *fixture) startLogin(c *http.Client) *url.URL {
	f.t.Helper()
	page := f.page(c, "/console/signin")
	tok := tokens(page)["/console/login"]
	if tok == "" {
		f.t.Fatalf("the sign-in page has no single sign-on button:\n%s", page)
	}
	a := f.post(c, "/console/login", url.Values{"csrf": {tok}, "return": {"/console/audit"}})
	if a.status != http.StatusSeeOther {
		f.t.Fatalf("sign-in start: %d\n%s", a.status, a.body)
	}
	u, err := url.Parse(a.location)
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// authorize follows an authorization URL at the issuer (which signs its user in at once)
// and returns the console callback it redirects to.
func (f *fixture) authorize(u *url.URL) string {
	f.t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u.String())
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.Contains(back, "/console/callback") {
		f.t.Fatalf("authorize: %d %q", resp.StatusCode, back)
	}
	// The callback is the console's: the test's server, whatever host the URL was built for.
	cb, _ := url.Parse(back)
	return cb.RequestURI()
}

// TestOIDCSignIn: the button sends the browser to the issuer with a PKCE challenge (S256),
// a state and a nonce; the way back signs the person in with the role the admin API maps
// their claims to, and lands where they were going.
func TestOIDCSignIn(t *testing.T) {
	f, _ := oidcFixture(t)
	c := f.browser()
	u := f.startLogin(c)
	q := u.Query()
	for _, p := range []string{"state", "nonce", "code_challenge"} {
		if len(q.Get(p)) < 22 {
			t.Errorf("the authorization request's %s is %q: want a random value", p, q.Get(p))
		}
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("client_id") != clientID || !strings.Contains(q.Get("scope"), "openid") {
		t.Errorf("the authorization request: %v", q)
	}
	a := f.get(c, f.authorize(u))
	if a.status != http.StatusSeeOther || a.location != "/console/audit" {
		t.Fatalf("callback: %d %q\n%s", a.status, a.location, a.body)
	}
	page := f.page(c, "/console/keys")
	if !strings.Contains(page, "ops@example.com") || !strings.Contains(page, `id="create"`) {
		t.Errorf("signed in, the keys page does not show ops@example.com as an admin:\n%s", page)
	}
	s := f.sessionOf(c)
	if s.Kind != "oidc" || s.Role != "admin" || !strings.HasPrefix(s.ID, "oidc:"+strings.TrimSuffix(u.Scheme+"://"+u.Host, "/")) {
		t.Errorf("session %+v", s)
	}
}

// TestOIDCSignInRefused: each way a sign-in can go wrong ends with no session: a state
// changed on the way, a callback without the login cookie (another browser), a nonce the
// ID token does not carry, a PKCE challenge the verifier does not match, a code used
// twice, the provider's refusal, a person with no role.
func TestOIDCSignInRefused(t *testing.T) {
	f, iss := oidcFixture(t)
	for _, tc := range []struct {
		name   string
		run    func(c *http.Client) answer
		status int
	}{
		{"state changed", func(c *http.Client) answer {
			cb, _ := url.Parse(f.authorize(f.startLogin(c)))
			q := cb.Query()
			q.Set("state", "x"+q.Get("state")[1:])
			cb.RawQuery = q.Encode()
			return f.get(c, cb.String())
		}, http.StatusBadRequest},
		{"another browser's callback", func(c *http.Client) answer {
			return f.get(f.browser(), f.authorize(f.startLogin(c)))
		}, http.StatusBadRequest},
		{"nonce not the one sent", func(c *http.Client) answer {
			u := f.startLogin(c)
			q := u.Query()
			q.Set("nonce", "another-nonce-another-nonce")
			u.RawQuery = q.Encode()
			return f.get(c, f.authorize(u))
		}, http.StatusUnauthorized},
		{"PKCE challenge not the verifier's", func(c *http.Client) answer {
			u := f.startLogin(c)
			q := u.Query()
			q.Set("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
			u.RawQuery = q.Encode()
			return f.get(c, f.authorize(u))
		}, http.StatusUnauthorized},
		{"code used twice", func(c *http.Client) answer {
			cb := f.authorize(f.startLogin(c))
			if a := f.get(c, cb); a.status != http.StatusSeeOther {
				t.Fatalf("first use: %d", a.status)
			}
			f.post(c, "/console/logout", url.Values{"csrf": {tokens(f.page(c, "/console/keys"))["/console/logout"]}})
			return f.get(c, cb)
		}, http.StatusBadRequest},
		{"the provider refuses", func(c *http.Client) answer {
			iss.SetUser(nil)
			defer iss.SetUser(oidcfake.Claims{"sub": "user-1", "email": "ops@example.com", "email_verified": true})
			return f.get(c, f.authorize(f.startLogin(c)))
		}, http.StatusUnauthorized},
		{"no role for this person", func(c *http.Client) answer {
			iss.SetUser(oidcfake.Claims{"sub": "user-2", "email": "someone@example.org", "email_verified": true})
			defer iss.SetUser(oidcfake.Claims{"sub": "user-1", "email": "ops@example.com", "email_verified": true})
			return f.get(c, f.authorize(f.startLogin(c)))
		}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := f.browser()
			if a := tc.run(c); a.status != tc.status {
				t.Errorf("%d, want %d\n%s", a.status, tc.status, a.body)
			}
			if a := f.get(c, "/console/keys"); a.status != http.StatusSeeOther {
				t.Errorf("signed in after all: %d", a.status)
			}
		})
	}
}

// TestViewerByGroup: a person whose groups claim names a viewer group signs in as a viewer.
func TestViewerByGroup(t *testing.T) {
	f, iss := oidcFixture(t)
	iss.SetUser(oidcfake.Claims{"sub": "user-3", "email": "eve@example.org", "groups": []string{"watchers"}})
	c := f.browser()
	if a := f.get(c, f.authorize(f.startLogin(c))); a.status != http.StatusSeeOther {
		t.Fatalf("callback: %d\n%s", a.status, a.body)
	}
	if s := f.sessionOf(c); s.Role != "viewer" || s.Name != "eve@example.org" {
		t.Errorf("session %+v, want eve as a viewer", s)
	}
	if page := f.page(c, "/console/keys"); strings.Contains(page, `id="create"`) {
		t.Error("a viewer is offered the create form")
	}
}

// TestNoSecretInLogs: signing in with a key and with single sign-on, making and rotating a
// key, and failing to sign in leave no admin key, key secret, ID token or session cookie in
// any log line of the console or the admin API.
func TestNoSecretInLogs(t *testing.T) {
	f, _ := oidcFixture(t)
	c := f.browser()
	f.signIn(c, adminSecret)
	id, secret := f.createKey(c, url.Values{"name": {"logged"}})
	tok := tokens(f.page(c, "/console/keys/"+id))["/console/keys/"+id+"/rotate"]
	rotated := secretRE.FindStringSubmatch(f.post(c, "/console/keys/"+id+"/rotate", url.Values{"csrf": {tok}}).body)
	if rotated == nil {
		t.Fatal("rotate showed no secret")
	}
	other := f.browser()
	page := f.get(other, "/console/signin")
	f.post(other, "/console/signin", url.Values{"csrf": {tokens(page.body)["/console/signin"]}, "key": {"sk-wrong-" + adminSecret}})
	sso := f.browser()
	u := f.startLogin(sso)
	f.get(sso, f.authorize(u))
	f.page(sso, "/console/keys")
	cookies := []string{}
	for _, b := range []*http.Client{c, sso} {
		cu, _ := url.Parse(f.srv.URL + "/console/")
		for _, ck := range b.Jar.Cookies(cu) {
			cookies = append(cookies, ck.Value)
		}
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "signed in") {
		t.Fatalf("the test read no log lines:\n%s", logs)
	}
	for _, s := range append([]string{adminSecret, secret, rotated[1], u.Query().Get("nonce"), u.Query().Get("state")}, cookies...) {
		if s != "" && strings.Contains(logs, s) {
			t.Errorf("a log line carries %.12s...", s)
		}
	}
	if strings.Contains(logs, "eyJ") {
		t.Error("a log line carries what looks like a JWT")
	}
}

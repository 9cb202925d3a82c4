package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// Secrets of the test's admin principals.
const (
	adminSecret  = "sk-admin-console-test-0123456789"
	viewerSecret = "sk-viewer-console-test-0123456789"
	// sessionKey is base64 of 32 bytes.
	sessionKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// testConfig is the test's config: two admin keys, a priced mock model, a memory key
// store; oidc, when not empty, is the admin.oidc section (in flow style).
func testConfig(t testing.TB, extra, oidc string) *config.Config {
	t.Helper()
	if oidc != "" {
		oidc = "  oidc: " + oidc + "\n"
	}
	y := `
key_store: {store: memory}
admin:
  session_key: "` + sessionKey + `"
  keys:
    - {name: ops, sha256: "` + sha(adminSecret) + `", role: admin}
    - {name: watcher, sha256: "` + sha(viewerSecret) + `", role: viewer}
` + oidc + `connections:
  m: {kind: mock}
models:
  mock/echo:
    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}
    routes: [{connection: m, model: echo}]
` + extra
	cfg, err := config.Parse(context.Background(), []byte(y), config.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// clock is a settable clock shared by the admin API and the console.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a console over the real admin API on memory stores, served over TLS (the
// cookies are Secure), with a clock the test moves.
type fixture struct {
	t       testing.TB
	cfg     *config.Config
	keys    *keystore.Memory
	history *counters.MemoryHistory
	console *Console
	srv     *httptest.Server
	clock   *clock
	logs    *gatewaytest.LogBuffer // the admin API's and the console's log lines
}

func newFixture(t testing.TB, extra string) *fixture { return newFixtureOIDC(t, extra, "") }

func newFixtureOIDC(t testing.TB, extra, oidc string) *fixture {
	t.Helper()
	cfg := testConfig(t, extra, oidc)
	f := &fixture{t: t, cfg: cfg, keys: keystore.NewMemory(), history: counters.NewMemoryHistory(),
		clock: &clock{t: time.Now().UTC().Truncate(time.Second)}}
	f.logs = &gatewaytest.LogBuffer{}
	quiet := f.logs.Logger()
	api, err := admin.New(cfg, admin.Options{Keys: f.keys, History: f.history, Now: f.clock.Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	f.console, err = New(api, cfg, Options{Keys: f.keys, Now: f.clock.Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewTLSServer(f.console)
	t.Cleanup(f.srv.Close)
	return f
}

// browser is a client with its own cookie jar that does not follow redirects, so each
// answer's status and Location are the test's to check.
func (f *fixture) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	c := *f.srv.Client() // a copy: the server's client is one, shared
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

type answer struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (f *fixture) do(c *http.Client, method, path string, form url.Values, header ...string) answer {
	f.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b), resp.Header.Get("Location"), resp.Header}
}

func (f *fixture) get(c *http.Client, path string) answer { return f.do(c, http.MethodGet, path, nil) }

func (f *fixture) post(c *http.Client, path string, form url.Values) answer {
	return f.do(c, http.MethodPost, path, form)
}

var formRE = regexp.MustCompile(`<form method="post" action="([^"]+)"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`)

// tokens returns the form tokens of a page's POST forms by action.
func tokens(page string) map[string]string {
	out := map[string]string{}
	for _, m := range formRE.FindAllStringSubmatch(page, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// signIn signs c in with an admin key through the sign-in page's form.
func (f *fixture) signIn(c *http.Client, key string) {
	f.t.Helper()
	page := f.get(c, "/console/signin")
	tok := tokens(page.body)["/console/signin"]
	if tok == "" {
		f.t.Fatalf("the sign-in page has no key form:\n%s", page.body)
	}
	a := f.post(c, "/console/signin", url.Values{"csrf": {tok}, "key": {key}})
	if a.status != http.StatusSeeOther || a.location != "/console/keys" {
		f.t.Fatalf("sign-in with a key: %d %q, want 303 to /console/keys\n%s", a.status, a.location, a.body)
	}
}

// page GETs path and fails the test unless it is a 200.
func (f *fixture) page(c *http.Client, path string) string {
	f.t.Helper()
	a := f.get(c, path)
	if a.status != http.StatusOK {
		f.t.Fatalf("GET %s: %d (Location %q)\n%s", path, a.status, a.location, a.body)
	}
	return a.body
}

var secretRE = regexp.MustCompile(`<code id="secret" tabindex="0">(sk-fngate-[0-9A-Za-z]+)</code>`)
var idRE = regexp.MustCompile(`<code id="key-id">(key_[0-9A-Za-z]+)</code>`)

// createKey creates a key through the keys page's form and returns its id and secret.
func (f *fixture) createKey(c *http.Client, form url.Values) (id, secret string) {
	f.t.Helper()
	form.Set("csrf", tokens(f.page(c, "/console/keys"))["/console/keys"])
	a := f.post(c, "/console/keys", form)
	if a.status != http.StatusCreated {
		f.t.Fatalf("create: %d\n%s", a.status, a.body)
	}
	s, i := secretRE.FindStringSubmatch(a.body), idRE.FindStringSubmatch(a.body)
	if s == nil || i == nil {
		f.t.Fatalf("the answer of create shows no secret and id:\n%s", a.body)
	}
	return i[1], s[1]
}

// storedKeys is every key in the store, tombstones included.
func (f *fixture) storedKeys() []*keystore.Key {
	f.t.Helper()
	p, err := f.keys.List(context.Background(), keystore.Query{Deleted: true, Limit: keystore.MaxPage})
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Keys
}

func (f *fixture) auditCount() int {
	f.t.Helper()
	p, err := f.keys.Audit(context.Background(), keystore.AuditQuery{Limit: keystore.MaxPage})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(p.Entries)
}

// sessionOf reads the session c holds (the test's view of the signed cookie).
func (f *fixture) sessionOf(c *http.Client) *Session {
	f.t.Helper()
	u, _ := url.Parse(f.srv.URL + "/console/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			var s Session
			if err := open(f.console.sign.session, ck.Value, &s); err != nil {
				f.t.Fatal(err)
			}
			return &s
		}
	}
	f.t.Fatal("no session cookie")
	return nil
}

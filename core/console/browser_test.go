package console

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/internal/oidcfake"
)

// findBrowser is the Chromium on PATH, or "" (the test skips, unless
// FNGATE_REQUIRE_BROWSER=1 says CI installed one and it must run).
func findBrowser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FNGATE_REQUIRE_BROWSER") == "1" {
		t.Fatal("FNGATE_REQUIRE_BROWSER=1 but no chromium, chromium-browser or google-chrome is on PATH")
	}
	t.Skip("no Chromium on PATH (chromium, chromium-browser, google-chrome): the console's browser test needs one (apt-get install chromium)")
	return ""
}

// artifacts is where screenshots go: $FNGATE_ARTIFACTS, else a temporary directory, logged.
func artifacts(t *testing.T) string {
	dir := os.Getenv("FNGATE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, "console")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("console screenshots in %s", dir)
	return dir
}

// stack is what functions/local serves, wired in process on memory stores: the gateway,
// the admin API under /admin/v1/ and the console under /console, on one loopback address.
type stack struct {
	url     string // http://localhost:<port>: Chromium takes Secure cookies from localhost
	keys    *keystore.Memory
	history *counters.MemoryHistory
}

func startStack(t *testing.T, extra, oidc string) *stack {
	t.Helper()
	cfg := testConfig(t, extra, oidc)
	s := &stack{keys: keystore.NewMemory(), history: counters.NewMemoryHistory()}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := providers.Registry{}
	mock.Register(reg)
	gw, err := gateway.New(cfg, gateway.Options{Registry: reg, Logger: quiet, KeyStore: s.keys,
		Counters: counters.NewMemory(), History: s.history})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	api, err := admin.New(cfg, admin.Options{Keys: s.keys, History: s.history, Routes: routestate.NewMemory(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	con, err := New(api, cfg, Options{Keys: s.keys, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(admin.Prefix, api)
	mux.Handle(Prefix, con)
	mux.Handle(Prefix+"/", con)
	mux.Handle("/", gw)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.url = fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	return s
}

// chat calls /v1/chat/completions with secret and returns the status.
func (s *stack) chat(t *testing.T, secret string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"mock/echo","max_completion_tokens":50,"messages":[{"role":"user","content":"hello from the browser test"}]}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
		t.Logf("chat: %d %s", resp.StatusCode, b)
	}
	return resp.StatusCode
}

func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 900))
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root (a CI container).
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancel)
	// The first run starts the browser, and lives as long as it: no timeout on it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	// Accept every confirm() the console asks (disable, rotate, delete).
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx
}

// stepTimeout bounds each step, so a page that never shows what a step waits for fails
// the test with what the browser shows instead of hanging it.
const stepTimeout = 30 * time.Second

// do runs the steps, failing the test with the page the browser shows on an error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		failAt(t, ctx, what, err)
	}
}

// get runs one action that returns a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		failAt(t, ctx, what, err)
	}
	return v
}

func failAt(t *testing.T, ctx context.Context, what string, err error) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(sctx, chromedp.Location())
	body, _ := chromedp.Run(sctx, chromedp.OuterHTML(chromedp.CSS("body")))
	t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, body)
}

// shot saves a full-page screenshot (PNG) of what the browser shows as name.png in dir.
func shot(t *testing.T, ctx context.Context, dir, name string) []byte {
	t.Helper()
	b := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBrowserKeyLifecycle drives the console in headless Chromium: sign in with an admin
// key, create a key and read its secret from the page, call the gateway with it, see the
// request in the key's usage chart, delete the key and see the next call refused (401).
func TestBrowserKeyLifecycle(t *testing.T) {
	chrome := findBrowser(t)
	dir := artifacts(t)
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: clientID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	s := startStack(t, "", `{issuer: "`+iss.URL+`", client_id: `+clientID+`, roles: {admin: {emails: [ops@example.com]}}}`)
	ctx := newBrowser(t, chrome)

	do(t, ctx, "open the console", chromedp.Navigate(s.url+"/console"), chromedp.WaitVisible(chromedp.ID("oidc-signin")))
	shot(t, ctx, dir, "signin")
	// Single sign-on: the fake issuer signs its user in at once and sends the browser back.
	do(t, ctx, "sign in with single sign-on", chromedp.Click(chromedp.ID("oidc-signin")), chromedp.WaitVisible(chromedp.ID("name")))
	if who := get(t, ctx, "who is signed in", chromedp.Text(chromedp.CSS(".who"))); !strings.Contains(who, "ops@example.com") || !strings.Contains(who, "admin") {
		t.Errorf("signed in with single sign-on, the page shows %q", who)
	}
	shot(t, ctx, dir, "keys-oidc")
	do(t, ctx, "sign out", chromedp.Click(chromedp.CSS("header form button")), chromedp.WaitVisible(chromedp.ID("key")))
	// With the keyboard alone: Tab to the key's field (past the skip link and the single
	// sign-on button), its focus visible, type the key and press Enter.
	tabs := 0
	for get(t, ctx, "which element has the focus", chromedp.Evaluate[string](`document.activeElement.id`)) != "key" {
		if tabs++; tabs > 5 {
			t.Fatal("the admin key's field is not reached with five presses of Tab")
		}
		do(t, ctx, "press Tab", chromedp.KeyEvent(kb.Tab))
	}
	if outline := get(t, ctx, "the focus outline", chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`)); outline == "none" {
		t.Error("the focused field shows no outline")
	}
	do(t, ctx, "sign in with the admin key", chromedp.KeyEvent(adminSecret+kb.Enter), chromedp.WaitVisible(chromedp.ID("name")))

	do(t, ctx, "create a key",
		chromedp.SendKeys(chromedp.ID("name"), "browser-app"),
		chromedp.SendKeys(chromedp.ID("team"), "web"),
		chromedp.SendKeys(chromedp.ID("usd_day"), "5"),
		chromedp.Click(chromedp.ID("create")),
		chromedp.WaitVisible(chromedp.ID("secret")))
	secret := get(t, ctx, "read the secret", chromedp.Text(chromedp.ID("secret")))
	id := get(t, ctx, "read the id", chromedp.Text(chromedp.ID("key-id")))
	if !regexp.MustCompile(`^sk-fngate-[0-9A-Za-z]+$`).MatchString(secret) || !strings.HasPrefix(id, "key_") {
		t.Fatalf("the page shows secret %q and id %q", secret, id)
	}
	shot(t, ctx, dir, "secret")

	const calls = 3
	for range calls {
		if got := s.chat(t, secret); got != http.StatusOK {
			t.Fatalf("a call with the new key: %d, want 200", got)
		}
	}

	do(t, ctx, "open the key's page", chromedp.Navigate(s.url+"/console/keys/"+id), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	totals := get(t, ctx, "read the usage totals", chromedp.Text(chromedp.ID("usage-totals")))
	bars := get(t, ctx, "count the bars", chromedp.Evaluate[int](`document.querySelectorAll('svg.chart rect title').length`))
	if !strings.Contains(totals, fmt.Sprintf(": %d requests", calls)) || bars == 0 {
		t.Fatalf("the usage shows %q and %d bars, want the %d requests drawn", totals, bars, calls)
	}
	tip := get(t, ctx, "read a bar's tooltip", chromedp.Evaluate[string](`document.querySelector('svg.chart rect title').textContent`))
	if !strings.Contains(tip, "mock/echo") {
		t.Errorf("the bar's tooltip %q does not name the model", tip)
	}
	shot(t, ctx, dir, "key")
	do(t, ctx, "the usage per month", chromedp.Navigate(s.url+"/console/keys/"+id+"?group=month"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	if got := get(t, ctx, "count the month's bars", chromedp.Evaluate[int](`[...document.querySelectorAll('svg.chart title')].filter(e => e.textContent.startsWith(new Date().toISOString().slice(0, 7) + ", mock/echo")).length`)); got != 3 {
		t.Errorf("the month view draws %d bars of this month's mock/echo usage, want one per chart (3)", got)
	}
	shot(t, ctx, dir, "key-months")
	do(t, ctx, "back to the days", chromedp.Navigate(s.url+"/console/keys/"+id), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	if os.Getenv("FNGATE_UPDATE_SCREENSHOT") == "1" {
		// What a laptop's screen shows of the key's page: its facts and its usage charts.
		png := get(t, ctx, "screenshot for the docs", chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "console.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	do(t, ctx, "delete the key",
		chromedp.Click(chromedp.ID("delete")),
		chromedp.WaitVisible(chromedp.CSS(`p[role="status"]`)))
	deadline := time.Now().Add(6 * time.Second)
	for s.chat(t, secret) != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the deleted key still works after 6 s")
		}
		time.Sleep(250 * time.Millisecond)
	}
	shot(t, ctx, dir, "keys")

	do(t, ctx, "cool a route by hand",
		chromedp.Navigate(s.url+"/console/routes"),
		chromedp.WaitVisible(chromedp.CSS("table.routes")),
		chromedp.SendKeys(chromedp.CSS(`[id="reason-m/echo"]`), "provider maintenance"),
		chromedp.Click(chromedp.CSS(`[id="cool-m/echo"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[id="restore-m/echo"]`)))
	if row := get(t, ctx, "read the route", chromedp.Text(chromedp.CSS("table.routes tbody tr"))); !strings.Contains(row, "cooled") || !strings.Contains(row, "provider maintenance") {
		t.Errorf("the cooled route shows %q, want its state and reason", row)
	}
	shot(t, ctx, dir, "routes")
	do(t, ctx, "restore it", chromedp.Click(chromedp.CSS(`[id="restore-m/echo"]`)), chromedp.WaitVisible(chromedp.CSS(`[id="cool-m/echo"]`)))
	do(t, ctx, "the audit log", chromedp.Navigate(s.url+"/console/audit"), chromedp.WaitVisible(chromedp.CSS("table.audit")))
	audit := get(t, ctx, "read the audit log", chromedp.Text(chromedp.CSS("table.audit tbody")))
	for _, want := range []string{"key.create", "key.delete", id, "route.cool", "route.restore"} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit log does not show %s:\n%s", want, audit)
		}
	}
	shot(t, ctx, dir, "audit")

	// A phone: one column, nothing wider than the screen.
	do(t, ctx, "the keys on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(s.url+"/console/keys"),
		chromedp.WaitVisible(chromedp.ID("name")))
	if get(t, ctx, "measure the page", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)) {
		t.Error("the keys page is wider than a phone's screen")
	}
	shot(t, ctx, dir, "keys-phone")

	do(t, ctx, "sign out", chromedp.EmulateViewport(1280, 900),
		chromedp.Click(chromedp.CSS("header form button")),
		chromedp.WaitVisible(chromedp.ID("key")))
	do(t, ctx, "the keys once signed out", chromedp.Navigate(s.url+"/console/keys"), chromedp.WaitVisible(chromedp.ID("key")))
	if loc := get(t, ctx, "where the browser is", chromedp.Location()); !strings.Contains(loc, "/console/signin") {
		t.Errorf("after signing out the keys page is at %s", loc)
	}
}

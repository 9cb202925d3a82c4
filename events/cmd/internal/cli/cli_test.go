package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/routestate"
)

// Secrets of the test's admin principals.
const (
	adminToken  = "sk-admin-cli-test-0123456789abcdef"
	viewerToken = "sk-viewer-cli-test-0123456789abcdef"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// configYAML is the gateway config of the tests: two admin keys, a config key, a priced
// model with two routes. extra adds the stores (direct mode).
func configYAML(extra string) string {
	return `
keys:
  - {name: app, sha256: "` + sha("sk-app-config-key-0001") + `", rate: {requests_per_minute: 60}, budget: {usd_per_day: 10}}
admin:
  keys:
    - {name: ops, sha256: "` + sha(adminToken) + `", role: admin}
    - {name: audit, sha256: "` + sha(viewerToken) + `", role: viewer}
connections:
  m: {kind: mock}
guardrails:
  pii: {kind: local, mask: [email]}
models:
  team/chat:
    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}
    routes: [{connection: m, model: echo}, {connection: m, model: "error:503"}]
` + extra
}

// api is a real admin handler on a loopback server, on memory stores.
type api struct {
	url     string
	keys    *keystore.Memory
	history *counters.MemoryHistory
	routes  *routestate.Memory
}

func newAPI(t *testing.T) *api {
	t.Helper()
	cfg, err := config.Parse(context.Background(), []byte(configYAML("key_store: {store: memory}\n")), config.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	a := &api{keys: keystore.NewMemory(), history: counters.NewMemoryHistory(), routes: routestate.NewMemory()}
	h, err := admin.New(cfg, admin.Options{Keys: a.keys, History: a.history, Routes: a.routes,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a.url = srv.URL
	return a
}

// env is the environment of a command calling a over HTTP with token.
func (a *api) env(token string) map[string]string {
	return map[string]string{"FNGATE_ADMIN_URL": a.url, "FNGATE_ADMIN_TOKEN": token}
}

// noSecret fails the test when a token appears in anything the command printed.
func noSecret(t *testing.T, r result, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
			t.Errorf("a token is in the output:\n%+v", r)
		}
	}
}

// Bad command lines exit 2 with the usage, before anything is called; a refusal of the API
// exits 1 with its message; the token is printed nowhere.
func TestExitCodes(t *testing.T) {
	a := newAPI(t)
	ok := a.env(adminToken)
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		code  int
		match string // on stderr
	}{
		{"no command", ok, nil, 2, `usage: fngate \[-url URL`},
		{"unknown command", ok, []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown flag", ok, []string{"keys", "list", "-bogus"}, 2, `flag provided but not defined: -bogus`},
		{"keys alone", ok, []string{"keys"}, 2, `usage: fngate keys list`},
		{"keys unknown", ok, []string{"keys", "frob"}, 2, `unknown command "frob"`},
		{"get without id", ok, []string{"keys", "get"}, 2, `usage: fngate keys get ID`},
		{"get two ids", ok, []string{"keys", "get", "a", "b"}, 2, `usage: fngate keys get ID`},
		{"create without name", ok, []string{"keys", "create", "-team", "x"}, 2, `-name is required`},
		{"update without change", ok, []string{"keys", "update", "key_000000000000000000000000"}, 2, `nothing to change`},
		{"bad expiry", ok, []string{"keys", "create", "-name", "x", "-expires", "soon"}, 2, `-expires "soon"`},
		{"bad per-model", ok, []string{"keys", "create", "-name", "x", "-per-model", "{"}, 2, `-per-model`},
		{"list limit", ok, []string{"keys", "list", "-limit", "500"}, 2, `-limit is 1 to 200`},
		{"usage day", ok, []string{"usage", "-from", "2026-13-01"}, 2, `-from "2026-13-01": want a UTC day`},
		{"usage group", ok, []string{"usage", "-group", "week"}, 2, `-group is day or month`},
		{"cool for", ok, []string{"routes", "cool", "-for", "-5m", "team/chat/0"}, 2, `-for must be positive`},
		{"cool no id", ok, []string{"routes", "cool"}, 2, `usage: fngate routes cool`},
		{"routes unknown", ok, []string{"routes", "heat"}, 2, `unknown command "heat"`},
		{"audit since", ok, []string{"audit", "-since", "yesterday"}, 2, `-since: "yesterday"`},
		{"version args", ok, []string{"version", "x"}, 2, `usage: fngate version`},
		{"no url, no config", map[string]string{"FNGATE_CONFIG": t.TempDir() + "/none.yaml"}, []string{"keys", "list"}, 2, `no -url .* and no config at`},
		{"no token", map[string]string{"FNGATE_ADMIN_URL": a.url}, []string{"whoami"}, 1, `FNGATE_ADMIN_TOKEN is not set`},
		{"plain http off loopback", map[string]string{"FNGATE_ADMIN_URL": "http://admin.example.com", "FNGATE_ADMIN_TOKEN": adminToken}, []string{"whoami"}, 1, `plain http is only for loopback`},
		{"not a url", map[string]string{"FNGATE_ADMIN_URL": "admin.example.com", "FNGATE_ADMIN_TOKEN": adminToken}, []string{"whoami"}, 1, `want the control plane's https://host`},
		{"wrong token", a.env("sk-not-an-admin-key-000000"), []string{"whoami"}, 1, `fngate: .* \(401 authentication_error`},
		{"not the API", map[string]string{"FNGATE_ADMIN_URL": a.url + "/elsewhere", "FNGATE_ADMIN_TOKEN": adminToken}, []string{"whoami"}, 1, `404`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runFngate(t, tc.env, "", tc.args...)
			if r.code != tc.code || !regexp.MustCompile(tc.match).MatchString(r.stderr) {
				t.Errorf("fngate %v: exit %d, want %d with %s:\n%+v", tc.args, r.code, tc.code, tc.match, r)
			}
			if tc.code == 2 && r.stdout != "" {
				t.Errorf("a usage error printed on stdout: %q", r.stdout)
			}
			noSecret(t, r, adminToken, viewerToken, "sk-not-an-admin-key-000000")
		})
	}
}

// whoami, over HTTP, with and without -json: who the API takes the token for.
func TestWhoami(t *testing.T) {
	a := newAPI(t)
	r := runFngate(t, a.env(viewerToken), "", "whoami")
	if r.code != 0 || !regexp.MustCompile(`key:audit\s+audit\s+viewer`).MatchString(r.stdout) {
		t.Fatalf("whoami: %+v", r)
	}
	r = runFngate(t, a.env(adminToken), "", "whoami", "-json")
	if r.code != 0 || !regexp.MustCompile(`^\{"id":"key:ops","name":"ops","role":"admin","team":""\}\n$`).MatchString(r.stdout) {
		t.Fatalf("whoami -json is not the API's document as it came: %+v", r)
	}
	noSecret(t, r, adminToken, viewerToken)
	// The API's own path on the URL is understood, with or without its slash.
	for _, u := range []string{a.url + "/", a.url + "/admin/v1", a.url + "/admin/v1/"} {
		if r := runFngate(t, map[string]string{"FNGATE_ADMIN_URL": u, "FNGATE_ADMIN_TOKEN": adminToken}, "", "whoami"); r.code != 0 {
			t.Errorf("-url %s: %+v", u, r)
		}
	}
	if r := runFngate(t, map[string]string{"FNGATE_ADMIN_TOKEN": adminToken}, "", "-url", a.url, "whoami"); r.code != 0 || !strings.Contains(r.stdout, "key:ops") {
		t.Errorf("-url as a flag: %+v", r)
	}
}

// version prints the build's version, as text or one JSON document; the help says where the
// token comes from, and that no flag takes it.
func TestVersionAndHelp(t *testing.T) {
	r := runFngate(t, nil, "", "version")
	if r.code != 0 || !regexp.MustCompile(`^fngate \S+.* go1\.\d+`).MatchString(r.stdout) {
		t.Fatalf("version: %+v", r)
	}
	r = runFngate(t, nil, "", "-json", "version")
	if v, ok := jsonField(r.stdout, "go"); r.code != 0 || !ok || !strings.HasPrefix(v, "go1.") {
		t.Fatalf("version -json: %+v", r)
	}
	r = runFngate(t, nil, "", "help")
	if r.code != 0 || !strings.Contains(r.stdout, "FNGATE_ADMIN_TOKEN") || !strings.Contains(r.stdout, "there is no flag for it") {
		t.Fatalf("help does not say where the token comes from: %+v", r)
	}
	r = runFngate(t, nil, "", "-h")
	if r.code != 2 || !strings.Contains(r.stderr, "never in shell history") {
		t.Fatalf("-h: %+v", r)
	}
}

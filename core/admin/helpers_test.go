package admin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/routestate"
)

// Secrets of the test's principals.
const (
	adminSecret  = "sk-admin-test-secret-0123456789"
	viewerSecret = "sk-viewer-test-secret-0123456789"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// testConfig is a config with two admin keys, a priced model and one config key; top is
// added at the top level, extra within the admin section.
func testConfig(t *testing.T, extra string) *config.Config {
	return testConfigWith(t, "", extra)
}

func testConfigWith(t *testing.T, top, extra string) *config.Config {
	t.Helper()
	y := `
keys:
  - {name: app, sha256: "` + sha("sk-app-config-key") + `"}
key_store: {store: memory}
connections:
  m: {kind: mock}
models:
  team/chat:
    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}
    routes: [{connection: m, model: echo}]
  other/chat:
    routes: [{connection: m, model: other}]
` + top + `admin:
  keys:
    - {name: ops, sha256: "` + sha(adminSecret) + `", role: admin}
    - {name: audit, sha256: "` + sha(viewerSecret) + `", role: viewer}
` + extra
	cfg, err := config.Parse(context.Background(), []byte(y), config.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// logBuffer captures every log line the handler writes, safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fixture is an admin API on memory stores, with a fixed clock.
type fixture struct {
	t       *testing.T
	h       *admin.Handler
	keys    *keystore.Memory
	history *counters.MemoryHistory
	routes  *routestate.Memory
	logs    *logBuffer
	now     time.Time
}

func newFixture(t *testing.T, extra string, mod ...func(*admin.Options)) *fixture {
	t.Helper()
	return newFixtureWith(t, "", extra, mod...)
}

// newFixtureWith is newFixture with top added at the config's top level.
func newFixtureWith(t *testing.T, top, extra string, mod ...func(*admin.Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, keys: keystore.NewMemory(), history: counters.NewMemoryHistory(), routes: routestate.NewMemory(),
		logs: &logBuffer{}, now: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	opt := admin.Options{Keys: f.keys, History: f.history, Routes: f.routes, Now: func() time.Time { return f.now },
		Logger: slog.New(slog.NewJSONHandler(f.logs, nil))}
	for _, m := range mod {
		m(&opt)
	}
	h, err := admin.New(testConfigWith(t, top, extra), opt)
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f
}

// do calls the API with token (none when empty) and decodes the JSON answer.
func (f *fixture) do(method, path, token string, body any) (int, map[string]any, http.Header) {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	r := httptest.NewRequest(method, path, rd)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	var out map[string]any
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			f.t.Fatalf("%s %s: answer is not JSON: %v: %s", method, path, err, w.Body)
		}
	}
	return w.Code, out, w.Header()
}

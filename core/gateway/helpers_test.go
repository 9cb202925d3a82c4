package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/telemetry"
)

// logBuffer collects JSON log lines from concurrent requests.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the decoded log lines with msg == want (all when want is "").
func (l *logBuffer) lines(t *testing.T, want string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if want == "" || m["msg"] == want {
			out = append(out, m)
		}
	}
	return out
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Every log line the suite writes, and every secret its configs hold: TestMain checks that no
// secret ever reached a log line.
var (
	suiteLogs    logBuffer
	suiteSecrets sync.Map
)

func TestMain(m *testing.M) {
	code := m.Run()
	all := suiteLogs.String()
	suiteSecrets.Range(func(k, _ any) bool {
		if strings.Contains(all, k.(string)) {
			fmt.Fprintf(os.Stderr, "FAIL: a configured secret (%.6s...) appears in the suite's logs\n", k.(string))
			code = 1
		}
		return true
	})
	if code == 0 && !strings.Contains(all, `"msg":"provider_error"`) {
		fmt.Fprintln(os.Stderr, "FAIL: the log scan saw no provider_error line; is it scanning the suite's logs at all?")
		code = 1
	}
	os.Exit(code)
}

type testGateway struct {
	*httptest.Server
	logs *logBuffer
	gw   *gateway.Gateway
}

func registry() providers.Registry {
	r := providers.Registry{}
	mock.Register(r)
	openaicompat.Register(r)
	return r
}

// newGateway serves yamlConfig through a real gateway on loopback.
func newGateway(t *testing.T, yamlConfig string, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	return newGatewayTB(t, yamlConfig, opts...)
}

// newBenchGateway logs to io.Discard through the real JSON logger, so benchmarks pay for
// encoding log lines but not for an ever-growing test buffer.
func newBenchGateway(b *testing.B, yamlConfig string) *testGateway {
	return newGatewayTB(b, yamlConfig, func(o *gateway.Options) {
		o.Logger = telemetry.NewLogger(io.Discard, telemetry.FormatCloudWatch, nil)
	})
}

func newGatewayTB(t testing.TB, yamlConfig string, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	cfg, err := config.Parse(context.Background(), []byte(yamlConfig), config.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &logBuffer{}
	for _, s := range cfg.Secrets {
		suiteSecrets.Store(s, true)
	}
	opt := gateway.Options{Registry: registry(), Logger: telemetry.NewLogger(io.MultiWriter(logs, &suiteLogs), telemetry.FormatCloudWatch, cfg.Secrets)}
	for _, o := range opts {
		o(&opt)
	}
	gw, err := gateway.New(cfg, opt)
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return &testGateway{Server: srv, logs: logs, gw: gw}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	return m
}

// errorObject checks the OpenAI error shape and returns its inner object.
func (r *response) errorObject(t *testing.T) map[string]any {
	t.Helper()
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok || len(m) != 1 {
		t.Fatalf("not an OpenAI error body: %s", r.body)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			t.Fatalf("error body lacks %q: %s", k, r.body)
		}
	}
	return e
}

func (g *testGateway) do(t *testing.T, method, path, body string, header ...string) *response {
	t.Helper()
	req, err := http.NewRequest(method, g.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (g *testGateway) chat(t *testing.T, body string, header ...string) *response {
	t.Helper()
	return g.do(t, http.MethodPost, "/v1/chat/completions", body, header...)
}

// sseEvents splits an SSE body into its data payloads.
func sseEvents(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimRight(string(body), "\n"), "\n\n") {
		if ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("unexpected SSE event %q", ev)
		}
		out = append(out, data)
	}
	return out
}

func discardLogger() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

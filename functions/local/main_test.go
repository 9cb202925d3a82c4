package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/loopback"
	"github.com/fngate/fngate/internal/otlpfake"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// startServer builds the server once per test run and starts it on cfg with extra flags.
func startServer(t *testing.T, cfg string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr, _ := startServerOut(t, cfg, args...)
	return cmd, addr
}

// startServerOut is startServer with the server's output (its logs) kept.
func startServerOut(t *testing.T, cfg string, args ...string) (*exec.Cmd, string, *gatewaytest.LogBuffer) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServerEnvOut(t, nil, append([]string{"-config", path}, args...)...)
}

// startServerEnv starts the server with args, in env when it is not nil (else this
// process's environment).
func startServerEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr, _ := startServerEnvOut(t, env, args...)
	return cmd, addr
}

// startServerEnvOut is startServerEnv with the server's output (its logs) kept.
func startServerEnvOut(t *testing.T, env []string, args ...string) (*exec.Cmd, string, *gatewaytest.LogBuffer) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fngate-local-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "fngate-local")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	addr := loopback.ForTest(t).Addr()
	cmd := exec.Command(binPath, append([]string{"-addr", addr}, args...)...)
	cmd.Env = env
	out := &gatewaytest.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd, addr, out
		}
		if time.Now().After(deadline) {
			t.Fatal("server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGracefulShutdown opens a slow stream, sends SIGTERM, and expects the stream to finish
// with [DONE], new connections to be refused, and a clean exit.
func TestGracefulShutdown(t *testing.T) {
	cmd, addr, out := startServerOut(t, `
connections: {slow: {kind: mock, delay_ms: 100}}
models: {slow: {routes: [{connection: slow, model: lorem}]}}
`, "-shutdown-grace", "20s", "-route-state", filepath.Join(t.TempDir(), "routestate.json"))

	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"slow","stream":true,"max_completion_tokens":15,"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // the stream is under way
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("new connections are still accepted after SIGTERM")
	}
	last := ""
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			last = line
		}
	}
	if last != "data: [DONE]" {
		t.Errorf("in-flight stream cut by shutdown; last line %q", last)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
	// Its output is a pipe here, so JSON; the grace period reads as a duration, not 2e10.
	if !strings.Contains(out.String(), `"msg":"shutting down","grace":"20s"`) {
		t.Errorf("no shutdown line with its grace period in:\n%s", out.String())
	}
}

// TestTelemetryLeavesBeforeTheProcess: with a telemetry block the server traces its requests
// and, on SIGTERM, flushes the spans still batched (the batch would otherwise wait 5 s).
func TestTelemetryLeavesBeforeTheProcess(t *testing.T) {
	rcv := otlpfake.New(t)
	cmd, addr, out := startServerOut(t, `
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
telemetry: {otlp: {endpoint: "`+rcv.URL+`"}}
`, "-route-state", "off")
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
	spans := rcv.Spans() // the process is gone: what it sent is all there is
	if len(otlpfake.Find(spans, "SERVER", "chat m")) != 1 || len(otlpfake.Find(spans, "CLIENT", "chat echo")) != 1 {
		t.Errorf("spans:%s", otlpfake.Describe(spans))
	}
	if len(rcv.Points("fngate.attempts")) == 0 {
		t.Error("no metrics flushed on shutdown")
	}
	if !strings.Contains(out.String(), `"telemetry":"traces+metrics over OTLP"`) {
		t.Errorf("the listening line does not say where telemetry goes:\n%s", out.String())
	}
}

// TestTextLogsOnATerminal: text for a terminal unless the config or Cloud Run says otherwise.
func TestTextLogsOnATerminal(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		configured string
		getenv     func(string) string
		terminal   bool
		want       string
	}{
		{"", env(), true, telemetry.FormatText},
		{"", env(), false, telemetry.FormatCloudWatch},
		{"cloudwatch", env(), true, telemetry.FormatCloudWatch},
		{"", env("K_SERVICE", "gw"), true, telemetry.FormatCloudLogging},
		{"text", env(), false, telemetry.FormatText},
	} {
		if got := logFormat(tc.configured, tc.getenv, tc.terminal); got != tc.want {
			t.Errorf("logFormat(%q, terminal=%v) = %q, want %q", tc.configured, tc.terminal, got, tc.want)
		}
	}
}

// TestRouteStateFile: a route cooled in the route-state file (as fngate-remediate writes it)
// is skipped by the local server.
func TestRouteStateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routestate.json")
	store, err := routestate.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(context.Background(), routestate.State{Route: "mock/lorem", Status: routestate.Cooling,
		Until: time.Now().Add(time.Hour), Reason: "rate_limited"}, nil); err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, `
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: lorem}, {connection: mock, model: echo}]}}
`, "-route-state", path)
	var route string
	for range 50 { // the cache loads the file in the background
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if route = resp.Header.Get("X-Fngate-Route"); route == "mock/echo" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("the cooled route still serves: %q", route)
}

// TestResponsesStoreFromTheConfig: the local server keeps stored responses in memory unless
// the config says otherwise, and GET /v1/responses/{id} returns them; with store: none nothing
// is kept and responses say store: false.
func TestResponsesStoreFromTheConfig(t *testing.T) {
	for _, tc := range []struct {
		section string
		stored  bool
	}{
		{"responses: {store: memory}\n", true},
		{"", true},
		{"responses: {store: none}\n", false},
	} {
		_, addr := startServer(t, tc.section+`
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, "-route-state", "off")
		resp, err := http.Post("http://"+addr+"/v1/responses", "application/json", strings.NewReader(`{"model":"m","input":"keep me"}`))
		if err != nil {
			t.Fatal(err)
		}
		var created struct {
			ID    string `json:"id"`
			Store bool   `json:"store"`
		}
		err = json.NewDecoder(resp.Body).Decode(&created)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || created.Store != tc.stored {
			t.Fatalf("%q: %d %+v %v", tc.section, resp.StatusCode, created, err)
		}
		get, err := http.Get("http://" + addr + "/v1/responses/" + created.ID)
		if err != nil {
			t.Fatal(err)
		}
		get.Body.Close()
		if want := map[bool]int{true: 200, false: 404}[tc.stored]; get.StatusCode != want {
			t.Errorf("%q: GET %d, want %d", tc.section, get.StatusCode, want)
		}
	}
}

// TestSlowHeadersAreCut: clients that trickle a request's headers (one byte every 50 ms,
// a slowloris) have their connections closed by the server once -read-header-timeout has
// passed, long before they could finish; while they trickle, they hold none of the
// max_in_flight slots, so an ordinary request is served.
func TestSlowHeadersAreCut(t *testing.T) {
	_, addr := startServer(t, `
limits: {max_in_flight: 1}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, "-route-state", "off", "-read-header-timeout", "300ms")

	// Each trickle would take 200 × 50 ms = 10 s to finish its headers: far beyond the
	// timeout, so a server that bounds the header read closes it well before.
	const slowClients, trickle = 3, 200
	type outcome struct {
		sent int    // header bytes written before the connection closed
		got  string // what the server answered, if anything
	}
	results := make(chan outcome, slowClients)
	for range slowClients {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: fngate\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		closed := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(c) // returns when the server closes the connection
			closed <- string(b)
		}()
		go func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for i := range trickle {
				select {
				case got := <-closed:
					results <- outcome{i, got}
					return
				case <-tick.C:
				}
				if _, err := c.Write([]byte{'a'}); err != nil {
					results <- outcome{i, <-closed}
					return
				}
			}
			// Headers done: a server without a header timeout reads and answers this request,
			// then closes the connection as asked.
			_, _ = io.WriteString(c, "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
			results <- outcome{trickle, <-closed}
		}()
	}

	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"not starved"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("an ordinary request beside the trickling clients: %d, want 200", resp.StatusCode)
	}
	for range slowClients {
		r := <-results
		if r.sent == trickle {
			t.Errorf("a client that took %d × 50 ms over its headers was read to the end; the server answered %.80q", trickle, r.got)
		} else if r.got != "" && !strings.HasPrefix(r.got, "HTTP/1.1 408") {
			t.Errorf("a cut client got %.80q", r.got)
		}
	}
}

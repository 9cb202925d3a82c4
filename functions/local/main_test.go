package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/fngate/fngate/internal/loopback"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// startServer builds the server once per test run and starts it on cfg with extra flags.
func startServer(t *testing.T, cfg string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServerEnv(t, nil, append([]string{"-config", path}, args...)...)
}

// startServerEnv starts the server with args, in env when it is not nil (else this
// process's environment).
func startServerEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd, addr
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
	cmd, addr := startServer(t, `
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

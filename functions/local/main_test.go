package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGracefulShutdown builds the server, opens a slow stream, sends SIGTERM, and expects the
// stream to finish with [DONE], new connections to be refused, and a clean exit.
func TestGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fngate-local")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(cfg, []byte(`
connections: {slow: {kind: mock, delay_ms: 100}}
models: {slow: {routes: [{connection: slow, model: lorem}]}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "-config", cfg, "-addr", addr, "-shutdown-grace", "20s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}

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

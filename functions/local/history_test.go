package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// TestUsageHistoryInTheCountersFile: two local servers on one counters file, with a key that
// has no limits, keep their requests' usage in that file, beside the counters.
func TestUsageHistoryInTheCountersFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counters.json")
	cfg := fmt.Sprintf(`
keys: [{name: app, value: key-local-history-1}]
counters: {store: file, path: %q}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, path)
	var addrs []string
	for range 2 {
		_, addr := startServer(t, cfg, "-route-state", "off")
		addrs = append(addrs, addr)
	}
	for _, addr := range append(addrs, addrs...) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions",
			strings.NewReader(`{"model":"m","max_completion_tokens":5,"messages":[{"role":"user","content":"one two"}]}`))
		req.Header.Set("Authorization", "Bearer key-local-history-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	f, err := counters.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		now := time.Now()
		rows, err := f.Usage(context.Background(), "app", now.Add(-time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		var got counters.Usage
		for _, r := range rows {
			got.Add(r.Usage)
		}
		if got.Requests == 4 && got.InputTokens > 0 && got.OutputTokens > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the counters file holds %+v (%+v); want the 4 requests with their tokens", got, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOpenHistory: the history follows the counters section, whether or not any key has
// limits: the counters' own store when it keeps one, memory beside memory counters.
func TestOpenHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	for _, tc := range []struct {
		name  string
		yaml  string
		store func(*config.Config) counters.Store
		want  string
	}{
		{"memory", "", nil, "*counters.MemoryHistory"},
		{"file, no limits", fmt.Sprintf("counters: {store: file, path: %q}\n", path), nil, "*counters.File"},
		{"the counters' own file", fmt.Sprintf("counters: {store: file, path: %q}\n", path), func(c *config.Config) counters.Store {
			s, err := counters.OpenFile(c.Counters.Path)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, "*counters.File"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := gatewaytest.Config(t, tc.yaml+`
keys: [{name: app, value: key-local-history-2}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, config.Options{Getenv: func(string) string { return "" }})
			var store counters.Store
			if tc.store != nil {
				store = tc.store(cfg)
			}
			h, closeHistory, err := openHistory(context.Background(), cfg, store)
			if err != nil {
				t.Fatal(err)
			}
			defer closeHistory()
			if got := fmt.Sprintf("%T", h); got != tc.want {
				t.Fatalf("history = %s, want %s", got, tc.want)
			}
			if store != nil && h != store.(counters.History) {
				t.Fatal("a second store was opened beside the counters' own")
			}
		})
	}
}

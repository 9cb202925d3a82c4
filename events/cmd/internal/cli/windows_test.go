package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
)

// TestUsage: the operator reads a key's counts from the store the gateway's config names,
// beside its limits, with what remains and when each window resets; without a config, the
// counts the store holds.
func TestUsage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "counters.json")
	cfgPath := filepath.Join(dir, "fngate.yaml")
	cfg := `
counters: {store: file, path: ` + path + `}
keys:
  - name: app
    value: aws-sm://prod/gateway#app
    rate: {requests_per_minute: 60}
    budget: {usd_per_day: 10}
    per_model: {"claude-*": {budget: {usd_per_month: 50}}}
  - {name: idle, value: key-idle-0001, rate: {requests_per_minute: 5}}
  - {name: free, value: key-free-0001}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)
	store, err := counters.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	charge := []counters.Amount{
		{Counter: counters.Counter{Kind: counters.Requests}, N: 12},
		{Counter: counters.Counter{Kind: counters.SpendDay}, N: 1_234_500_000},
		{Counter: counters.Counter{Scope: "claude-*", Kind: counters.SpendMonth}, N: 2_000_000_000},
	}
	if _, ok, err := store.Take(context.Background(), "app", counters.At(now), charge); err != nil || !ok {
		t.Fatal(ok, err)
	}
	var out, errb bytes.Buffer
	c := &remediator{prog: "fngate remediation", stdout: &out, stderr: &errb, json: new(bool)}
	noEnv := func(string) string { return "" }
	if err := c.windowUsage(context.Background(), c.subcommand("usage"), []string{"-config", cfgPath}, noEnv, now); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	for _, want := range []string{
		`app\s+\(key\)\s+requests/min\s+12\s+60\s+48\s+2026-11-29T12:01:00Z`,
		`app\s+\(key\)\s+usd/day\s+\$1\.2345\s+\$10\.0000\s+\$8\.7655\s+2026-11-30T00:00:00Z`,
		`app\s+\(key\)\s+usd/month\s+\$0\.0000\s+-\s+-\s+2026-12-01T00:00:00Z`,
		`app\s+claude-\*\s+usd/month\s+\$2\.0000\s+\$50\.0000\s+\$48\.0000`,
		`idle\s+\(key\)\s+requests/min\s+0\s+5\s+5`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("usage output lacks %s:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "free") {
		t.Errorf("a key without limits is listed:\n%s", out.String())
	}

	// Without a config: the store named, the key named, its counts as stored.
	out.Reset()
	if err := c.windowUsage(context.Background(), c.subcommand("usage"), []string{"-counters", "file:" + path, "app"}, noEnv, now); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`app\s+claude-\*\s+usd/month\s+\$2\.0000\s+-\s+-`).MatchString(out.String()) || strings.Count(out.String(), "\n") != 4 {
		t.Errorf("usage without a config:\n%s", out.String())
	}
}

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
)

// TestUsageJSON: -json, before or after the command, gives the same rows as values: counts,
// dollars for spend, limit and remaining only where there is a limit.
func TestUsageJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counters.json")
	store, err := counters.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	charge := []counters.Amount{{Counter: counters.Counter{Kind: counters.SpendDay}, N: 1_500_000_000}}
	if _, ok, err := store.Take(context.Background(), "app", counters.At(time.Now()), charge); err != nil || !ok {
		t.Fatal(ok, err)
	}
	for _, args := range [][]string{{"-json", "usage", "-counters", "file:" + path, "app"}, {"usage", "-json", "-counters", "file:" + path, "app"}} {
		r := runCLI(t, nil, "", args...)
		if r.code != 0 {
			t.Fatalf("%v: %+v", args, r)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatalf("%v: %v:\n%s", args, err, r.stdout)
		}
		if len(rows) != 1 || rows[0]["key"] != "app" || rows[0]["counter"] != "usd/day" || rows[0]["used"] != 1.5 || rows[0]["resets"] == nil {
			t.Errorf("%v: %v", args, rows)
		}
		if _, ok := rows[0]["limit"]; ok {
			t.Errorf("%v: a limit without a config: %v", args, rows)
		}
	}
}

func TestUsageNeedsASharedStore(t *testing.T) {
	r := runCLI(t, nil, "", "usage", "app")
	if r.code != 1 || !strings.Contains(r.stderr, "counters live in the gateway's memory") {
		t.Fatalf("%+v", r)
	}
	if r := runCLI(t, nil, "", "usage", "-counters", "redis:x", "app"); r.code != 1 || !strings.Contains(r.stderr, "unknown kind") {
		t.Fatalf("%+v", r)
	}
}

package gcf

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/internal/emulator"
)

// TestBuildLimitsAcrossInstances builds two instances the way the Terraform module configures
// them (COUNTERS_PROJECT, COUNTERS_PREFIX; the config names no store) on the Firestore emulator: a
// key's 3 requests a minute are 3 across both, and the fourth is a 429.
func TestBuildLimitsAcrossInstances(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	warmEmulator(t)
	env := map[string]string{
		// The emulator answers slower than the default timeout on a busy machine; closed makes
		// a timeout a 503 here rather than an uncounted 200.
		"FNGATE_CONFIG_YAML": `
counters: {timeout: 20s, on_store_error: closed}
keys: [{name: app, value: key-gcf-limits-1, rate: {requests_per_minute: 3}}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`,
		EnvCountersProject: "fngate-test",
		EnvCountersPrefix:  fmt.Sprintf("gcf%d_", time.Now().UnixNano()),
	}
	getenv := func(k string) string { return env[k] }
	var instances []http.Handler
	for range 2 {
		h, err := build(context.Background(), getenv)
		if err != nil {
			t.Fatal(err)
		}
		instances = append(instances, h)
	}
	ask := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
			strings.NewReader(`{"model":"m","max_completion_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer key-gcf-limits-1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	// Start early in a minute: one rolling over between the requests would reopen the limit.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 10*time.Second {
		time.Sleep(left)
	}
	var statuses []int
	for _, h := range []http.Handler{instances[0], instances[1], instances[0], instances[1]} {
		statuses = append(statuses, ask(h).Code)
	}
	if fmt.Sprint(statuses) != fmt.Sprint([]int{200, 200, 200, 429}) {
		t.Fatalf("statuses across two instances = %v, want three 200s and a 429", statuses)
	}
	if rec := ask(instances[0]); rec.Header().Get(gateway.HeaderRemainingRequests) != "0" {
		t.Fatalf("the refusal's headers: %v", rec.Header())
	}
}

// warmEmulator writes and reads once: the emulator's JVM takes seconds over its first write.
func warmEmulator(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, closeClient, err := firestorecounters.Open(ctx, config.Counters{Store: config.Store{Project: "fngate-test"}, Prefix: "warm_"})
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient()
	if _, _, err := s.Take(ctx, "warm", counters.At(time.Now()), []counters.Amount{{Counter: counters.Counter{Kind: counters.Requests}, N: 1}}); err != nil {
		t.Fatal(err)
	}
}

package gcf

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/internal/emulator"
)

// TestBuildKeepsUsageHistory builds two instances the way the Terraform module configures
// them (COUNTERS_PROJECT, COUNTERS_PREFIX, no counters section, a key without limits) on
// the Firestore emulator: each request's usage is in Firestore once its handler has
// returned (Cloud Run may throttle the instance right after), whichever instance served it.
func TestBuildKeepsUsageHistory(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	warmEmulator(t)
	prefix := fmt.Sprintf("gcfh%d_", time.Now().UnixNano())
	env := map[string]string{
		"FNGATE_CONFIG_YAML": `
keys: [{name: app, value: key-gcf-history-1}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`,
		EnvCountersProject: "fngate-test",
		EnvCountersPrefix:  prefix,
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
	client, err := firestore.NewClient(context.Background(), "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	history := firestorecounters.New(client, prefix, 0)
	for i, h := range []http.Handler{instances[0], instances[1], instances[0]} {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
			strings.NewReader(fmt.Sprintf(`{"model":"m","stream":%v,"max_completion_tokens":5,"messages":[{"role":"user","content":"one two"}]}`, i == 1)))
		req.Header.Set("Authorization", "Bearer key-gcf-history-1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("request %d: %d %s", i+1, rec.Code, rec.Body)
		}
		now := time.Now()
		rows, err := history.Usage(context.Background(), "app", now.Add(-time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		var got counters.Usage
		for _, r := range rows {
			got.Add(r.Usage)
		}
		if got.Requests != int64(i+1) || got.InputTokens == 0 || got.OutputTokens == 0 {
			t.Fatalf("after request %d the history holds %+v (%+v); want %d requests with their tokens", i+1, got, rows, i+1)
		}
	}
}

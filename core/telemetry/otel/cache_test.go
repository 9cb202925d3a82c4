package otel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/internal/otlpfake"
)

// TestCacheHitOnTheTrace: a hit's SERVER span says hit and what it saved, and its one CLIENT
// span, the cache's, is outcome cache_hit with the saved tokens and no usage of its own; the
// miss before it says miss.
func TestCacheHitOnTheTrace(t *testing.T) {
	rcv := otlpfake.New(t)
	yaml := strings.Replace(fmt.Sprintf(mockConfig, "    endpoint: "+rcv.URL), "m: {routes:", "m: {cache: {ttl: 1h}, routes:", 1)
	g := serveWith(t, yaml, gateway.Options{Cache: responsecache.NewMemory()})
	body := `{"model":"m","messages":[{"role":"user","content":"cache me"}]}`
	for i, want := range []string{"miss", "hit"} {
		r := g.Do(t, "POST", "/v1/chat/completions", body)
		if r.Status != 200 || r.Header.Get(gateway.HeaderCache) != want {
			t.Fatalf("request %d: %d %q", i, r.Status, r.Header.Get(gateway.HeaderCache))
		}
		if err := g.Gateway.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	g.flush(t, 2)
	spans := rcv.WaitSpans(t, 4, 5*time.Second)
	var hit *otlpfake.Span
	for _, s := range otlpfake.Find(spans, "SERVER", "chat m") {
		switch s.Attrs["fngate.cache"] {
		case "hit":
			hit = &s
		case "miss":
		default:
			t.Errorf("a SERVER span without fngate.cache: %v", s.Attrs)
		}
	}
	if hit == nil {
		t.Fatalf("no SERVER span of the hit:%s", otlpfake.Describe(spans))
	}
	wantAttrs(t, "hit SERVER", hit.Attrs, map[string]any{"fngate.cache.saved.output_tokens": int64(2)})
	var children []otlpfake.Span
	for _, s := range spans {
		if s.ParentID == hit.SpanID {
			children = append(children, s)
		}
	}
	if len(children) != 1 {
		t.Fatalf("the hit's children:%s", otlpfake.Describe(children))
	}
	c := children[0]
	wantAttrs(t, "hit CLIENT", c.Attrs, map[string]any{"fngate.outcome": "cache_hit", "fngate.cache.saved.output_tokens": int64(2)})
	if _, used := c.Attrs["gen_ai.usage.output_tokens"]; used {
		t.Errorf("the hit's CLIENT span reports usage: %v", c.Attrs)
	}
}

package mcp_test

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/internal/mcptest"
)

// BenchmarkToolCall measures one tools/call of a 50-tool upstream side by side: straight to
// the upstream, through a bare httputil.ReverseProxy (the floor of any HTTP hop), and through
// the gateway's /mcp (which also lists, checks access, records and relays), each with the
// protocol Claude Code and Codex speak. p50 and p99 are per call.
func BenchmarkToolCall(b *testing.B) {
	up := mcptest.NewUpstream(b, "gh", func(s *sdk.Server) {
		for _, name := range toolNames50() {
			mcptest.Echo(name, "")(s)
		}
	})
	target, _ := url.Parse(up.URL)
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host}))
	b.Cleanup(proxy.Close)
	gw, _ := gateway(b, mcp.Options{Servers: servers(map[string]string{"gh": up.URL})}, mcpcall.Caller{ID: "bench"})

	for _, c := range []struct{ name, url, tool string }{
		{"direct", up.URL, "tool_25"},
		{"reverseproxy", proxy.URL + "/mcp", "tool_25"},
		{"gateway", gw, "gh__tool_25"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := mcptest.Connect(b, c.url, nil, "2025-06-18")
			p := &sdk.CallToolParams{Name: c.tool, Arguments: map[string]any{"text": "hello"}}
			if _, err := s.CallTool(context.Background(), p); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := s.CallTool(context.Background(), p); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
		})
	}
}

func toolNames50() []string {
	var out []string
	for i := range 50 {
		out = append(out, "tool_"+string(rune('0'+i/10))+string(rune('0'+i%10)))
	}
	return out
}

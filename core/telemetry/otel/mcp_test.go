package otel_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/mcptest"
	"github.com/fngate/fngate/internal/otlpfake"
)

// A forwarded tool call is an MCP CLIENT span under /mcp's SERVER span, named as OpenTelemetry's
// MCP conventions name it, with the server and the outcome.
func TestToolCallSpanUnderTheRequest(t *testing.T) {
	rcv := otlpfake.New(t)
	up := mcptest.NewUpstream(t, "gh", mcptest.Echo("search", ""))
	yaml := fmt.Sprintf(mockConfig, "    endpoint: "+rcv.URL) + "\nmcp_servers: {gh: {url: \"" + up.URL + "\"}}\n"
	cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: noEnv})
	h, err := mcp.ForConfig(cfg, nil, nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	g := serveWith(t, yaml, gateway.Options{MCP: h})
	s := mcptest.Connect(t, g.URL+"/mcp", http.Header{}, "")
	if _, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__search", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__missing", Arguments: map[string]any{}}); err == nil {
		t.Fatal("an unknown upstream tool answered")
	}
	if err := g.Gateway.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.WaitSpans(t, 4, 5*time.Second)
	ok := otlpfake.Find(spans, "CLIENT", "tools/call gh__search")
	bad := otlpfake.Find(spans, "CLIENT", "tools/call gh__missing")
	if len(ok) != 1 || len(bad) != 1 {
		t.Fatalf("spans:%s", otlpfake.Describe(spans))
	}
	a := ok[0].Attrs
	if a["mcp.method.name"] != "tools/call" || a["gen_ai.tool.name"] != "gh__search" || a["gen_ai.operation.name"] != "execute_tool" || a["fngate.mcp.server"] != "gh" || a["fngate.mcp.outcome"] != "ok" {
		t.Errorf("attributes %v", a)
	}
	parent := false
	for _, sp := range spans {
		parent = parent || sp.SpanID == ok[0].ParentID && sp.Kind == "SERVER"
	}
	if !parent {
		t.Errorf("the tool call span's parent is not the request's SERVER span:%s", otlpfake.Describe(spans))
	}
	if bad[0].StatusCode != "ERROR" || bad[0].Attrs["error.type"] != "upstream_error" {
		t.Errorf("failed call: %s %v", bad[0].StatusCode, bad[0].Attrs)
	}
}

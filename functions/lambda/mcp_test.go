package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/internal/fakeruntime"
	"github.com/fngate/fngate/internal/mcptest"
)

// A slow tool's progress reaches the client over the function URL while the tool runs: /mcp
// streams through Lambda's response streaming, as the doors do.
func TestMCPStreamsOverTheFunctionURL(t *testing.T) {
	up := mcptest.NewUpstream(t, "build", func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "run"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2, Message: "compiling"})
			time.Sleep(900 * time.Millisecond)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "built"}}}, nil, nil
		})
	})
	cfg := `
auth: none
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
mcp_servers: {build: {url: "` + up.URL + `"}}
`
	in := startBin(t, bootstrapWith(t, "lambda.norpc,mcp"), "FNGATE_CONFIG_YAML="+cfg)
	// A client of the versions Claude Code and Codex speak, without a session (none is stored
	// here): each message on its own.
	headers := map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build__run","arguments":{},"_meta":{"progressToken":"p1"}}}`
	inv, p, payload := in.invoke(t, fakeruntime.Request{Event: fakeruntime.URLEvent("POST", "/mcp", headers, body)})
	if p.StatusCode != 200 || p.Headers["Content-Type"] != "text/event-stream" {
		t.Fatalf("prelude %d %v; payload %s", p.StatusCode, p.Headers, payload)
	}
	if !strings.Contains(payload, `"notifications/progress"`) || !strings.Contains(payload, `"built"`) {
		t.Fatalf("payload %s", payload)
	}
	var progress, result time.Time
	for i := 0; progress.IsZero() || result.IsZero(); i++ {
		c, err := inv.Chunk(i, time.Second)
		if err != nil {
			t.Fatalf("chunks: %v\n%s", err, payload)
		}
		if progress.IsZero() && bytes.Contains(c.Data, []byte("notifications/progress")) {
			progress = c.At
		}
		if bytes.Contains(c.Data, []byte(`"built"`)) {
			result = c.At
		}
	}
	if lead := result.Sub(progress); lead < 600*time.Millisecond {
		t.Errorf("the progress arrived only %v before the result: the stream was buffered", lead)
	}

	// A standing GET stream would hold a billed instance: refused with the methods allowed.
	_, p, _ = in.invoke(t, fakeruntime.Request{Event: fakeruntime.URLEvent("GET", "/mcp", map[string]string{"accept": "text/event-stream"}, "")})
	if p.StatusCode != 405 || p.Headers["Allow"] != "POST, DELETE" {
		t.Errorf("GET /mcp: %d %v", p.StatusCode, p.Headers)
	}
}

// The default build says how to get /mcp; a legacy SSE upstream is refused on Lambda.
func TestMCPNeedsItsBuildAndNoSSE(t *testing.T) {
	for _, c := range []struct{ tags, servers, says string }{
		{"lambda.norpc", `{gh: {url: "http://127.0.0.1:1/mcp"}}`, "LAMBDA_TAGS=lambda.norpc,mcp"},
		{"lambda.norpc,mcp", `{old: {url: "http://127.0.0.1:1/sse", transport: sse}}`, "the sse transport holds a connection open between calls"},
	} {
		cfg := "auth: none\nconnections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\nmcp_servers: " + c.servers + "\n"
		in := startBin(t, bootstrapWith(t, c.tags), "FNGATE_CONFIG_YAML="+cfg)
		select {
		case <-in.exited:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the bootstrap started", c.tags)
		}
		if in.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(in.out.String(), c.says) {
			t.Errorf("%s: exit %d, output %q; want %q", c.tags, in.cmd.ProcessState.ExitCode(), in.out.String(), c.says)
		}
	}
}

package gcf

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/mcptest"
)

// Two instances built as the Terraform module configures them (the FNGATE_MCP_SESSIONS_*
// variables) on the Firestore emulator: a legacy client's session opened on one is
// continued on the other, and a tool's progress streams before its result.
func TestBuildMCPSessionsAcrossInstances(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	warmEmulator(t)
	up := mcptest.NewUpstream(t, "gh", func(s *sdk.Server) {
		mcptest.Echo("echo", "gh:")(s)
		sdk.AddTool(s, &sdk.Tool{Name: "slow"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "working"})
			time.Sleep(700 * time.Millisecond)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	})
	env := map[string]string{
		"FNGATE_CONFIG_YAML": fmt.Sprintf(`
mcp_sessions: {timeout: 15s}
mcp_servers: {gh: {url: %q}}
keys: [{name: app, value: key-gcf-mcp-1}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, up.URL),
		EnvMCPSessionsProject:    "fngate-test",
		EnvMCPSessionsCollection: fmt.Sprint("gcf_mcp_", time.Now().UnixNano()),
	}
	var urls []string
	for range 2 {
		h, err := build(context.Background(), func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	var n atomic.Int64
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		target := urls[int(n.Add(1))%2]
		r.URL.Host, r.Host = target[len("http://"):], target[len("http://"):]
		r.Header.Set("Authorization", "Bearer key-gcf-mcp-1")
		return http.DefaultTransport.RoundTrip(r)
	})
	var progressAt atomic.Int64
	c := sdk.NewClient(&sdk.Implementation{Name: "legacy", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) {
			progressAt.CompareAndSwap(0, time.Now().UnixNano())
		},
	})
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: urls[0] + "/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ID() == "" {
		t.Fatal("no session opened")
	}
	for i := range 3 {
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
		if err != nil || res.Content[0].(*sdk.TextContent).Text != fmt.Sprint("gh:", i) {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
	}
	p := &sdk.CallToolParams{Name: "gh__slow", Arguments: map[string]any{}}
	p.SetProgressToken("t1")
	if _, err := s.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	if at := progressAt.Load(); at == 0 || end.Sub(time.Unix(0, at)) < 500*time.Millisecond {
		t.Errorf("progress at %v, result at %v: not streamed", time.Unix(0, at), end)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

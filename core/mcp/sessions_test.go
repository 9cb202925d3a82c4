package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/internal/mcptest"
)

// alternating sends each request to the next of urls, as a function's front end may.
type alternating struct {
	urls []string
	n    atomic.Int64
	sent []string
}

func (a *alternating) RoundTrip(r *http.Request) (*http.Response, error) {
	target := a.urls[int(a.n.Add(1))%len(a.urls)]
	r = r.Clone(r.Context())
	u, _ := r.URL.Parse(target)
	r.URL = u
	r.Host = u.Host
	return http.DefaultTransport.RoundTrip(r)
}

// SessionsContinuedOnAnotherInstance is the suite of a shared session store: two gateway
// instances, one store; a legacy client's session opened on one is continued on the other.
func SessionsContinuedOnAnotherInstance(t *testing.T, store mcpsessions.Store) {
	up := mcptest.NewUpstream(t, "gh", func(s *sdk.Server) {
		mcptest.Echo("echo", "")(s)
		sdk.AddTool(s, &sdk.Tool{Name: "chatty"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "debug", Data: "debug line"})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	})
	opt := mcp.Options{Servers: servers(map[string]string{"gh": up.URL}), Sessions: store}
	a, _ := gateway(t, opt, mcpcall.Caller{ID: "alice"})
	b, _ := gateway(t, opt, mcpcall.Caller{ID: "alice"})
	other, _ := gateway(t, opt, mcpcall.Caller{ID: "mallory"})

	var logs atomic.Int64
	c := sdk.NewClient(&sdk.Implementation{Name: "legacy", Version: "1"}, &sdk.ClientOptions{
		LoggingMessageHandler: func(context.Context, *sdk.LoggingMessageRequest) { logs.Add(1) },
	})
	rt := &alternating{urls: []string{a, b}}
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: a, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ID() == "" {
		t.Fatal("initialize of a version with sessions opened none")
	}
	// The level set on one instance is the session's on the other.
	if err := s.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || text(t, res) != "hi" {
			t.Fatalf("call %d: %v %v", i, res, err)
		}
		if _, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__chatty", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	if rt.n.Load() < 6 {
		t.Fatalf("only %d requests", rt.n.Load())
	}

	post := func(url, id, method string) *http.Response {
		req, _ := http.NewRequest(method, url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// Another caller cannot continue it, nor tell it exists.
	if resp := post(other, s.ID(), http.MethodPost); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another key's message: %d", resp.StatusCode)
	}
	if resp := post(a, "no-such-session", http.MethodPost); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown session: %d", resp.StatusCode)
	}
	if resp := post(b, s.ID(), http.MethodDelete); resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	if resp := post(a, s.ID(), http.MethodPost); resp.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: %d", resp.StatusCode)
	}
	if logs.Load() == 0 {
		t.Error("the debug level set on one instance did not hold on the other")
	}
}

func TestSessionsInMemory(t *testing.T) {
	SessionsContinuedOnAnotherInstance(t, mcpsessions.NewMemory())
}

// The current protocol opens no session, with or without a store.
func TestSessionlessVersionOpensNoSession(t *testing.T) {
	up := mcptest.NewUpstream(t, "gh", mcptest.Echo("echo", ""))
	url, _ := gateway(t, mcp.Options{Servers: servers(map[string]string{"gh": up.URL}), Sessions: mcpsessions.NewMemory()}, mcpcall.Caller{ID: "k"})
	s := mcptest.Connect(t, url, nil, "")
	if s.ID() != "" {
		t.Errorf("session %q", s.ID())
	}
	if res, err := call(s, "gh__echo", map[string]any{"text": "x"}); err != nil || text(t, res) != "x" {
		t.Fatal(res, err)
	}
}

package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/mcptest"
)

// gateway serves h at /mcp as the gateway does, every request made by caller.
func gateway(t testing.TB, opt mcp.Options, caller mcpcall.Caller) (string, *recorder) {
	t.Helper()
	h, err := mcp.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	rec := &recorder{}
	caller.Begin = rec.begin
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := caller
		h.ServeHTTP(w, r.WithContext(mcpcall.NewContext(r.Context(), &c)))
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", rec
}

// recorder keeps the records of the forwarded calls.
type recorder struct {
	mu    sync.Mutex
	calls []record.ToolCall
}

func (r *recorder) begin(ctx context.Context, method, name string) (context.Context, func(*record.ToolCall)) {
	return ctx, func(c *record.ToolCall) {
		r.mu.Lock()
		r.calls = append(r.calls, *c)
		r.mu.Unlock()
	}
}

func (r *recorder) last(t *testing.T) record.ToolCall {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("no call was recorded")
	}
	return r.calls[len(r.calls)-1]
}

func servers(m map[string]string) map[string]*config.MCPServer {
	out := map[string]*config.MCPServer{}
	for name, url := range m {
		out[name] = &config.MCPServer{Name: name, URL: url}
	}
	return out
}

func toolNames(t *testing.T, s *sdk.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func text(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(s *sdk.ClientSession, name string, args any) (*sdk.CallToolResult, error) {
	return s.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
}

// Both protocol generations: the sessionless current one, and the one Claude Code and Codex
// still send, whose initialize opens a session.
var versions = []string{"", "2025-06-18"}

func TestToolsOfTwoServersAggregatedAndNamespaced(t *testing.T) {
	gh := mcptest.NewUpstream(t, "github", func(s *sdk.Server) {
		mcptest.Echo("search", "gh:")(s)
		mcptest.Echo("create_issue", "issue:")(s)
	})
	jira := mcptest.NewUpstream(t, "jira", mcptest.Echo("search", "jira:"))
	url, rec := gateway(t, mcp.Options{Servers: servers(map[string]string{"gh": gh.URL, "jira": jira.URL})}, mcpcall.Caller{ID: "k1", Key: "k1"})
	for _, v := range versions {
		t.Run("version="+v, func(t *testing.T) {
			s := mcptest.Connect(t, url, nil, v)
			got := toolNames(t, s)
			slices.Sort(got)
			if want := []string{"gh__create_issue", "gh__search", "jira__search"}; !slices.Equal(got, want) {
				t.Fatalf("tools %v, want %v", got, want)
			}
			for _, c := range []struct{ name, want string }{{"gh__search", "gh:x"}, {"jira__search", "jira:x"}} {
				res, err := call(s, c.name, map[string]any{"text": "x"})
				if err != nil || text(t, res) != c.want {
					t.Fatalf("%s: %v %v, want %q", c.name, res, err, c.want)
				}
			}
			if c := rec.last(t); c.Server != "jira" || c.Name != "search" || c.Outcome != record.ToolCallOK || c.Key != "k1" || c.ArgumentBytes == 0 || c.ResultBytes == 0 {
				t.Errorf("record %+v", c)
			}
		})
	}
}

func TestAccessPerKey(t *testing.T) {
	gh := mcptest.NewUpstream(t, "github", func(s *sdk.Server) {
		mcptest.Echo("search", "")(s)
		mcptest.Echo("delete_repo", "")(s)
	})
	jira := mcptest.NewUpstream(t, "jira", mcptest.Echo("search", ""))
	srv := servers(map[string]string{"gh": gh.URL, "jira": jira.URL})
	srv["gh"].Tools = config.MCPToolFilter{Deny: []string{"delete_*"}}
	cases := []struct {
		name    string
		access  *config.MCPAccess
		listed  []string
		refused map[string]string // tool -> what the error says
	}{
		{"everything", nil, []string{"gh__search", "jira__search"},
			map[string]string{"gh__delete_repo": "does not offer it through the gateway"}},
		{"one server", &config.MCPAccess{Servers: []string{"jira"}}, []string{"jira__search"},
			map[string]string{"gh__search": "tool gh__search: not allowed for this key"}},
		{"tool globs", &config.MCPAccess{Tools: []string{"gh__*"}}, []string{"gh__search"},
			map[string]string{"jira__search": "tool jira__search: not allowed", "nope__x": "unknown", "plain": "unknown"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, rec := gateway(t, mcp.Options{Servers: srv}, mcpcall.Caller{ID: "k", Access: c.access})
			s := mcptest.Connect(t, url, nil, "")
			got := toolNames(t, s)
			slices.Sort(got)
			if !slices.Equal(got, c.listed) {
				t.Errorf("listed %v, want %v", got, c.listed)
			}
			for tool, want := range c.refused {
				_, err := call(s, tool, map[string]any{"text": "x"})
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want a JSON-RPC error saying %q", tool, err, want)
				}
				if r := rec.last(t); r.Outcome != record.ToolCallRefused {
					t.Errorf("%s recorded %+v", tool, r)
				}
			}
			// The session survives a refusal: it is an error of the call, not of the transport.
			if _, err := s.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestUpstreamCredentialsInjected(t *testing.T) {
	up := mcptest.NewUpstream(t, "gh", mcptest.Echo("echo", ""))
	srv := servers(map[string]string{"gh": up.URL})
	srv["gh"].BearerToken = "upstream-token"
	srv["gh"].Headers = map[string]string{"X-Tenant": "acme"}
	url, _ := gateway(t, mcp.Options{Servers: srv}, mcpcall.Caller{ID: "k"})
	s := mcptest.Connect(t, url, http.Header{"Authorization": {"Bearer sk-gateway-key"}, "X-Client": {"c"}}, "2025-06-18")
	res, err := call(s, "gh__echo", map[string]any{"text": "upstream-token?"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range up.Headers() {
		if h.Get("Authorization") != "Bearer upstream-token" || h.Get("X-Tenant") != "acme" {
			t.Errorf("upstream got Authorization %q X-Tenant %q", h.Get("Authorization"), h.Get("X-Tenant"))
		}
		if h.Get("X-Client") != "" {
			t.Error("a client header reached the upstream")
		}
	}
	if len(up.Headers()) == 0 {
		t.Fatal("the upstream got nothing")
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "sk-gateway-key") {
		t.Error("the gateway key came back")
	}
}

func TestUpstreamFailures(t *testing.T) {
	slow := mcptest.NewUpstream(t, "slow", func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			return &sdk.CallToolResult{}, nil, nil
		})
	})
	huge := mcptest.NewUpstream(t, "huge", func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "dump"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 200<<10)}}}, nil, nil
		})
	})
	failing := mcptest.NewUpstream(t, "failing", func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "fail"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "rate limited by github"}}}, nil, nil
		})
	})
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":`))
	}))
	t.Cleanup(garbage.Close)
	down := httptest.NewServer(nil)
	down.Close()

	srv := servers(map[string]string{"slow": slow.URL, "huge": huge.URL, "failing": failing.URL, "garbage": garbage.URL, "down": down.URL, "ok": mcptest.NewUpstream(t, "ok", mcptest.Echo("echo", "")).URL})
	srv["slow"].Timeout = config.Duration(300 * time.Millisecond)
	url, rec := gateway(t, mcp.Options{Servers: srv, MaxResultBytes: 100 << 10}, mcpcall.Caller{ID: "k"})
	s := mcptest.Connect(t, url, nil, "")

	// Servers that cannot be listed are left out; the others are listed.
	got := toolNames(t, s)
	slices.Sort(got)
	if want := []string{"failing__fail", "huge__dump", "ok__echo", "slow__wait"}; !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	cases := []struct {
		tool    string
		says    string
		outcome string
	}{
		{"slow__wait", "server slow did not answer within 300ms", record.ToolCallTimeout},
		{"huge__dump", "passed the gateway's bound of 102400 bytes", record.ToolCallTooLarge},
		{"garbage__x", "tool garbage__x: server garbage failed", record.ToolCallUpstream},
		{"down__x", "tool down__x: server down failed", record.ToolCallUpstream},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			_, err := call(s, c.tool, map[string]any{})
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("%v, want an error saying %q", err, c.says)
			}
			if r := rec.last(t); r.Outcome != c.outcome {
				t.Errorf("outcome %q, want %q", r.Outcome, c.outcome)
			}
		})
	}
	res, err := call(s, "failing__fail", map[string]any{})
	if err != nil || !res.IsError || text(t, res) != "rate limited by github" {
		t.Errorf("a tool's own failure: %v %v", res, err)
	}
	if r := rec.last(t); r.Outcome != record.ToolCallToolError {
		t.Errorf("outcome %q", r.Outcome)
	}
	// The gateway and its other servers are untouched.
	if res, err := call(s, "ok__echo", map[string]any{"text": "still here"}); err != nil || text(t, res) != "still here" {
		t.Errorf("after the failures: %v %v", res, err)
	}
}

func TestMethodsAndBounds(t *testing.T) {
	up := mcptest.NewUpstream(t, "gh", mcptest.Echo("echo", ""))
	url, _ := gateway(t, mcp.Options{Servers: servers(map[string]string{"gh": up.URL}), MaxMessageBytes: 1 << 10}, mcpcall.Caller{ID: "k"})
	cases := []struct {
		method, body string
		status       int
		allow        string
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed, "POST, DELETE"},
		{http.MethodPut, "", http.StatusMethodNotAllowed, "POST, DELETE"},
		{http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`, http.StatusRequestEntityTooLarge, ""},
		{http.MethodDelete, "", http.StatusBadRequest, ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, url, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s: %d Allow %q, want %d %q", c.method, resp.StatusCode, resp.Header.Get("Allow"), c.status, c.allow)
		}
	}
}

func TestSSEUpstreamRefusedWhereNotAllowed(t *testing.T) {
	_, err := mcp.New(mcp.Options{Servers: map[string]*config.MCPServer{"old": {URL: "http://127.0.0.1:1/sse", Transport: config.MCPTransportSSE}}})
	if err == nil || !strings.Contains(err.Error(), "mcp_servers.old: the sse transport holds a connection open") {
		t.Fatalf("%v", err)
	}
}

package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/clients/internal/agents"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	fnmcp "github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// The upstream's own credential, which only the gateway holds, and the text its echo tool
// answers with, which only the upstream makes: found in a client's answer, it crossed
// client -> gateway /mcp -> upstream -> gateway -> client -> model (the mock) -> client.
const (
	upstreamSecret = "upstream-secret"
	upstreamSays   = "UPSTREAM-ECHO-5d1c says: "
	mcpKey         = "sk-gw-mcp-agent-0123456789"
)

// mcpConfig routes mcp-echo to the mock's tool:gh__echo, which calls the gateway's gh__echo
// however the client prefixes it (mcp__fngate__gh__echo for both clients here).
func mcpConfig(upstream string) string {
	return fmt.Sprintf(`
keys:
  - {name: agent, value: %s}
connections:
  mock: {kind: mock}
models:
  mcp-echo: {routes: [{connection: mock, model: 'tool:gh__echo:{"text":"hi"}'}]}
mcp_servers:
  gh: {url: %s, bearer_token: %s}
`, mcpKey, upstream, upstreamSecret)
}

// mcpGateway serves yaml as serve does, with /mcp as the local server builds it: its
// mcp_servers, sessions in memory (Codex opens one).
func mcpGateway(t *testing.T, yaml string) (string, *gatewaytest.LogBuffer) {
	t.Helper()
	cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: func(string) string { return "" }})
	h, err := fnmcp.ForConfig(cfg, mcpsessions.NewMemory(), nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return serveWith(t, yaml, func(o *gateway.Options) { o.MCP = h })
}

// mcpUpstream is an MCP server written with the official Go SDK, as the servers a gateway
// fronts are, with one tool, echo. It records the credentials of every request it got and
// of each call of echo.
type mcpUpstream struct {
	url string

	mu      sync.Mutex
	headers []http.Header // of every request
	calls   []string      // the Authorization of each call of echo, with its text
}

func startMCPUpstream(t *testing.T) *mcpUpstream {
	t.Helper()
	u := &mcpUpstream{}
	s := mcp.NewServer(&mcp.Implementation{Name: "gh", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"}, func(_ context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		auth := req.Extra.Header.Get("Authorization")
		u.mu.Lock()
		u.calls = append(u.calls, auth+" "+in.Text)
		u.mu.Unlock()
		if auth != "Bearer "+upstreamSecret {
			// What a real server answers a caller it does not know: no echo to find.
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "unauthorized"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: upstreamSays + in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.headers = append(u.headers, r.Header.Clone())
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL + "/mcp"
	return u
}

// check fails the test unless echo was called, each time with the upstream's own token and
// the route's arguments, and no request brought the gateway key in any header.
func (u *mcpUpstream) check(t *testing.T) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.calls) == 0 {
		t.Errorf("the upstream's echo was never called (%d requests reached it)", len(u.headers))
	}
	for _, c := range u.calls {
		if c != "Bearer "+upstreamSecret+" hi" {
			t.Errorf("echo called as %q, want with the upstream's token and the text hi", c)
		}
	}
	for _, h := range u.headers {
		for name, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, mcpKey) {
					t.Errorf("the gateway key reached the upstream in %s: %q", name, v)
				}
			}
		}
	}
}

// mcpAnswers are the statuses /mcp answers a client that works: a notification's 202, the
// 405 of the standing GET stream the gateway does not hold (Codex asks for one after
// initialize, and goes on without it, as the protocol has it), a session's DELETE's 204, and
// 499: Codex closes a POST's event stream once it has read the answer, and exits without
// waiting for its DELETE's, which the gateway logs as the client gone when it sees the close
// before the handler returns (the forwarded call's own line says how the call went).
var mcpAnswers = map[float64]bool{200: true, 202: true, 204: true, 405: true, 499: true}

// served fails the test unless the gateway answered every request the client sent (the
// clients retry what fails), at least n of them on the model door endpoint and some on /mcp,
// and logged the forwarded call of gh's echo, made with the client's key.
func served(t *testing.T, logs *gatewaytest.LogBuffer, endpoint string, n int) {
	t.Helper()
	got := map[any]int{}
	for _, r := range requests(t, logs) {
		got[r["endpoint"]]++
		status, _ := r["status"].(float64)
		if status != 200 && !(r["endpoint"] == record.EndpointMCP && mcpAnswers[status]) {
			t.Errorf("the gateway did not serve a request the client sent: %v", r)
		}
	}
	if got[endpoint] < n || got[record.EndpointMCP] == 0 {
		t.Errorf("requests by endpoint %v, want at least %d on %s and some on /mcp", got, n, endpoint)
	}
	calls := logs.Lines(t, record.MsgToolCall)
	if len(calls) != 1 || calls[0]["server"] != "gh" || calls[0]["tool"] != "echo" || calls[0]["outcome"] != record.ToolCallOK || calls[0]["key"] != "agent" {
		t.Errorf("tool call lines %v, want gh's echo called once by the key agent", calls)
	}
}

// TestClaudeCodeCallsAnMCPToolThroughTheGateway: claude -p with the gateway's /mcp as an http
// MCP server (the gateway key as its Bearer) lists the upstream's echo as
// mcp__fngate__gh__echo; the mock calls it, Claude Code calls the gateway, the gateway the
// upstream with the upstream's own token, and the upstream's text comes back through the
// model into Claude Code's answer.
func TestClaudeCodeCallsAnMCPToolThroughTheGateway(t *testing.T) {
	up := startMCPUpstream(t)
	url, logs := mcpGateway(t, mcpConfig(up.url))
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fngate": map[string]any{
		"type": "http", "url": url + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + mcpKey}}}})
	run := agents.Claude(t, agents.ClaudeOptions{BaseURL: url, APIKey: mcpKey, Model: "mcp-echo", Prompt: "Echo hi through the gh server.",
		// The MCP tool sent whole, not behind ToolSearch, for the mock to find among the
		// built-in ones; --allowedTools lets -p run it without a prompt, and
		// --strict-mcp-config keeps any other MCP configuration out.
		AllowedTools: []string{"mcp__fngate__gh__echo"}, DisableToolSearch: true,
		Args: []string{"--mcp-config", string(servers), "--strict-mcp-config"}})
	if run.ExitCode != 0 || !strings.Contains(run.Text(), upstreamSays+"hi") {
		t.Fatalf("exit %d, answer %q\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", run.ExitCode, run.Text(), run.Stdout, run.Stderr, logs.String())
	}
	up.check(t)
	served(t, logs, "messages", 2)
}

// TestCodexCallsAnMCPToolThroughTheGateway: codex exec with the gateway's /mcp in its
// mcp_servers (streamable HTTP, the gateway key from an environment variable as its bearer
// token, its tools approved without asking) offers the upstream's echo in the namespace
// mcp__fngate; the Responses door offers the mock mcp__fngate__gh__echo and gives its call
// back as {namespace: mcp__fngate, name: gh__echo}, Codex calls the gateway, the gateway the
// upstream with the upstream's own token, and the upstream's text reaches Codex's answer.
func TestCodexCallsAnMCPToolThroughTheGateway(t *testing.T) {
	up := startMCPUpstream(t)
	url, logs := mcpGateway(t, mcpConfig(up.url))
	// Codex asks before an MCP tool runs, and exec's approval policy (never) turns the ask
	// into a refusal; approve runs the server's tools without asking.
	config := fmt.Sprintf(`
[mcp_servers.fngate]
url = %q
bearer_token_env_var = "FNGATE_MCP_TOKEN"
default_tools_approval_mode = "approve"
`, url+"/mcp")
	run := agents.Codex(t, agents.CodexOptions{BaseURL: url, APIKey: mcpKey, Model: "mcp-echo", Prompt: "Echo hi through the gh server.",
		Config: config, Env: []string{"FNGATE_MCP_TOKEN=" + mcpKey}})
	if run.ExitCode != 0 || run.Failure() != "" || !strings.Contains(run.Text(), upstreamSays+"hi") {
		t.Fatalf("exit %d, failure %q, answer %q\nconfig:\n%s\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", run.ExitCode, run.Failure(), run.Text(),
			run.ConfigTOML, run.Stdout, run.Stderr, logs.String())
	}
	called := false
	for _, e := range run.Events {
		var ev struct {
			Item struct {
				Type, Server, Tool, Status string
			} `json:"item"`
		}
		if e.Type == "item.completed" && json.Unmarshal(e.Raw, &ev) == nil && ev.Item.Type == "mcp_tool_call" {
			called = ev.Item.Server == "fngate" && ev.Item.Tool == "gh__echo" && ev.Item.Status == "completed"
		}
	}
	if !called {
		t.Errorf("no completed mcp_tool_call of fngate's gh__echo among Codex's events:\n%s", run.Stdout)
	}
	up.check(t)
	served(t, logs, "responses", 2)
}

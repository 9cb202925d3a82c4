package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpauth"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/mcptest"
	"github.com/fngate/fngate/internal/oidcfake"
)

const mcpModels = `
connections:
  mock: {kind: mock}
models:
  m:
    routes:
      - {connection: mock, model: echo}
`

// mcpGateway serves yaml with its mcp_servers at /mcp.
func mcpGateway(t *testing.T, yaml string, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: func(string) string { return "" }})
	h, err := mcp.ForConfig(cfg, nil, nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return newGateway(t, yaml, append([]func(*gateway.Options){func(o *gateway.Options) { o.MCP = h }}, opts...)...)
}

func bearerHeader(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

func TestMCPThroughTheGateway(t *testing.T) {
	gh := mcptest.NewUpstream(t, "github", func(s *sdk.Server) {
		mcptest.Echo("search", "gh:")(s)
		mcptest.Echo("admin", "admin:")(s)
	})
	jira := mcptest.NewUpstream(t, "jira", mcptest.Echo("search", "jira:"))
	gw := mcpGateway(t, mcpModels+`
mcp_servers:
  gh: {url: "`+gh.URL+`", bearer_token: upstream-secret-gh}
  jira: {url: "`+jira.URL+`", headers: {X-Api-Key: upstream-secret-jira}}
keys:
  - {name: all, value: sk-all}
  - {name: narrow, value: sk-narrow, mcp: {servers: [gh], tools: [gh__search]}}
  - {name: limited, value: sk-limited, rate: {tool_calls_per_minute: 2}}
`)
	url := gw.URL + "/mcp"

	t.Run("keys", func(t *testing.T) {
		for _, h := range []http.Header{nil, bearerHeader("sk-wrong")} {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			for k, v := range h {
				req.Header[k] = v
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("key %q: %d", h.Get("Authorization"), resp.StatusCode)
			}
		}
	})

	for _, v := range []string{"", "2025-06-18"} {
		t.Run("access version="+v, func(t *testing.T) {
			all := mcptest.Connect(t, url, bearerHeader("sk-all"), v)
			res, err := all.ListTools(context.Background(), nil)
			if err != nil || len(res.Tools) != 3 {
				t.Fatalf("all: %v %v", res, err)
			}
			narrow := mcptest.Connect(t, url, bearerHeader("sk-narrow"), v)
			res, err = narrow.ListTools(context.Background(), nil)
			if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "gh__search" {
				t.Fatalf("narrow: %+v %v", res, err)
			}
			if _, err := narrow.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__admin", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), "tool gh__admin: not allowed for this key") {
				t.Errorf("narrow calls gh__admin: %v", err)
			}
			out, err := narrow.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__search", Arguments: map[string]any{"text": "q"}})
			if err != nil || out.Content[0].(*sdk.TextContent).Text != "gh:q" {
				t.Fatalf("narrow calls gh__search: %v %v", out, err)
			}
			if out, err := all.CallTool(context.Background(), &sdk.CallToolParams{Name: "jira__search", Arguments: map[string]any{"text": "q"}}); err != nil || out.Content[0].(*sdk.TextContent).Text != "jira:q" {
				t.Fatalf("all calls jira__search: %v %v", out, err)
			}
		})
	}

	// Each upstream saw its own credentials and never a gateway key.
	for name, up := range map[string]*mcptest.Upstream{"gh": gh, "jira": jira} {
		for _, h := range up.Headers() {
			for k, vs := range h {
				for _, v := range vs {
					if strings.Contains(v, "sk-") {
						t.Errorf("%s got a gateway key in %s", name, k)
					}
				}
			}
			if name == "gh" && h.Get("Authorization") != "Bearer upstream-secret-gh" || name == "jira" && h.Get("X-Api-Key") != "upstream-secret-jira" {
				t.Errorf("%s got %v", name, h)
			}
		}
	}

	t.Run("tool_calls_per_minute", func(t *testing.T) {
		s := mcptest.Connect(t, url, bearerHeader("sk-limited"), "")
		for i := range 3 {
			_, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__search", Arguments: map[string]any{"text": "q"}})
			if i < 2 && err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if i == 2 && (err == nil || !strings.Contains(err.Error(), "tool gh__search: rate limit reached: this key's tool_calls_per_minute is 2")) {
				t.Fatalf("call %d: %v, want the rate limit", i, err)
			}
		}
		// Lists are not tool calls.
		if _, err := s.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	})

	lines := gw.logs.Lines(t, "mcp_tool_call")
	var narrowOK, refused, limited bool
	for _, l := range lines {
		switch {
		case l["key"] == "narrow" && l["server"] == "gh" && l["tool"] == "search" && l["outcome"] == "ok":
			narrowOK = l["argument_bytes"].(float64) > 0 && l["result_bytes"].(float64) > 0 && l["latency_ms"] != nil && l["arguments"] == nil
		case l["key"] == "narrow" && l["outcome"] == "refused":
			refused = true
		case l["key"] == "limited" && l["outcome"] == "rate_limited":
			limited = true
		}
	}
	if !narrowOK || !refused || !limited {
		t.Errorf("tool call lines (ok %v, refused %v, limited %v):\n%v", narrowOK, refused, limited, lines)
	}
	found := false
	for _, l := range gw.logs.Lines(t, "request") {
		found = found || l["endpoint"] == "mcp" && l["status"] == float64(200)
	}
	if !found {
		t.Error("no request line for /mcp")
	}
}

func TestMCPWithoutAHandler(t *testing.T) {
	cfg := gatewaytest.Config(t, mcpModels+"mcp_servers:\n  gh: {url: https://mcp.example.com/mcp}\n", config.Options{})
	if _, err := gateway.New(cfg, gateway.Options{Registry: registry()}); err == nil || !strings.Contains(err.Error(), "mcp build tag") {
		t.Fatalf("%v", err)
	}
	gw := newGateway(t, mcpModels)
	resp, err := http.Post(gw.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/mcp without mcp_servers: %d", resp.StatusCode)
	}
}

// An OAuth client's token for /mcp is accepted; one for another audience (the console) is
// not, and a client without a token learns where to get one.
func TestMCPOAuthCallers(t *testing.T) {
	iss, err := oidcfake.Start(oidcfake.Options{ClientID: "console-client"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	up := mcptest.NewUpstream(t, "gh", mcptest.Echo("search", "gh:"))
	var verifier *mcpauth.Verifier
	yaml := mcpModels + `
mcp_servers:
  gh: {url: "` + up.URL + `"}
  other: {url: "http://127.0.0.1:1/mcp"}
keys:
  - {name: app, value: sk-app}
mcp_oauth:
  issuer: "` + iss.URL + `"
  resource: http://127.0.0.1/mcp
  scopes: [mcp]
  access: {servers: [gh]}
`
	cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: func(string) string { return "" }})
	verifier = mcpauth.New(cfg.MCPOAuth, nil)
	gw := mcpGateway(t, yaml, func(o *gateway.Options) { o.MCPOAuth = verifier })
	url := gw.URL + "/mcp"

	good := iss.Mint(oidcfake.Claims{"aud": "http://127.0.0.1/mcp", "scope": "mcp", "sub": "dev-1"})
	s := mcptest.Connect(t, url, bearerHeader(good), "")
	res, err := s.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "gh__search" {
		t.Fatalf("an OAuth caller lists %+v %v (mcp_oauth.access allows gh alone)", res, err)
	}
	if out, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__search", Arguments: map[string]any{"text": "x"}}); err != nil || out.IsError {
		t.Fatal(out, err)
	}
	if l := gw.logs.Lines(t, "mcp_tool_call"); len(l) == 0 || l[len(l)-1]["key"] != "oauth:dev-1" {
		t.Errorf("tool call line %v", l)
	}
	for _, h := range up.Headers() {
		if h.Get("Authorization") != "" {
			t.Error("the caller's token reached the upstream")
		}
	}

	post := func(token string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	meta := `resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`
	for name, tc := range map[string]struct {
		token  string
		status int
		header string
	}{
		"no token":          {"", 401, `Bearer ` + meta + `, scope="mcp"`},
		"the console token": {iss.Mint(oidcfake.Claims{"scope": "mcp"}), 401, `error="invalid_token"`},
		"no scope":          {iss.Mint(oidcfake.Claims{"aud": "http://127.0.0.1/mcp"}), 403, `error="insufficient_scope"`},
		"a gateway key":     {"sk-app", 200, ""},
	} {
		resp := post(tc.token)
		if resp.StatusCode != tc.status || !strings.Contains(resp.Header.Get("WWW-Authenticate"), tc.header) {
			t.Errorf("%s: %d %q, want %d %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.status, tc.header)
		}
	}
	resp, err := http.Get(gw.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("metadata: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

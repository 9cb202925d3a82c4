package config_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
)

const mcpModels = `
connections:
  mock: {kind: mock}
models:
  m:
    routes:
      - {connection: mock, model: echo}
`

func TestMCPConfigRefusals(t *testing.T) {
	for _, tc := range []struct{ name, yaml, says string }{
		{"stdio", "mcp_servers:\n  fs: {command: npx, args: [server-fs]}\n", "mcp_servers.fs.command: stdio servers cannot run on cloud functions"},
		{"no url", "mcp_servers:\n  gh: {headers: {X-A: b}}\n", "mcp_servers.gh.url is required"},
		{"not http", "mcp_servers:\n  gh: {url: ftp://x/mcp}\n", "mcp_servers.gh.url must be an http(s) URL"},
		{"credentials in the url", "mcp_servers:\n  gh: {url: \"https://u:p@x/mcp\"}\n", "not in the URL"},
		{"separator in the name", "mcp_servers:\n  g__h: {url: https://x/mcp}\n", `mcp_servers.g__h: server names use letters, digits, '.', '_' and '-', without "__"`},
		{"bad transport", "mcp_servers:\n  gh: {url: https://x/mcp, transport: websocket}\n", "mcp_servers.gh.transport must be streamable or sse"},
		{"bearer and oauth", "mcp_servers:\n  gh: {url: https://x/mcp, bearer_token: t, oauth: {token_url: https://idp/token, client_id: a, client_secret: b}}\n", "give a bearer_token or oauth, not both"},
		{"authorization header and bearer", "mcp_servers:\n  gh: {url: https://x/mcp, bearer_token: t, headers: {Authorization: x}}\n", "the Authorization header would be replaced"},
		{"oauth without secret", "mcp_servers:\n  gh: {url: https://x/mcp, oauth: {token_url: https://idp/token, client_id: a}}\n", "client_id and client_secret are required"},
		{"oauth http token url", "mcp_servers:\n  gh: {url: https://x/mcp, oauth: {token_url: http://idp.example.com/token, client_id: a, client_secret: b}}\n", "mcp_servers.gh.oauth.token_url must be the authorization server's https token endpoint"},
		{"long timeout", "mcp_servers:\n  gh: {url: https://x/mcp, timeout: 1h}\n", "mcp_servers.gh.timeout must be at most 15m0s"},
		{"bad glob", "mcp_servers:\n  gh: {url: https://x/mcp, tools: {allow: [\"[\"]}}\n", `mcp_servers.gh.tools.allow[0]: bad glob "["`},
		{"key access without servers", "keys:\n  - {name: a, value: sk-a, mcp: {servers: [gh]}}\n", "keys[0].mcp: no mcp_servers are configured"},
		{"key access bad glob", "mcp_servers:\n  gh: {url: https://x/mcp}\nkeys:\n  - {name: a, value: sk-a, mcp: {tools: [\"gh__[\"]}}\n", `keys[0].mcp.tools[0]: bad glob`},
		{"negative tool rate", "mcp_servers:\n  gh: {url: https://x/mcp}\nkeys:\n  - {name: a, value: sk-a, rate: {tool_calls_per_minute: -1}}\n", "keys[0].rate: limits must not be negative"},
		{"sessions store", "mcp_sessions: {store: file}\n", "mcp_sessions.store must be memory, dynamodb, firestore or none"},
		{"sessions ttl", "mcp_sessions: {store: memory, ttl: 10s}\n", "mcp_sessions.ttl must be at least 1m0s"},
		{"sessions setting of another store", "mcp_sessions: {store: memory, table: t}\n", "mcp_sessions.table: the memory store has no table setting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseMCP(mcpModels + tc.yaml)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v\nwant an error saying %q", err, tc.says)
			}
		})
	}
}

type fakeResolver map[string]string

func (f fakeResolver) Resolve(_ context.Context, ref string) (string, error) { return f[ref], nil }

func TestMCPConfigAccepted(t *testing.T) {
	yaml := mcpModels + `
mcp_servers:
  github:
    url: https://mcp.example.com/mcp
    headers: {X-Api-Key: "aws-sm://mcp/github#key"}
    timeout: 30s
    tools: {allow: ["search_*"], deny: [search_private]}
  jira: {url: "https://jira.example.com/mcp", bearer_token: "${JIRA_TOKEN}"}
  idp:
    url: https://tools.example.com/mcp
    oauth: {token_url: https://idp.example.com/token, client_id: gw, client_secret: "aws-sm://mcp/idp#secret", scopes: [tools]}
  legacy: {url: https://old.example.com/sse, transport: sse}
keys:
  - {name: app, value: sk-app, mcp: {servers: [github], tools: ["github__search_*"]}, rate: {tool_calls_per_minute: 30}}
mcp_sessions: {store: dynamodb, table: fngate-mcp-sessions}
`
	cfg, err := config.Parse(context.Background(), []byte(yaml), config.Options{
		Getenv:  func(k string) string { return map[string]string{"JIRA_TOKEN": "jira-secret"}[k] },
		Secrets: map[string]config.SecretResolver{config.SchemeAWS: fakeResolver{"aws-sm://mcp/github#key": "gh-secret", "aws-sm://mcp/idp#secret": "idp-secret"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	gh := cfg.MCPServers["github"]
	if gh.Name != "github" || gh.Headers["X-Api-Key"] != "gh-secret" || gh.Timeout.D() != 30*time.Second || gh.Transport != config.MCPTransportStreamable {
		t.Errorf("github %+v", gh)
	}
	if cfg.MCPServers["jira"].BearerToken != "jira-secret" || cfg.MCPServers["idp"].OAuth.ClientSecret != "idp-secret" {
		t.Error("secrets not resolved")
	}
	for _, s := range []string{"gh-secret", "jira-secret", "idp-secret"} {
		found := false
		for _, v := range cfg.Secrets {
			found = found || v == s
		}
		if !found {
			t.Errorf("%s is not among the secrets logs blank", s)
		}
	}
	if k := cfg.Keys[0]; k.MCP == nil || k.MCP.Servers[0] != "github" || k.Rate.ToolCallsPerMinute != 30 {
		t.Errorf("key %+v", k)
	}
	if s := cfg.MCPSessions; s.Kind != config.StoreDynamoDB || s.TTL.D() != config.DefaultMCPSessionTTL || s.Timeout.D() != config.DefaultStoreTimeout {
		t.Errorf("sessions %+v", s)
	}

	// The control plane serves no /mcp and holds no grant on its secrets.
	cfg, err = config.Parse(context.Background(), []byte(yaml), config.Options{
		Getenv:     func(k string) string { return "x" },
		Secrets:    map[string]config.SecretResolver{config.SchemeAWS: fakeResolver{}},
		WithoutMCP: true,
	})
	if err != nil || cfg.MCPServers["github"].Headers["X-Api-Key"] != "aws-sm://mcp/github#key" {
		t.Errorf("WithoutMCP: %v", err)
	}
}

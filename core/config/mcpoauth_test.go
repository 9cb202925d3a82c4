package config_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

func parseMCP(yaml string) (*config.Config, error) {
	return config.Parse(context.Background(), []byte(yaml), config.Options{Getenv: func(string) string { return "" }})
}

const mcpBase = `
connections:
  mock: {kind: mock}
models:
  m:
    routes:
      - {connection: mock, model: echo}
mcp_servers:
  github: {url: "https://mcp.example.com/github"}
`

// Each mcp_oauth mistake is refused with the path and line marked "# <-" and the reason.
func TestMCPOAuthRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, path, why string
	}{
		{"no issuer", `
mcp_oauth:
  resource: https://gw.example.com/mcp # <-
`, "mcp_oauth.issuer", " is required"},
		{"an http issuer", `
mcp_oauth:
  issuer: http://idp.example.com # <-
  resource: https://gw.example.com/mcp
`, "mcp_oauth.issuer", " must be the authorization server's https URL"},
		{"an issuer that is no URL", `
mcp_oauth:
  issuer: idp.example.com # <-
  resource: https://gw.example.com/mcp
`, "mcp_oauth.issuer", " must be the authorization server's https URL"},
		{"no resource", `
mcp_oauth:
  issuer: https://idp.example.com # <-
`, "mcp_oauth.resource", " is required"},
		{"a relative resource", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: /mcp # <-
`, "mcp_oauth.resource", " must be an absolute URL"},
		{"an http resource", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: http://gw.example.com/mcp # <-
`, "mcp_oauth.resource", " must be an https URL"},
		{"a resource that is not /mcp", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: https://gw.example.com/ # <-
`, "mcp_oauth.resource", " must be the URL of the /mcp endpoint"},
		{"a resource with a trailing slash", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: https://gw.example.com/mcp/ # <-
`, "mcp_oauth.resource", " must be the URL of the /mcp endpoint"},
		{"a resource with a fragment", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: "https://gw.example.com/mcp#x" # <-
`, "mcp_oauth.resource", " must not have a fragment"},
		{"a resource with a query", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: "https://gw.example.com/mcp?tenant=a" # <-
`, "mcp_oauth.resource", " must not have a query"},
		{"an empty scope", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: https://gw.example.com/mcp
  scopes:
    - mcp
    - "" # <-
`, "mcp_oauth.scopes[1]", ": a scope is a non-empty string without spaces"},
		{"two scopes in one", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: https://gw.example.com/mcp
  scopes:
    - "mcp:read mcp:write" # <-
`, "mcp_oauth.scopes[0]", ": a scope is a non-empty string without spaces"},
		{"an unknown server", `
mcp_oauth:
  issuer: https://idp.example.com
  resource: https://gw.example.com/mcp
  access:
    servers:
      - github
      - gitlab # <-
`, "mcp_oauth.access.servers[1]", ` "gitlab" is not a configured mcp_servers entry`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := mcpBase + tc.yaml
			where := fmt.Sprintf("line %d: %s%s", markedLine(t, yaml), tc.path, tc.why)
			_, err := parseMCP(yaml)
			if err == nil {
				t.Fatal("the config was accepted")
			}
			if !strings.Contains(err.Error(), where) {
				t.Errorf("error %q\nwant it to contain %q", err, where)
			}
		})
	}
}

// What the refusals above must let through: https, loopback http for tests, a resource
// under a stage path.
func TestMCPOAuthAccepted(t *testing.T) {
	for _, tc := range []struct{ issuer, resource string }{
		{"https://idp.example.com", "https://gw.example.com/mcp"},
		{"https://idp.example.com/realms/fngate", "https://api.example.com/prod/mcp"},
		{"http://127.0.0.1:8081", "http://127.0.0.1:8080/mcp"},
		{"http://localhost:8081", "http://localhost:8080/mcp"},
		{"http://[::1]:8081", "http://[::1]:8080/mcp"},
	} {
		yaml := mcpBase + fmt.Sprintf("mcp_oauth:\n  issuer: %q\n  resource: %q\n  scopes: [mcp]\n  access: {servers: [github]}\n", tc.issuer, tc.resource)
		cfg, err := parseMCP(yaml)
		if err != nil {
			t.Errorf("%s %s: %v", tc.issuer, tc.resource, err)
			continue
		}
		if cfg.MCPOAuth == nil || cfg.MCPOAuth.Resource != tc.resource {
			t.Errorf("%s: mcp_oauth = %+v", tc.resource, cfg.MCPOAuth)
		}
	}
}

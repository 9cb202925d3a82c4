package config

import (
	"fmt"
	"net/url"
	"strings"
)

// validate checks mcp_oauth when it is set (nil: /mcp takes no OAuth tokens); servers are
// the configured mcp_servers, which access.servers must name.
func (o *MCPOAuth) validate(bad *problems, servers map[string]*MCPServer) {
	if o == nil {
		return
	}
	const p = "mcp_oauth"
	if o.Issuer == "" {
		bad.add(p+".issuer", " is required: the authorization server whose tokens /mcp accepts")
	} else if u, err := url.Parse(o.Issuer); err != nil || !secureOrLoopback(u) || u.Host == "" {
		bad.add(p+".issuer", " must be the authorization server's https URL (http only on loopback, for tests), got %q", o.Issuer)
	}
	if o.Resource == "" {
		bad.add(p+".resource", " is required: the /mcp endpoint's own URL, which tokens must name as their audience")
	} else if why := checkResource(o.Resource); why != "" {
		bad.add(p+".resource", " %s, got %q", why, o.Resource)
	}
	for i, s := range o.Scopes {
		// A scope is one token of the space-separated scope claim and of the challenge's
		// scope attribute (RFC 6749 3.3): a space would split it into two.
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			bad.add(fmt.Sprintf("%s.scopes[%d]", p, i), ": a scope is a non-empty string without spaces or quotes, got %q", s)
		}
	}
	for i, s := range o.Access.Servers {
		if _, ok := servers[s]; !ok {
			bad.add(fmt.Sprintf("%s.access.servers[%d]", p, i), " %q is not a configured mcp_servers entry", s)
		}
	}
}

// checkResource says what is wrong with a resource identifier, or "". Clients learn it from
// the protected resource metadata and send it as RFC 8707's resource parameter; the
// authorization server copies it into the token's audience, which is then compared byte for
// byte, so it must be the canonical URI of the endpoint itself.
func checkResource(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return "must be an absolute URL such as https://gw.example.com/mcp"
	case !secureOrLoopback(u):
		return "must be an https URL (http only on loopback, for tests)"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not have a fragment (RFC 8707)"
	case u.RawQuery != "" || u.ForceQuery:
		// The metadata's well-known URL is built from the path, and the gateway routes by
		// path alone: a query would leave the metadata unreachable.
		return "must not have a query"
	case !strings.HasSuffix(u.Path, "/mcp"):
		return "must be the URL of the /mcp endpoint (its path ends in /mcp)"
	}
	return ""
}

// secureOrLoopback reports whether u is https, or http on a loopback host (tests and local
// runs, where there is no certificate to present).
func secureOrLoopback(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())
}

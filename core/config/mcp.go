package config

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

// MCPServer is one upstream MCP server the gateway's /mcp aggregates (mcp_servers.<name>).
type MCPServer struct {
	Name string `yaml:"-"`
	// URL is the server's endpoint: streamable HTTP (the default transport), or the legacy
	// SSE transport's stream URL with transport: sse, which holds one long connection and is
	// served only where an instance may hold one (the local server, Cloud Functions).
	URL       string `yaml:"url"`
	Transport string `yaml:"transport"`
	// Command and Args would start a stdio server; a cloud function cannot, so they are
	// refused at load with that reason.
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	// Headers are sent on every request to the server (static credentials); BearerToken is
	// sent as Authorization: Bearer; OAuth gets a token with the client credentials grant.
	// Each may be a secret reference (aws-sm://, gcp-sm://) or ${ENV}.
	Headers     map[string]string     `yaml:"headers"`
	BearerToken string                `yaml:"bearer_token"`
	OAuth       *MCPClientCredentials `yaml:"oauth"`
	// Timeout bounds one call to the server (DefaultMCPTimeout when 0).
	Timeout Duration `yaml:"timeout"`
	// Tools narrows what the server offers through the gateway: its tool names (not
	// namespaced), path.Match globs; deny wins over allow, an empty allow allows all.
	Tools MCPToolFilter `yaml:"tools"`
}

// MCP transports of an upstream.
const (
	MCPTransportStreamable = "streamable"
	MCPTransportSSE        = "sse"
)

// MCPToolFilter is a server's tool allowlist and denylist.
type MCPToolFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// MCPClientCredentials is OAuth 2.0's client credentials grant, for upstreams that take tokens
// from an authorization server.
type MCPClientCredentials struct {
	TokenURL     string   `yaml:"token_url"`
	ClientID     string   `yaml:"client_id"`
	ClientSecret string   `yaml:"client_secret"`
	Scopes       []string `yaml:"scopes"`
	// Resource is RFC 8707's resource indicator, the upstream's URI, that MCP's authorization
	// spec has clients send; the upstream's URL when empty.
	Resource string `yaml:"resource"`
}

// MCPAccess is what a caller of /mcp may use: servers by name and namespaced tools
// (<server>__<tool>) by path.Match glob; an empty list allows all of its kind.
type MCPAccess struct {
	Servers []string `yaml:"servers"`
	Tools   []string `yaml:"tools"`
}

// MCPSessions is where the sessions of the MCP protocol versions that open one are kept
// (core/mcpsessions), so any instance continues them.
type MCPSessions struct {
	Store `yaml:",inline"`
	// TTL is how long a session lives after its last message (DefaultMCPSessionTTL when 0).
	TTL Duration `yaml:"ttl"`
}

// MCPOAuth accepts OAuth access tokens on /mcp, per MCP's authorization spec: JWTs from Issuer
// whose audience is Resource, the /mcp endpoint's own URI (RFC 8707).
type MCPOAuth struct {
	Issuer   string `yaml:"issuer"`
	Resource string `yaml:"resource"`
	// Scopes are required of every token, and announced in the protected resource metadata.
	Scopes []string `yaml:"scopes"`
	// Access is what OAuth callers may use.
	Access MCPAccess `yaml:"access"`
}

// MCP defaults and bounds.
const (
	DefaultMCPTimeout    = 60 * time.Second
	DefaultMCPSessionTTL = 24 * time.Hour
	// MaxMCPToolName is the longest namespaced tool name: what model APIs take as a function
	// name.
	MaxMCPToolName = 64
	// MCPNamespaceSeparator joins a server's name and its tool's.
	MCPNamespaceSeparator = "__"
	// DefaultMCPSessionsCollection is the Firestore collection when collection is not given.
	DefaultMCPSessionsCollection = "fngate_mcp_sessions"
)

var mcpSessionsStore = storeSection{
	name:  "mcp_sessions",
	kinds: []string{StoreMemory, StoreDynamoDB, StoreFirestore, StoreNone},
	settings: []storeSetting{{StoreDynamoDB, "table"},
		{StoreFirestore, "project"}, {StoreFirestore, "database"}, {StoreFirestore, "collection"}},
	platform: []string{StoreDynamoDB, StoreFirestore},
	own:      []string{"ttl"},
	timeout:  DefaultStoreTimeout,
}

// MinMCPSessionTTL keeps a session alive across the pauses of an agent's turn.
const MinMCPSessionTTL = time.Minute

func (c *Config) validateMCP(bad *problems) {
	for name, s := range c.MCPServers {
		p := "mcp_servers." + name
		if s == nil {
			bad.add(p, ": empty server: give its url")
			continue
		}
		s.Name = name
		if !validName(name) || strings.Contains(name, MCPNamespaceSeparator) {
			bad.add(p, ": server names use letters, digits, '.', '_' and '-', without %q (it joins a server's name to its tools')", MCPNamespaceSeparator)
		}
		if s.Command != "" || len(s.Args) > 0 {
			bad.add(p+".command", ": stdio servers cannot run on cloud functions (no process to spawn and keep between requests); serve it over streamable HTTP and give its url")
		}
		switch u, err := url.Parse(s.URL); {
		case s.URL == "":
			bad.add(p+".url", " is required: the server's streamable HTTP endpoint")
		case err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http":
			bad.add(p+".url", " must be an http(s) URL, got %q", s.URL)
		case u.User != nil:
			bad.add(p+".url", ": put credentials in headers, bearer_token or oauth, not in the URL")
		}
		switch s.Transport {
		case "":
			s.Transport = MCPTransportStreamable
		case MCPTransportStreamable, MCPTransportSSE:
		default:
			bad.add(p+".transport", " must be streamable or sse, got %q", s.Transport)
		}
		if s.BearerToken != "" && s.OAuth != nil {
			bad.add(p+".bearer_token", ": give a bearer_token or oauth, not both")
		}
		for h := range s.Headers {
			if strings.EqualFold(h, "Authorization") && (s.BearerToken != "" || s.OAuth != nil) {
				bad.add(p+".headers."+h, ": the Authorization header would be replaced by the bearer_token or oauth token")
			}
		}
		if o := s.OAuth; o != nil {
			if u, err := url.Parse(o.TokenURL); err != nil || !secureOrLoopback(u) || u.Host == "" {
				bad.add(p+".oauth.token_url", " must be the authorization server's https token endpoint, got %q", o.TokenURL)
			}
			if o.ClientID == "" || o.ClientSecret == "" {
				bad.add(p+".oauth", ": client_id and client_secret are required (the client credentials grant)")
			}
		}
		if t := s.Timeout.D(); t < 0 || t > MaxMCPTimeout {
			bad.add(p+".timeout", " must be at most %v, got %v", MaxMCPTimeout, t)
		}
		for kind, globs := range map[string][]string{"allow": s.Tools.Allow, "deny": s.Tools.Deny} {
			checkGlobs(bad, p+".tools."+kind, globs)
		}
	}
	check := func(p string, a *MCPAccess) {
		if a == nil {
			return
		}
		if len(c.MCPServers) == 0 {
			bad.add(p, ": no mcp_servers are configured")
		}
		checkGlobs(bad, p+".servers", a.Servers)
		checkGlobs(bad, p+".tools", a.Tools)
	}
	for i := range c.Keys {
		check(fmt.Sprintf("keys[%d].mcp", i), c.Keys[i].MCP)
		if _, ok := c.Keys[i].PerModel[mcpCounterScope]; ok {
			bad.add(fmt.Sprintf("keys[%d].per_model.%s", i, mcpCounterScope), ": %s is the counters' name for the key's tool calls, not a model glob", mcpCounterScope)
		}
	}
	if o := c.MCPOAuth; o != nil {
		check("mcp_oauth.access", &o.Access)
		if len(c.MCPServers) == 0 {
			bad.add("mcp_oauth", ": no mcp_servers are configured for OAuth callers to reach")
		}
	}
	s := &c.MCPSessions
	s.Store.validate(bad, &mcpSessionsStore, nil)
	switch t := s.TTL.D(); {
	case t == 0:
		s.TTL = Duration(DefaultMCPSessionTTL)
	case t < MinMCPSessionTTL:
		bad.add("mcp_sessions.ttl", " must be at least %v, got %v", MinMCPSessionTTL, t)
	}
}

// mcpCounterScope is the counters' scope of a key's tool calls (core/gateway's mcpScope).
const mcpCounterScope = "@mcp"

// MaxMCPTimeout bounds one upstream call: within what a function's invocation may last.
const MaxMCPTimeout = 15 * time.Minute

func checkGlobs(bad *problems, p string, globs []string) {
	for i, g := range globs {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			bad.add(fmt.Sprintf("%s[%d]", p, i), ": bad glob %q", g)
		}
	}
}

package config

import "time"

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

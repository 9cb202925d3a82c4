// Package mcpcall is what the gateway tells its MCP endpoint about one caller of /mcp: who it
// is, what it may use, and the hooks that limit, log and trace its calls. It is a leaf, so the
// gateway builds a Caller without linking the MCP SDK (core/mcp): a Lambda built without the
// mcp tag stays as small as before.
package mcpcall

import (
	"context"
	"path"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/record"
)

// Caller is one authenticated caller of /mcp.
type Caller struct {
	// ID is whom sessions belong to: a gateway key's id, or oauth:<subject>.
	ID string
	// Key and KeyID name the caller in log lines, as the gateway's other lines do.
	Key, KeyID string
	// Access is what the caller may use; nil allows every server and tool.
	Access *config.MCPAccess
	// Anonymous is an open gateway's caller (auth: none): nothing proves who it is, so the
	// endpoint guards it against DNS rebinding as a local MCP server must.
	Anonymous bool
	RequestID string
	// Admit counts one forwarded call against the caller's tool_calls_per_minute; its error
	// is what the client is told. Nil admits every call.
	Admit func(ctx context.Context) error
	// Begin starts the log line and span of one forwarded call; the function it returns ends
	// them with the call's record. Nil records nothing.
	Begin func(ctx context.Context, method, name string) (context.Context, func(*record.ToolCall))
	// CaptureContent puts a call's arguments and result in its record (logging.capture_content).
	CaptureContent bool
}

type callerKey struct{}

// NewContext returns ctx carrying c.
func NewContext(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// FromContext returns the caller ctx carries, or nil.
func FromContext(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// Allows reports whether the caller may use server and its namespaced tool, prompt or
// resource name ("" asks about the server alone).
func (c *Caller) Allows(server, name string) bool {
	if c.Access == nil {
		return true
	}
	return AccessAllows(c.Access, server, name)
}

// AccessAllows reports whether a allows server and the namespaced name ("": the server alone).
// An empty list allows all of its kind.
func AccessAllows(a *config.MCPAccess, server, name string) bool {
	if len(a.Servers) > 0 && !matchesAny(a.Servers, server) {
		return false
	}
	return name == "" || len(a.Tools) == 0 || matchesAny(a.Tools, name)
}

func matchesAny(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, s); ok {
			return true
		}
	}
	return false
}

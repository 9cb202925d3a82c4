//go:build mcp

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpauth"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/mcpsessions/dynamostore"
)

// EnvMCPSessionsTable names the DynamoDB table of MCP sessions (template.yaml's McpSessions).
const EnvMCPSessionsTable = "FNGATE_MCP_SESSIONS_TABLE"

// mcpEndpoint builds /mcp. Sessions of the protocol versions that open one live in DynamoDB,
// so whichever instance a client's next message reaches continues it; without a table those
// clients are served without sessions, each message on its own. Legacy SSE upstreams are
// refused: an instance frozen between invokes cannot hold their connection.
func mcpEndpoint(ctx context.Context, cfg *config.Config, getenv func(string) string, logger *slog.Logger) (http.Handler, gateway.MCPOAuth, string, error) {
	if len(cfg.MCPServers) == 0 {
		return nil, nil, "none", nil
	}
	s := cfg.MCPSessions
	if s.Table == "" {
		s.Table = getenv(EnvMCPSessionsTable)
	}
	var store mcpsessions.Store
	where := "none"
	switch s.Kind {
	case "", config.StoreDynamoDB:
		if s.Table == "" && s.Kind == "" {
			break
		}
		if s.Table == "" {
			return nil, nil, "", fmt.Errorf("%s: store dynamodb names no table: set mcp_sessions.table or %s", cfg.Locate("mcp_sessions.store"), EnvMCPSessionsTable)
		}
		d, err := dynamostore.Open(ctx, awsconf.FromEnvironment, s)
		if err != nil {
			return nil, nil, "", err
		}
		store, where = d, "dynamodb table "+s.Table
	case config.StoreNone:
	default:
		return nil, nil, "", fmt.Errorf("%s: the Lambda function keeps MCP sessions in DynamoDB (store: dynamodb, or none); %s would be each instance's own, and a session's next message may reach another", cfg.Locate("mcp_sessions.store"), s.Kind)
	}
	h, err := mcp.ForConfig(cfg, store, nil, false, logger)
	if err != nil {
		return nil, nil, "", err
	}
	var verifier gateway.MCPOAuth
	if cfg.MCPOAuth != nil {
		verifier = mcpauth.New(cfg.MCPOAuth, nil)
	}
	return h, verifier, where, nil
}

package gcf

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpauth"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/mcpsessions/firestorestore"
)

// Environment of the MCP session store; the Terraform module sets them (mcp_sessions). The
// config's mcp_sessions settings, when given, win.
const (
	EnvMCPSessionsProject    = "FNGATE_MCP_SESSIONS_PROJECT"
	EnvMCPSessionsDatabase   = "FNGATE_MCP_SESSIONS_DATABASE"
	EnvMCPSessionsCollection = "FNGATE_MCP_SESSIONS_COLLECTION"
)

// mcpEndpoint builds /mcp when the config names mcp_servers. Sessions of the protocol
// versions that open one live in Firestore, so any instance continues them; without a
// project those clients are served without sessions. A Cloud Run instance keeps running
// between requests, so legacy SSE upstreams, which hold a connection, are served.
func mcpEndpoint(ctx context.Context, cfg *config.Config, getenv func(string) string, logger *slog.Logger) (http.Handler, gateway.MCPOAuth, string, error) {
	if len(cfg.MCPServers) == 0 {
		return nil, nil, "none", nil
	}
	s := cfg.MCPSessions
	s.Project = cmp.Or(s.Project, getenv(EnvMCPSessionsProject))
	var store mcpsessions.Store
	where := "none"
	switch s.Kind {
	case "", config.StoreFirestore:
		if s.Project == "" && s.Kind == "" {
			break
		}
		s.Database = cmp.Or(s.Database, getenv(EnvMCPSessionsDatabase))
		s.Collection = cmp.Or(s.Collection, getenv(EnvMCPSessionsCollection))
		f, _, err := firestorestore.Open(ctx, s)
		if err != nil {
			return nil, nil, "", err
		}
		store, where = f, "firestore "+f.Where()
	case config.StoreNone:
	default:
		return nil, nil, "", fmt.Errorf("%s: the Cloud Functions gateway keeps MCP sessions in Firestore (store: firestore, or none); %s would be each instance's own, and a session's next message may reach another", cfg.Locate("mcp_sessions.store"), s.Kind)
	}
	h, err := mcp.ForConfig(cfg, store, nil, true, logger)
	if err != nil {
		return nil, nil, "", err
	}
	var verifier gateway.MCPOAuth
	if cfg.MCPOAuth != nil {
		verifier = mcpauth.New(cfg.MCPOAuth, nil)
	}
	return h, verifier, where, nil
}

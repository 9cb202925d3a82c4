package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpauth"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/mcpsessions/dynamostore"
)

// openMCP builds /mcp when the config names mcp_servers: the handler, with its session store
// (memory unless mcp_sessions names a shared one, which servers on several machines need),
// and the OAuth verifier of mcp_oauth. The local server holds connections, so legacy SSE
// upstreams are served.
func openMCP(ctx context.Context, cfg *config.Config, logger *slog.Logger) (http.Handler, gateway.MCPOAuth, string, func(), error) {
	none := func() {}
	if len(cfg.MCPServers) == 0 {
		return nil, nil, "", none, nil
	}
	var store mcpsessions.Store
	where, closeStore := "memory", none
	switch s := cfg.MCPSessions; s.Kind {
	case "", config.StoreMemory:
		store = mcpsessions.NewMemory()
	case config.StoreNone:
		where = "none"
	case config.StoreDynamoDB:
		d, err := dynamostore.Open(ctx, sdkconfig.Load, s)
		if err != nil {
			return nil, nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("mcp_sessions.store"), err)
		}
		store, where = d, "dynamodb table "+s.Table
	case config.StoreFirestore:
		f, w, closeClient, err := openFirestoreMCPSessions(ctx, s)
		if err != nil {
			return nil, nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("mcp_sessions.store"), err)
		}
		store, where, closeStore = f, "firestore "+w, func() { _ = closeClient() }
	}
	h, err := mcp.ForConfig(cfg, store, nil, true, logger)
	if err != nil {
		closeStore()
		return nil, nil, "", none, err
	}
	var verifier gateway.MCPOAuth
	if cfg.MCPOAuth != nil {
		verifier = mcpauth.New(cfg.MCPOAuth, nil)
	}
	return h, verifier, where, func() { h.Close(); closeStore() }, nil
}

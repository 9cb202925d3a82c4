//go:build !mcp

package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
)

// mcpEndpoint of the default build: /mcp links the MCP SDK (+1.9 MB, see the Makefile), so a
// function that serves no MCP servers does not carry it. A config that names some says how
// to build one that does.
func mcpEndpoint(_ context.Context, cfg *config.Config, _ func(string) string, _ *slog.Logger) (http.Handler, gateway.MCPOAuth, string, error) {
	if len(cfg.MCPServers) == 0 {
		return nil, nil, "none", nil
	}
	return nil, nil, "", errors.New(cfg.Locate("mcp_servers") + ": this bootstrap was built without the MCP gateway; build it with LAMBDA_TAGS=lambda.norpc,mcp (sam build reads the same variable)")
}

// Command lambda is the control plane's bootstrap for AWS Lambda: the admin API under
// /admin/v1/ (core/admin) in a function of its own, beside the gateway's, so the gateway's
// binary and cold start carry none of it and its URL never serves /admin/. Its function URL
// is BUFFERED (an admin answer is small and whole), so the adapter is buffered.go, not
// lambdaurl, which speaks RESPONSE_STREAM only.
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -tags lambda.norpc \
//	    -ldflags="-s -w" -o bootstrap ./functions/controlplane/lambda
//
// The config is the gateway's (its admin section is the control plane's), read and resolved
// once per execution environment before the first invoke; a broken config or a store that
// cannot be opened stops the function there, with the reason in its log.
//
// Environment (stores.go):
//
//	FNGATE_CONFIG_YAML, FNGATE_CONFIG   the config, as the gateway reads it
//	KEYS_TABLE          the key store and its audit log (read and write)
//	COUNTERS_TABLE      the keys' counters and usage history (read)
//	ROUTE_STATE_TABLE   route state (read, and write for cool and restore by hand)
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/boot"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/console"
	"github.com/fngate/fngate/core/secrets/awssm"
	"github.com/fngate/fngate/core/telemetry"
)

func main() {
	h, err := setup(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fngate control plane:", err)
		os.Exit(1)
	}
	lambda.Start(buffered(h))
}

// setup builds the control plane's handler from the environment.
func setup(ctx context.Context, getenv func(string) string) (http.Handler, error) {
	opt := config.Options{Getenv: getenv, Secrets: map[string]config.SecretResolver{awssm.Scheme: awssm.NewWith(awsconf.FromEnvironment)}, WithoutMCP: true}
	cfg, source, err := boot.LoadConfig(ctx, getenv, boot.Files{Root: packageRoot(), Packaged: "fngate.yaml"}, opt)
	if err != nil {
		return nil, err
	}
	logger := telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(cfg.Logging.Format), cfg.Secrets)
	st, err := openStores(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	api, err := admin.New(cfg, admin.Options{Keys: st.keys, History: st.history, Counters: st.counters, Routes: st.routes, Logger: logger})
	if err != nil {
		return nil, err
	}
	con, err := console.New(api, cfg, console.Options{Keys: st.keys, Logger: logger})
	if err != nil {
		return nil, err
	}
	logger.Info("ready", slog.String("config", source), slog.String("keys", st.describe.keys),
		slog.String("usage", st.describe.usage), slog.String("routes", st.describe.routes))
	return con.Beside(api), nil
}

// packageRoot is the directory holding the bootstrap: /var/task on Lambda.
func packageRoot() string {
	if exe, err := os.Executable(); err == nil {
		return filepath.Dir(exe)
	}
	return "."
}

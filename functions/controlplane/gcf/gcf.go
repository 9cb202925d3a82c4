// Package gcf registers fngate's control plane as the HTTP function ControlPlane for Cloud
// Functions gen2: the admin API under /admin/v1/ (core/admin) and the console under /console
// (core/console), in a function of its own beside the gateway's, so the gateway carries none
// of it and its URL never serves /admin/.
// Registration happens at init and costs nothing; the handler (config, secret references,
// stores) is built by the first request, once per instance, and a failed build is tried
// again after a pause.
//
// Environment (stores.go):
//
//	FNGATE_CONFIG_YAML, FNGATE_CONFIG  the config, as the gateway reads it
//	KEYS_PROJECT, KEYS_DATABASE, KEYS_COLLECTION                   the key store and audit log
//	COUNTERS_PROJECT, COUNTERS_DATABASE, COUNTERS_PREFIX           counters and usage history (read)
//	ROUTE_STATE_PROJECT, ROUTE_STATE_DATABASE, ROUTE_STATE_PREFIX  route state (read, cool, restore)
//
// It imports nothing of the repository beyond core/, so the deploy's source is core/ and this
// directory.
package gcf

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/boot"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/console"
	"github.com/fngate/fngate/core/secrets/gcpsm"
	"github.com/fngate/fngate/core/telemetry"
)

// FunctionName is the entry point to deploy (--entry-point, build_config.entry_point).
const FunctionName = "ControlPlane"

func init() { functions.HTTP(FunctionName, ControlPlane) }

var instance = newLazy(10*time.Second, func(ctx context.Context) (http.Handler, error) { return build(ctx, os.Getenv) })

// ControlPlane is the registered HTTP function.
func ControlPlane(w http.ResponseWriter, r *http.Request) { instance.ServeHTTP(w, r) }

func build(ctx context.Context, getenv func(string) string) (http.Handler, error) {
	opt := config.Options{Getenv: getenv, Secrets: map[string]config.SecretResolver{gcpsm.Scheme: gcpsm.NewDefault()}, WithoutMCP: true}
	cfg, source, err := boot.LoadConfig(ctx, getenv, boot.Files{}, opt)
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

// newLazy is the control plane's first-request build, answering the admin API's error shape
// while it fails.
func newLazy(retryAfter time.Duration, build func(context.Context) (http.Handler, error)) *boot.Lazy {
	return &boot.Lazy{Build: build, RetryAfter: retryAfter, Failed: func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"the control plane could not start; its log has the reason","type":"server_error","param":null,"code":"control_plane_not_configured"}}` + "\n"))
	}}
}

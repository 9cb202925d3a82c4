// Package gcf registers fngate as the HTTP function Gateway for Cloud Functions gen2 (Cloud
// Run functions, runtime go125). Registration happens at init and costs nothing; the gateway
// itself (config, secret references, providers) is built by the first request, once per
// instance, so the instance passes its start-up probe at once and a deploy never stalls on a
// slow secret read.
//
// One instance serves up to 1000 requests at a time (max_instance_request_concurrency). They
// share only the gateway, which is safe for concurrent use; nothing here is mutated per
// request. net/http's writer flushes each SSE event, and a client that disconnects cancels
// the request's context and with it the upstream call. The Responses API's WebSocket mode is
// served too: Cloud Run passes the upgrade, and a connection lasts until the function's
// timeout at most.
//
// Environment:
//
//	FNGATE_CONFIG_YAML   the config itself
//	FNGATE_CONFIG        a config file, typically a Secret Manager volume (/etc/fngate/fngate.yaml)
//	                     (neither: the embedded default catalog)
//	ROUTE_STATE_PROJECT  self-repair: read route state from Firestore (selfrepair.go)
//	COUNTERS_PROJECT     the keys' rate limits and budgets in Firestore (counters.go; also
//	                     COUNTERS_DATABASE, COUNTERS_PREFIX)
//	RESPONSES_PROJECT    stored responses in Firestore, with RESPONSES_DATABASE and
//	                     RESPONSES_COLLECTION (responses.go)
//	OTEL_EXPORTER_OTLP_* OpenTelemetry export, as the config's telemetry block (telemetry.go)
//	FNGATE_INVOKER_AUTH  IAM when only IAM principals may invoke (roles/run.invoker), PUBLIC
//	                     (default) when allUsers may: a public function refuses to serve
//	                     without client keys unless the config says auth: none
package gcf

import (
	"context"
	"fmt"
	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/guardrail/kinds"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/fngate/fngate/core/boot"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/secrets/gcpsm"
	"github.com/fngate/fngate/core/telemetry"
)

// FunctionName is the entry point to deploy (--entry-point, build_config.entry_point).
const FunctionName = "Gateway"

func init() { functions.HTTP(FunctionName, Gateway) }

var instance = newLazy(10*time.Second, func(ctx context.Context) (http.Handler, error) { return build(ctx, os.Getenv) })

// Gateway is the registered HTTP function.
func Gateway(w http.ResponseWriter, r *http.Request) { instance.ServeHTTP(w, r) }

func build(ctx context.Context, getenv func(string) string) (_ http.Handler, err error) {
	opt := config.Options{Getenv: getenv, Secrets: map[string]config.SecretResolver{gcpsm.Scheme: gcpsm.NewDefault()}}
	cfg, source, err := boot.LoadConfig(ctx, getenv, boot.Files{}, opt)
	if err != nil {
		return nil, err
	}
	keys, keysAt, err := keyStore(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	invoker := getenv("FNGATE_INVOKER_AUTH")
	var requireKeys bool
	switch invoker {
	case "", "PUBLIC":
		requireKeys = true
		if err := boot.CheckPublic(cfg, "the function is public (FNGATE_INVOKER_AUTH="+invokerOrDefault(invoker)+")",
			"require IAM (roles/run.invoker) and set FNGATE_INVOKER_AUTH=IAM"); err != nil {
			return nil, err
		}
	case "IAM":
	default:
		return nil, fmt.Errorf("FNGATE_INVOKER_AUTH is %q; want PUBLIC or IAM", invoker)
	}
	logger := telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(cfg.Logging.Format), cfg.Secrets)
	tel, err := startTelemetry(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil { // a build tried again later starts its own
			_ = tel.Shutdown(context.WithoutCancel(ctx))
		}
	}()
	// Cloud Run's front end passes WebSocket upgrades, and the functions framework's writer is
	// net/http's, which hands the connection over: the Responses API's WebSocket mode is
	// served. Each connection is one of the instance's concurrent requests, bounded by the
	// function's timeout.
	gopt := gateway.Options{Registry: registry(), Logger: logger, RequireKeys: requireKeys, Tracer: tel.Tracer(), WebSockets: true}
	gopt.Guardrails = kinds.Factory(sdkconfig.Load, armorGuardrails)
	if err := selfRepair(ctx, getenv, logger, &gopt); err != nil {
		return nil, err
	}
	if err := counterStore(ctx, getenv, cfg, logger, &gopt); err != nil {
		return nil, err
	}
	if err := historyStore(ctx, getenv, cfg, &gopt); err != nil {
		return nil, err
	}
	responses, stored, err := responseStore(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	gopt.ResponseStore = responses
	cache, cached, err := cacheStore(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	gopt.Cache = cache
	gopt.KeyStore = keys
	mcpHandler, mcpOAuth, mcpSessions, err := mcpEndpoint(ctx, cfg, getenv, logger)
	if err != nil {
		return nil, err
	}
	gopt.MCP, gopt.MCPOAuth = mcpHandler, mcpOAuth
	gw, err := gateway.New(cfg, gopt)
	if err != nil {
		return nil, err
	}
	logger.Info("ready", slog.String("config", source), slog.Int("models", len(cfg.Models)),
		slog.String("invoker_auth", invokerOrDefault(invoker)), slog.Int("keys", len(cfg.Keys)), slog.String("responses", stored),
		slog.String("response_cache", cached), slog.String("key_store", keysAt), slog.String("telemetry", tel.Describe()),
		slog.String("mcp_sessions", mcpSessions))
	return flushingUsage(gw, gopt.History != nil || gopt.Cache != nil), nil
}

func invokerOrDefault(v string) string {
	if v == "" {
		return "PUBLIC"
	}
	return v
}

// newLazy is the gateway's first-request build, answering the OpenAI error shape while it
// fails.
func newLazy(retryAfter time.Duration, build func(context.Context) (http.Handler, error)) *boot.Lazy {
	return &boot.Lazy{Build: build, RetryAfter: retryAfter, Failed: func(w http.ResponseWriter, r *http.Request) {
		gateway.WriteError(w, r, &llm.Error{Status: http.StatusInternalServerError, Type: llm.TypeServer, Code: "gateway_not_configured",
			Message: "the gateway could not start; its log has the reason"})
	}}
}

// Command lambda is fngate's bootstrap for AWS Lambda: provided.al2023 on arm64, behind a
// function URL with InvokeMode RESPONSE_STREAM, so every SSE event reaches the client as it
// is written.
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -tags lambda.norpc \
//	    -ldflags="-s -w" -o bootstrap ./functions/lambda
//
// Everything happens once per execution environment, before the first invoke: the config is
// read (see config.go for where from), its aws-sm:// references are resolved through Secrets
// Manager, and the gateway is built. A broken config, an unreachable secret or a public URL
// without gateway keys stops the function here, with the reason in its log, instead of
// serving wrongly.
//
// Environment:
//
//	FNGATE_CONFIG_YAML, FNGATE_CONFIG   the config (config.go)
//	FNGATE_URL_AUTH_TYPE                the function URL's AuthType, NONE (default) or AWS_IAM
//	ROUTE_STATE_TABLE, PROVIDER_ERROR_BUS  self-repair (selfrepair.go)
//	COUNTERS_TABLE                      the keys' rate limits and budgets (counters.go), and their
//	                                    usage history in the same table (history.go)
//	RESPONSES_TABLE                     stored responses in DynamoDB (responses.go)
//	OTEL_EXPORTER_OTLP_*                OpenTelemetry export, as the config's telemetry block; only
//	                                    in a bootstrap built with -tags otel (telemetry.go)
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/boot"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/secrets/awssm"
	"github.com/fngate/fngate/core/telemetry"
)

func main() {
	h, history, tel, err := setup(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fngate:", err)
		os.Exit(1)
	}
	flush := invokeFlush(h, history, tel)
	if flush == nil {
		lambdaurl.Start(h)
		return
	}
	lambda.StartHandlerFunc(flushAfter(lambdaurl.Wrap(h), flush))
}

// setup builds the handler from the environment. The gateway is the whole of it: it recovers
// its own panics (lambdaurl's handler goroutine has none) and ends a request in-band shortly
// before the invoke deadline, which lambdaurl puts on the request's context, so the client
// learns why and the warm environment survives.
func setup(ctx context.Context, getenv func(string) string) (_ *gateway.Gateway, history bool, _ *exporter, _ error) {
	opt := config.Options{Getenv: getenv, Secrets: map[string]config.SecretResolver{awssm.Scheme: awssm.NewWith(awsconf.FromEnvironment)}}
	cfg, source, err := loadConfig(ctx, getenv, packageRoot(), opt)
	if err != nil {
		return nil, false, nil, err
	}
	keys, keysAt, err := keyStore(ctx, cfg, getenv)
	if err != nil {
		return nil, false, nil, err
	}
	urlAuth := getenv("FNGATE_URL_AUTH_TYPE")
	requireKeys, err := keysRequired(urlAuth, cfg)
	if err != nil {
		return nil, false, nil, err
	}
	logger := telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(cfg.Logging.Format), cfg.Secrets)
	tel, err := startTelemetry(ctx, cfg, getenv)
	if err != nil {
		return nil, false, nil, err
	}
	// WebSockets stays off: a function URL passes no upgrade, so a handshake gets the 426
	// that names HTTP streaming.
	gopt := gateway.Options{Registry: registry(), Logger: logger, RequireKeys: requireKeys}
	gopt.Guardrails = guardrails()
	if tel != nil {
		gopt.Tracer = tel.tracer
	}
	if err := selfRepair(getenv, logger, &gopt); err != nil {
		return nil, false, nil, err
	}
	if err := counterStore(getenv, cfg, logger, &gopt); err != nil {
		return nil, false, nil, err
	}
	if err := historyStore(getenv, cfg, &gopt); err != nil {
		return nil, false, nil, err
	}
	responses, stored, err := responseStore(ctx, cfg, getenv)
	if err != nil {
		return nil, false, nil, err
	}
	gopt.ResponseStore = responses
	cache, cached, err := cacheStore(ctx, cfg, getenv)
	if err != nil {
		return nil, false, nil, err
	}
	gopt.Cache = cache
	gopt.KeyStore = keys
	mcpHandler, mcpOAuth, mcpSessions, err := mcpEndpoint(ctx, cfg, getenv, logger)
	if err != nil {
		return nil, false, nil, err
	}
	gopt.MCP, gopt.MCPOAuth = mcpHandler, mcpOAuth
	gw, err := gateway.New(cfg, gopt)
	if err != nil {
		return nil, false, nil, err
	}
	logger.Info("ready", slog.String("config", source), slog.Int("models", len(cfg.Models)),
		slog.String("url_auth", urlAuth), slog.Int("keys", len(cfg.Keys)), slog.String("responses", stored),
		slog.String("response_cache", cached), slog.String("key_store", keysAt), slog.String("telemetry", tel.describe()),
		slog.String("mcp_sessions", mcpSessions))
	return gw, gopt.History != nil || gopt.Cache != nil, tel, nil
}

// keysRequired decides whether the gateway may run without client keys. A public URL
// (AuthType NONE) needs keys or an explicit `auth: none`; behind AWS_IAM, IAM has already
// authenticated the caller. The SigV4 signature occupies the Authorization header there,
// so a bearer key could never arrive: keys with AWS_IAM are refused rather than answering
// every request 401.
func keysRequired(urlAuth string, cfg *config.Config) (bool, error) {
	switch urlAuth {
	case "", "NONE":
		return true, boot.CheckPublic(cfg, "the function URL is public (AuthType NONE)", "deploy with AuthType AWS_IAM")
	case "AWS_IAM":
		if len(cfg.Keys) > 0 {
			return false, errors.New("the function URL uses AuthType AWS_IAM, whose SigV4 signature takes the Authorization header, so gateway keys cannot be checked: remove keys from the config (IAM authenticates callers) or use AuthType NONE")
		}
		return false, nil
	}
	return false, fmt.Errorf("FNGATE_URL_AUTH_TYPE is %q; want NONE or AWS_IAM (the function URL's AuthType)", urlAuth)
}

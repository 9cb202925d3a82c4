// Command local serves the gateway on net/http: the developer and CI server behind `make run`.
//
//	go run ./functions/local [-config PATH] [-addr HOST:PORT] [-route-state PATH|off]
//	                         [-shutdown-grace 30s] [-debug-addr HOST:PORT] [-read-header-timeout 10s]
//
// FNGATE_CONFIG, FNGATE_ADDR and FNGATE_ROUTE_STATE stand in for the flags. Without a config
// the embedded default serves the mock models and whatever providers the environment has
// credentials for. Built with -tags novertex it leaves the Vertex AI provider out, and with
// it the ~655 MB of Google Cloud modules its SDK downloads on a first build (providers.go);
// the Firestore counter and response stores, whose client is the same SDK, go with it
// (firestore.go). Stored responses stay in memory unless the config's responses section
// says otherwise (responses.go); keys issued at runtime are served from the key store the
// config names (keystore.go), and the admin API is served beside the gateway under /admin/v1/
// on the same stores (admin.go). Logs are readable text on a terminal and JSON otherwise
// (logging.format decides when set); traces and metrics go to an OpenTelemetry collector
// when the config's telemetry block or the OTEL_* variables ask for it, and what is batched
// is flushed on the way out. The Responses API's WebSocket mode is served; on SIGTERM each
// WebSocket connection closes once its running response has ended, within the grace, as HTTP
// streams finish.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/guardrail/kinds"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/core/telemetry/otel"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fngate:", err)
		os.Exit(1)
	}
}

func run() error {
	configPath := flag.String("config", os.Getenv("FNGATE_CONFIG"), "config file (default: the embedded default; env FNGATE_CONFIG)")
	addr := flag.String("addr", envOr("FNGATE_ADDR", "127.0.0.1:8080"), "listen address (env FNGATE_ADDR)")
	shutdownGrace := flag.Duration("shutdown-grace", 30*time.Second, "how long in-flight streams may finish after SIGTERM")
	readHeader := flag.Duration("read-header-timeout", 10*time.Second, "how long a client may take to send a request's headers before its connection is closed")
	debugAddr := flag.String("debug-addr", "", "serve pprof and runtime figures (/debug/fngate) on this address; never expose it")
	routeState := flag.String("route-state", envOr("FNGATE_ROUTE_STATE", routestate.DefaultFile), "route state file written by fngate-remediate (\"off\": none)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var cfg *config.Config
	var err error
	if *configPath != "" {
		cfg, err = config.Load(ctx, *configPath, config.Options{})
	} else {
		cfg, err = config.Default(ctx, config.Options{})
	}
	if err != nil {
		return err
	}
	logger := telemetry.NewLogger(os.Stdout, logFormat(cfg.Logging.Format, os.Getenv, isTerminal(os.Stdout)), cfg.Secrets)
	tel, err := otel.New(ctx, cfg, otel.Options{Resource: []attribute.KeyValue{attribute.String("deployment.environment.name", "local")}})
	if err != nil {
		return err
	}
	defer func() {
		// Whatever is still batched goes out before the process does.
		sctx, cancel := context.WithTimeout(context.Background(), otel.FlushTimeout)
		defer cancel()
		_ = tel.Shutdown(sctx)
	}()
	// net/http hands an upgraded connection to its handler: the Responses API's WebSocket
	// mode is served.
	gopt := gateway.Options{Registry: registry(), Logger: logger, Tracer: tel.Tracer(), WebSockets: true}
	gopt.Guardrails = kinds.Factory(sdkconfig.Load, armorGuardrails)
	var routes routestate.Store
	if *routeState != "off" {
		store, err := routestate.OpenFile(*routeState)
		if err != nil {
			return err
		}
		routes = store
		cache := routestate.NewCache(store, routestate.CacheOptions{Logger: logger})
		cache.Start(ctx)
		defer cache.Close()
		gopt.RouteState = cache
	}
	responses, stored, closeResponses, err := responseStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeResponses()
	gopt.ResponseStore = responses
	cache, cached, closeCache, err := cacheStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeCache()
	gopt.Cache = cache
	store, closeCounters, err := openCounters(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeCounters()
	gopt.Counters = store
	history, closeHistory, err := openHistory(ctx, cfg, store)
	if err != nil {
		return err
	}
	defer closeHistory()
	gopt.History = history
	keys, keyStore, closeKeys, err := openKeyStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeKeys()
	gopt.KeyStore = keys
	mcpHandler, mcpOAuth, mcpSessions, closeMCP, err := openMCP(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeMCP()
	gopt.MCP, gopt.MCPOAuth = mcpHandler, mcpOAuth
	gw, err := gateway.New(cfg, gopt)
	if err != nil {
		return err
	}
	defer gw.Close()
	handler, err := withControlPlane(gw, cfg, admin.Options{Keys: keys, History: history, Counters: store, Routes: routes, Logger: logger})
	if err != nil {
		return err
	}

	if *debugAddr != "" {
		if err := serveDebug(*debugAddr); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// No ReadTimeout or WriteTimeout: the gateway bounds the body read itself
	// (limits.body_read_timeout) and each stream's writes by its attempt's total, which a
	// server-wide WriteTimeout would cut short. The headers are this server's to bound: a
	// client that trickles them never reaches the handler, so it holds no in-flight slot, but
	// it would hold its connection and goroutine for as long as it kept trickling.
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: *readHeader,
		IdleTimeout:       2 * time.Minute,
	}
	logger.Info("listening", slog.String("addr", "http://"+ln.Addr().String()), slog.Int("models", len(cfg.Models)),
		slog.String("responses", stored), slog.String("response_cache", cached), slog.String("key_store", keyStore), slog.String("telemetry", tel.Describe()),
		slog.Int("mcp_servers", len(cfg.MCPServers)), slog.String("mcp_sessions", mcpSessions))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", slog.String("grace", shutdownGrace.String()))
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownGrace)
	defer cancel()
	// Shutdown does not wait for upgraded connections: the gateway closes its WebSockets,
	// each once its running response has ended, within the same grace.
	sockets := make(chan error, 1)
	go func() { sockets <- gw.CloseWebSockets(sctx) }()
	err = srv.Shutdown(sctx)
	if serr := <-sockets; err == nil {
		err = serr
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// logFormat is the configured log format, else text for a person at a terminal (and not on
// Cloud Run, whose K_SERVICE asks for Cloud Logging's JSON), else the platform's JSON.
func logFormat(configured string, getenv func(string) string, terminal bool) string {
	switch {
	case configured != "":
		return configured
	case getenv("K_SERVICE") != "":
		return telemetry.FormatCloudLogging
	case terminal:
		return telemetry.FormatText
	}
	return telemetry.FormatCloudWatch
}

// isTerminal reports whether f is a character device: a terminal, not a file or a pipe.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

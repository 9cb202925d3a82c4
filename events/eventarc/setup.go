package eventarc

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/GoogleCloudPlatform/functions-framework-go/functions"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/fngate/fngate/core/boot"
	"github.com/fngate/fngate/core/routestate/firestorestore"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/events/remediation"
)

// EntryPoint is the name the function registers under at init: the deploy's entry point
// (FUNCTION_TARGET, build_config.entry_point).
const EntryPoint = "FngateRemediate"

// Environment read by FromEnv, besides the REMEDIATION_* policy settings.
const (
	// EnvProject is the Firestore project; unset means GOOGLE_CLOUD_PROJECT, then the
	// project of the function's credentials.
	EnvProject = "ROUTE_STATE_PROJECT"
	// EnvDatabase is the Firestore database id; unset means "(default)".
	EnvDatabase = "ROUTE_STATE_DATABASE"
	// EnvPrefix starts the collection names; unset means firestorestore.DefaultPrefix.
	EnvPrefix = "ROUTE_STATE_PREFIX"
)

// FromEnv builds the function from its environment: a Firestore store, the engine and the
// log-line metric. The returned close releases the Firestore client.
func FromEnv(ctx context.Context, logger *slog.Logger, getenv func(string) string) (*Handler, func() error, error) {
	cfg, err := remediation.ConfigFromEnv(getenv)
	if err != nil {
		return nil, nil, err
	}
	project := getenv(EnvProject)
	if project == "" {
		project = getenv("GOOGLE_CLOUD_PROJECT")
	}
	if project == "" {
		project = firestore.DetectProjectID
	}
	database := getenv(EnvDatabase)
	if database == "" {
		database = firestore.DefaultDatabaseID
	}
	client, err := firestore.NewClientWithDatabase(ctx, project, database)
	if err != nil {
		return nil, nil, fmt.Errorf("firestore: %w", err)
	}
	// The gateway's config (the same secret file, or the embedded default) says which routes
	// run where: a Service Health incident for Vertex AI in a location cools the routes on it.
	inv, from, err := remediation.LoadInventory(getenv, boot.Files{})
	if err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("route inventory: %w", err)
	}
	engine := remediation.New(firestorestore.New(client, getenv(EnvPrefix)), remediation.Options{
		Config:    cfg,
		Logger:    logger,
		Metrics:   remediation.NewCloudLoggingMetrics(os.Stdout),
		Inventory: inv,
	})
	p := engine.Policy()
	logger.Info("remediation function ready", append([]any{slog.String("mode", string(engine.Mode())), slog.String("project", project),
		slog.String("database", database), slog.Int("burst_errors", p.BurstErrors), slog.Duration("burst_window", p.BurstWindow),
		slog.Duration("cooldown", p.Cooldown), slog.Duration("max_event_age", p.MaxEventAge),
		slog.Duration("incident_cooldown", p.IncidentCooldown)}, inv.LogAttrs(from)...)...)
	return NewHandler(engine, logger), client.Close, nil
}

func init() { functions.CloudEvent(EntryPoint, Function) }

// instance is the deployed function's handler, built from the environment by the first event
// (registration at init costs nothing, so an instance starts at once).
var instance = &lazy{retryAfter: 10 * time.Second, build: func(ctx context.Context) (*Handler, error) {
	logger := telemetry.NewLogger(os.Stdout, telemetry.FormatCloudLogging, nil)
	h, _, err := FromEnv(ctx, logger, os.Getenv)
	if err != nil {
		logger.Error("remediation function cannot start", slog.String("error", err.Error()))
	}
	return h, err
}}

// Function is the CloudEvent function registered as EntryPoint. Until the handler can be
// built it returns an error, so Pub/Sub redelivers the event later.
func Function(ctx context.Context, e event.Event) error {
	h, err := instance.get(ctx)
	if err != nil {
		return err
	}
	return h.Handle(ctx, e)
}

// lazy builds the handler once; after a failure it tries again no sooner than retryAfter, so a
// broken environment does not rebuild clients for every event.
type lazy struct {
	mu         sync.Mutex
	h          *Handler
	err        error
	failedAt   time.Time
	retryAfter time.Duration
	build      func(context.Context) (*Handler, error)
}

func (l *lazy) get(ctx context.Context) (*Handler, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		return l.h, nil
	}
	if l.err != nil && time.Since(l.failedAt) < l.retryAfter {
		return nil, l.err
	}
	l.h, l.err = l.build(ctx)
	if l.err != nil {
		l.h, l.failedAt = nil, time.Now()
	}
	return l.h, l.err
}

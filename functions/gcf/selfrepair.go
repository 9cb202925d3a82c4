package gcf

import (
	"context"
	"fmt"
	"log/slog"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/firestorestore"
)

// Environment of self-repair (docs/remediation.md): the Firestore database the remediation
// function writes route state to. Unset ROUTE_STATE_PROJECT: no route state is read. Provider
// errors need no publisher on GCP: the log sink picks up the provider_error lines.
const (
	EnvRouteStateProject  = "ROUTE_STATE_PROJECT"
	EnvRouteStateDatabase = "ROUTE_STATE_DATABASE"
	EnvRouteStatePrefix   = "ROUTE_STATE_PREFIX"
)

// selfRepair gives the gateway a route-state cache over Firestore. The client dials lazily and
// the cache reads in the background, so this adds no latency to the instance's first request.
func selfRepair(ctx context.Context, getenv func(string) string, logger *slog.Logger, opt *gateway.Options) error {
	project := getenv(EnvRouteStateProject)
	if project == "" {
		return nil
	}
	database := getenv(EnvRouteStateDatabase)
	if database == "" {
		database = firestore.DefaultDatabaseID
	}
	client, err := firestore.NewClientWithDatabase(ctx, project, database)
	if err != nil {
		return fmt.Errorf("route state: %w", err)
	}
	cache := routestate.NewCache(firestorestore.New(client, getenv(EnvRouteStatePrefix)), routestate.CacheOptions{Logger: logger})
	cache.Start(context.Background())
	opt.RouteState = cache
	return nil
}

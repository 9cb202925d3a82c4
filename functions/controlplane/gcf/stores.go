package gcf

import (
	"context"
	"fmt"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/firestorestore"
	"github.com/fngate/fngate/core/routestate"
	routefirestore "github.com/fngate/fngate/core/routestate/firestorestore"
)

// The Firestore databases the Terraform module gives the control plane (the gateway reads the
// same names).
const (
	EnvKeysProject        = "KEYS_PROJECT"
	EnvKeysDatabase       = "KEYS_DATABASE"
	EnvKeysCollection     = "KEYS_COLLECTION"
	EnvCountersProject    = "COUNTERS_PROJECT"
	EnvCountersDatabase   = "COUNTERS_DATABASE"
	EnvCountersPrefix     = "COUNTERS_PREFIX"
	EnvRouteStateProject  = "ROUTE_STATE_PROJECT"
	EnvRouteStateDatabase = "ROUTE_STATE_DATABASE"
	EnvRouteStatePrefix   = "ROUTE_STATE_PREFIX"
)

// stores are what the admin API is given; any may be nil.
type stores struct {
	keys     keystore.Store
	history  counters.History
	counters counters.Store
	routes   routestate.Store
	describe struct{ keys, usage, routes string }
}

// fill sets each empty setting from the environment: the config's own win.
func fill(getenv func(string) string, pairs map[*string]string) {
	for field, env := range pairs {
		if *field == "" {
			*field = getenv(env)
		}
	}
}

// openStores opens the config's stores, each database named by the config or, when it names
// none, the environment; the clients dial on first use.
func openStores(ctx context.Context, cfg *config.Config, getenv func(string) string) (*stores, error) {
	st := &stores{}
	st.describe.keys, st.describe.usage, st.describe.routes = "none", "none", "none"

	ks := cfg.KeyStore
	switch {
	case ks.Kind == "" && getenv(EnvKeysProject) != "", ks.Kind == config.StoreFirestore:
		fill(getenv, map[*string]string{&ks.Project: EnvKeysProject, &ks.Database: EnvKeysDatabase, &ks.Collection: EnvKeysCollection})
		if ks.Project == "" {
			return nil, fmt.Errorf("key_store firestore: name its project (key_store.project or %s)", EnvKeysProject)
		}
		s, _, err := firestorestore.Open(ctx, ks) // the client lives as long as the instance
		if err != nil {
			return nil, err
		}
		st.keys, st.describe.keys = s, "firestore:"+ks.Project
	case ks.Kind == "", ks.Kind == config.StoreNone:
	default:
		return nil, fmt.Errorf("key_store.store %s is not available on Cloud Functions: use firestore (the Terraform module sets %s)", ks.Kind, EnvKeysProject)
	}

	c := cfg.Counters
	switch {
	case c.Kind == "" && getenv(EnvCountersProject) != "", c.Kind == config.StoreFirestore:
		fill(getenv, map[*string]string{&c.Project: EnvCountersProject, &c.Database: EnvCountersDatabase, &c.Prefix: EnvCountersPrefix})
		s, _, err := firestorecounters.Open(ctx, c) // the client lives as long as the instance
		if err != nil {
			return nil, err
		}
		st.counters, st.history, st.describe.usage = s, s, "firestore:"+c.Project
	case c.Kind == "", c.Kind == config.StoreMemory:
		// The gateway's memory counters are its own instance's: there is nothing to read.
	default:
		return nil, fmt.Errorf("counters.store %s is not available on Cloud Functions: use firestore", c.Kind)
	}

	if project := getenv(EnvRouteStateProject); project != "" {
		database := getenv(EnvRouteStateDatabase)
		if database == "" {
			database = firestore.DefaultDatabaseID
		}
		client, err := firestore.NewClientWithDatabase(ctx, project, database)
		if err != nil {
			return nil, fmt.Errorf("route state: %w", err)
		}
		st.routes, st.describe.routes = routefirestore.New(client, getenv(EnvRouteStatePrefix)), "firestore:"+project
	}
	return st, nil
}

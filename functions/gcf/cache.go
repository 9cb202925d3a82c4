package gcf

import (
	"cmp"
	"context"
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/firestorestore"
)

// Environment of the response cache; the Terraform module sets them. The config's
// response_cache settings, when given, win.
const (
	// EnvCacheProject is the project of the Firestore database of the response cache.
	EnvCacheProject    = "CACHE_PROJECT"
	EnvCacheDatabase   = "CACHE_DATABASE"   // default: (default)
	EnvCacheCollection = "CACHE_COLLECTION" // default: config.DefaultCacheCollection
)

// cacheStore opens the Firestore store of the response cache when a model or a key opts
// into the cache (else nothing: nil, "off"), in the project the config or the environment
// names (store: firestore without one: the function's own). Memory and files are refused:
// instances share neither, so an answer cached by one would be a miss on every other. So is
// a config that caches with neither a project nor the store named, rather than a cache that
// never hits. It returns what it opened, for the start-up log line. The client dials
// lazily: this adds no latency to the instance's first request, and lives as long as the
// instance.
func cacheStore(ctx context.Context, cfg *config.Config, getenv func(string) string) (responsecache.Store, string, error) {
	if !cfg.Caches() {
		return nil, "off", nil
	}
	c := cfg.ResponseCache
	c.Project = cmp.Or(c.Project, getenv(EnvCacheProject))
	switch c.Kind {
	case "":
		if c.Project == "" {
			return nil, "", fmt.Errorf("the config opts into the response cache (cache on a model, a key or key_defaults), but names no store for it: set %s or response_cache.store: firestore", EnvCacheProject)
		}
	case config.StoreFirestore:
	case config.StoreNone:
		return nil, "none", nil
	case config.StoreMemory, config.StoreFile:
		return nil, "", fmt.Errorf("%s: the Cloud Functions gateway keeps the response cache in Firestore (store: firestore, or set %s); %s would be each instance's own, so an answer cached by one instance would be a miss on the others",
			cfg.Locate("response_cache.store"), EnvCacheProject, c.Kind)
	default:
		return nil, "", fmt.Errorf("%s: the Cloud Functions gateway keeps the response cache in Firestore (store: firestore, or set %s), not %s",
			cfg.Locate("response_cache.store"), EnvCacheProject, c.Kind)
	}
	c.Database = cmp.Or(c.Database, getenv(EnvCacheDatabase))
	c.Collection = cmp.Or(c.Collection, getenv(EnvCacheCollection))
	s, _, err := firestorestore.Open(ctx, c)
	if err != nil {
		return nil, "", err
	}
	return s, "firestore " + s.Where(), nil
}

package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/dynamostore"
)

// cacheStore opens the response cache's store the config names, when a model or a key
// opts into the cache (else it opens nothing: nil, "off"). The local server has all of
// them: memory (make run's, and what an unset store means here), files under a directory,
// which outlive a restart and are shared by the servers of one machine, and DynamoDB and
// Firestore, shared as the functions share them (Firestore's not under -tags novertex:
// firestore.go). It returns nil for store: none, what it opened, for the start-up log line,
// and a func that closes it.
func cacheStore(ctx context.Context, cfg *config.Config) (responsecache.Store, string, func(), error) {
	c := cfg.ResponseCache
	none := func() {}
	if !cfg.Caches() {
		return nil, "off", none, nil
	}
	switch c.Kind {
	case "", config.StoreMemory:
		return responsecache.NewMemory(), "memory", none, nil
	case config.StoreNone:
		return nil, "none", none, nil
	case config.StoreFile:
		dir := cmp.Or(c.Path, config.DefaultCacheDir)
		f, err := responsecache.OpenFile(dir)
		if err != nil {
			return nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("response_cache.path"), err)
		}
		return f, "file " + dir, none, nil
	case config.StoreDynamoDB:
		s, err := dynamostore.Open(ctx, sdkconfig.Load, c)
		if err != nil {
			return nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("response_cache.store"), err)
		}
		return s, "dynamodb table " + c.Table, none, nil
	case config.StoreFirestore:
		s, where, closeClient, err := openFirestoreCache(ctx, c)
		if err != nil {
			return nil, "", none, fmt.Errorf("%s: %w", cfg.Locate("response_cache.store"), err)
		}
		return s, "firestore " + where, func() { _ = closeClient() }, nil
	}
	return nil, "", none, fmt.Errorf("%s: store %q", cfg.Locate("response_cache.store"), c.Kind)
}

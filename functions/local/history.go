package main

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
)

// openHistory opens the keys' usage history (docs/usage-history.md) in the store the
// counters section names, whether or not a key has limits: the counters' own store when it
// keeps one, memory when the counters are in memory (this server's alone, gone when it
// stops), else a store of its own on the same file, table or database. The returned func
// closes what it opened.
func openHistory(ctx context.Context, cfg *config.Config, store counters.Store) (counters.History, func(), error) {
	if r, ok := store.(*counters.Regional); ok {
		store = r.Store
	}
	h, closeHistory, err := openHistoryStore(ctx, cfg, store)
	if err != nil {
		return nil, closeHistory, err
	}
	return counters.HistoryInRegions(h, cfg.Counters.Here, cfg.Counters.Regions), closeHistory, nil // across_regions: per_region
}

// openHistoryStore opens the history itself.
func openHistoryStore(ctx context.Context, cfg *config.Config, store counters.Store) (counters.History, func(), error) {
	none := func() {}
	if h, ok := store.(counters.History); ok {
		return h, none, nil
	}
	c := cfg.Counters
	switch c.Kind {
	case "", config.StoreMemory:
		return counters.NewMemoryHistory(), none, nil
	case config.StoreFile:
		s, err := counters.OpenFile(c.Path)
		return s, none, err
	case config.StoreDynamoDB:
		s, err := dynamocounters.Open(ctx, sdkconfig.Load, c)
		return s, none, err
	case config.StoreFirestore:
		s, closeClient, err := openFirestoreCounters(ctx, c)
		if err != nil {
			return nil, none, err
		}
		h, ok := any(s).(counters.History) // a build without Firestore has none (firestore_novertex.go)
		if !ok {
			_ = closeClient()
			return nil, none, fmt.Errorf("counters.store firestore keeps no usage history in this build")
		}
		return h, func() { _ = closeClient() }, nil
	}
	return nil, none, fmt.Errorf("counters.store %q", c.Kind)
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
)

// openCounters opens the counter store the config names, when a key has limits; the local
// server has all four (Firestore's not under -tags novertex: firestore.go). Several local servers share limits through the file store, or through
// DynamoDB and Firestore as the functions do. The returned func closes the store.
func openCounters(ctx context.Context, cfg *config.Config) (counters.Store, func(), error) {
	s, closeStore, err := openCounterStore(ctx, cfg)
	if err != nil || s == nil {
		return s, closeStore, err
	}
	return counters.InRegions(s, cfg.Counters.Here, cfg.Counters.Regions), closeStore, nil // across_regions: per_region
}

// openCounterStore opens the store itself.
func openCounterStore(ctx context.Context, cfg *config.Config) (counters.Store, func(), error) {
	c := cfg.Counters
	none := func() {}
	if !cfg.Limited() {
		return nil, none, nil
	}
	switch c.Kind {
	case "", config.StoreMemory:
		return counters.NewMemory(), none, nil
	case config.StoreFile:
		s, err := counters.OpenFile(c.Path)
		return s, none, err
	case config.StoreDynamoDB:
		s, err := dynamocounters.Open(ctx, sdkconfig.Load, c)
		if err != nil {
			return nil, none, err
		}
		counters.Warm(s, 5*time.Second)
		return s, none, nil
	case config.StoreFirestore:
		s, closeClient, err := openFirestoreCounters(ctx, c)
		if err != nil {
			return nil, none, err
		}
		counters.Warm(s, 10*time.Second)
		return s, func() { _ = closeClient() }, nil
	}
	return nil, none, fmt.Errorf("counters.store %q", c.Kind)
}

package main

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// openKeyStore opens the store of the keys issued at runtime that the config names (nil
// when it names none), what it opened for the start-up log line, and a func that closes it.
// A memory store lasts as long as the process and is this server's alone.
func openKeyStore(ctx context.Context, cfg *config.Config) (keystore.Store, string, func(), error) {
	ks := cfg.KeyStore
	switch ks.Kind {
	case "", config.StoreNone:
		return nil, "none", func() {}, nil
	case config.StoreMemory:
		return keystore.NewMemory(), "memory", func() {}, nil
	}
	return openSharedKeyStore(ctx, cfg)
}

// openSharedKeyStore opens the file, DynamoDB and Firestore key stores: the hook their
// constructors fill in.
var openSharedKeyStore = func(_ context.Context, cfg *config.Config) (keystore.Store, string, func(), error) {
	return nil, "", func() {}, fmt.Errorf("%s: store %q is not built into this server yet", cfg.Locate("key_store.store"), cfg.KeyStore.Kind)
}

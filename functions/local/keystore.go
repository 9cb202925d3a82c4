package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/dynamostore"
)

// openKeyStore opens the store of the keys issued at runtime that the config names (nil
// when it names none), what it opened for the start-up log line, and a func that closes it.
// A memory store lasts as long as the process and is this server's alone; the file store is
// shared by the servers of one machine and kept across restarts; DynamoDB and Firestore are
// the functions' own (Firestore's not under -tags novertex: firestore.go).
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

// openSharedKeyStore opens the file, DynamoDB and Firestore key stores.
var openSharedKeyStore = func(ctx context.Context, cfg *config.Config) (keystore.Store, string, func(), error) {
	ks := cfg.KeyStore
	none := func() {}
	switch ks.Kind {
	case config.StoreFile:
		path := cmp.Or(ks.Path, config.DefaultKeysFile)
		s, err := keystore.OpenFile(path)
		if err != nil {
			return nil, "", none, err
		}
		return s, "file " + path, none, nil
	case config.StoreDynamoDB:
		s, err := dynamostore.Open(ctx, sdkconfig.Load, ks)
		if err != nil {
			return nil, "", none, err
		}
		return s, "dynamodb table " + ks.Table, none, nil
	case config.StoreFirestore:
		s, where, closeClient, err := openFirestoreKeys(ctx, ks)
		if err != nil {
			return nil, "", none, err
		}
		return s, "firestore " + where, func() { _ = closeClient() }, nil
	}
	return nil, "", none, fmt.Errorf("%s: store %q", cfg.Locate("key_store.store"), ks.Kind)
}

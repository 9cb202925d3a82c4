package main

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/dynamostore"
)

// EnvKeysTable names the DynamoDB table of the keys issued at runtime and the admin audit
// log (the templates set it). It is the key store when the config's key_store names none,
// and the table when the config says dynamodb without one.
const EnvKeysTable = "KEYS_TABLE"

// keyStore opens the DynamoDB key store the config or the environment names, and fills
// cfg.KeyStore in with it (so the counters and the public-URL check know that keys come
// from it). Memory, file and Firestore are refused: a key made or revoked through one
// instance would stay unknown, or working, on the others. It returns nil for none, and what
// it opened, for the start-up log line. The client contacts DynamoDB only at the first call.
func keyStore(ctx context.Context, cfg *config.Config, getenv func(string) string) (keystore.Store, string, error) {
	ks := &cfg.KeyStore
	if ks.Table == "" {
		ks.Table = getenv(EnvKeysTable)
	}
	switch ks.Kind {
	case "":
		if ks.Table == "" {
			return nil, "none", nil
		}
		ks.Kind = config.StoreDynamoDB
	case config.StoreDynamoDB:
		if ks.Table == "" {
			return nil, "", fmt.Errorf("%s: store dynamodb names no table: set key_store.table or %s", cfg.Locate("key_store.store"), EnvKeysTable)
		}
	case config.StoreNone:
		return nil, "none", nil
	default:
		return nil, "", fmt.Errorf("%s: the Lambda functions keep stored keys in DynamoDB (store: dynamodb, or set %s; or none); %s would be each instance's own, so a key made or revoked through one instance would be unknown, or still work, on the others",
			cfg.Locate("key_store.store"), EnvKeysTable, ks.Kind)
	}
	s, err := dynamostore.Open(ctx, awsconf.FromEnvironment, *ks)
	if err != nil {
		return nil, "", err
	}
	return s, "dynamodb table " + ks.Table, nil
}

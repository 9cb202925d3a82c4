package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/dynamostore"
)

// EnvCacheTable names the DynamoDB table of the response cache; the templates set it. The
// config's response_cache.table, when given, wins.
const EnvCacheTable = "CACHE_TABLE"

// cacheStore opens the DynamoDB store of the response cache when a model or a key opts into
// the cache (else nothing: nil, "off"), on the table the config or the environment names.
// Memory and files are refused: instances share neither, so an answer cached by one would
// be a miss on every other, and a burst spread over many instances would cache nothing.
// So is a config that caches with no table named, rather than a cache that never hits. It
// returns what it opened, for the start-up log line. The client contacts DynamoDB only at
// the first call.
func cacheStore(ctx context.Context, cfg *config.Config, getenv func(string) string) (responsecache.Store, string, error) {
	if !cfg.Caches() {
		return nil, "off", nil
	}
	c := cfg.ResponseCache
	c.Table = cmp.Or(c.Table, getenv(EnvCacheTable))
	switch c.Kind {
	case "":
		if c.Table == "" {
			return nil, "", fmt.Errorf("the config opts into the response cache (cache on a model, a key or key_defaults), but no table is named for it: set %s or response_cache.table", EnvCacheTable)
		}
	case config.StoreDynamoDB:
		if c.Table == "" {
			return nil, "", fmt.Errorf("%s: store dynamodb names no table: set response_cache.table or %s", cfg.Locate("response_cache.store"), EnvCacheTable)
		}
	case config.StoreNone:
		return nil, "none", nil
	case config.StoreMemory, config.StoreFile:
		return nil, "", fmt.Errorf("%s: the Lambda function keeps the response cache in DynamoDB (store: dynamodb, or set %s); %s would be each instance's own, so an answer cached by one instance would be a miss on the others",
			cfg.Locate("response_cache.store"), EnvCacheTable, c.Kind)
	default:
		return nil, "", fmt.Errorf("%s: the Lambda function keeps the response cache in DynamoDB (store: dynamodb, or set %s), not %s",
			cfg.Locate("response_cache.store"), EnvCacheTable, c.Kind)
	}
	s, err := dynamostore.Open(ctx, awsconf.FromEnvironment, c)
	if err != nil {
		return nil, "", err
	}
	return s, "dynamodb table " + c.Table, nil
}

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/internal/awstest"
)

// TestCacheStoreChoice: the Lambda function keeps the response cache in DynamoDB, on the
// table the config or CACHE_TABLE names, once a model or a key caches; it refuses every
// store an instance would keep alone, and a cache with no table.
func TestCacheStoreChoice(t *testing.T) {
	awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL=http://127.0.0.1:1") // no client may reach AWS
	const (
		plain  = "models: {m: {routes: [{connection: mock, model: echo}]}}\n"
		cached = "models: {m: {cache: {ttl: 1h}, routes: [{connection: mock, model: echo}]}}\n"
		byKey  = "keys: [{name: app, value: k-1, cache: {ttl: 1m}}]\n" + plain
	)
	for _, tc := range []struct {
		section, models, table, want, err string
	}{
		{"", plain, "", "off", ""},
		{"", plain, "stack-cache", "off", ""},
		{"response_cache: {store: memory}", plain, "", "off", ""},
		{"", cached, "stack-cache", "dynamodb table stack-cache", ""},
		{"", byKey, "stack-cache", "dynamodb table stack-cache", ""},
		{"response_cache: {store: dynamodb}", cached, "stack-cache", "dynamodb table stack-cache", ""},
		{"response_cache: {store: dynamodb, table: mine}", cached, "stack-cache", "dynamodb table mine", ""},
		{"", cached, "", "", "the config opts into the response cache (cache on a model, a key or key_defaults), but no table is named for it: set CACHE_TABLE or response_cache.table"},
		{"response_cache:\n  store: dynamodb", cached, "", "", "line 2: response_cache.store: store dynamodb names no table: set response_cache.table or CACHE_TABLE"},
		{"response_cache:\n  store: memory", cached, "stack-cache", "", "line 2: response_cache.store: the Lambda function keeps the response cache in DynamoDB (store: dynamodb, or set CACHE_TABLE); memory would be each instance's own"},
		{"response_cache:\n  store: file", cached, "", "", "line 2: response_cache.store: the Lambda function keeps the response cache in DynamoDB (store: dynamodb, or set CACHE_TABLE); file would be each instance's own"},
		{"response_cache:\n  store: firestore", cached, "stack-cache", "", "line 2: response_cache.store: the Lambda function keeps the response cache in DynamoDB (store: dynamodb, or set CACHE_TABLE), not firestore"},
	} {
		yaml := tc.section + "\nconnections: {mock: {kind: mock}}\n" + tc.models
		cfg, err := config.Parse(context.Background(), []byte(yaml), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		getenv := func(k string) string { return map[string]string{EnvCacheTable: tc.table}[k] }
		s, what, err := cacheStore(context.Background(), cfg, getenv)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q with table %q: err = %v\nwant %s", yaml, tc.table, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want || (s == nil) != (what == "off") {
			t.Errorf("%q with table %q: %v %q, %v; want %q", yaml, tc.table, s, what, err, tc.want)
		}
	}
}

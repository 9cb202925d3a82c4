package main

import (
	"context"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// TestKeyStoreChoice: the Lambda functions keep stored keys in DynamoDB, on the table the
// config or KEYS_TABLE names, and refuse every store an instance would keep alone.
func TestKeyStoreChoice(t *testing.T) {
	for _, tc := range []struct {
		yaml, table, want, err string
	}{
		{"", "", "none", ""},
		{"", "stack-keys", "dynamodb table stack-keys", ""},
		{"key_store: {store: dynamodb}", "stack-keys", "dynamodb table stack-keys", ""},
		{"key_store: {store: dynamodb, table: mine}", "stack-keys", "dynamodb table mine", ""},
		{"key_store: {store: none}", "stack-keys", "none", ""},
		{"key_store:\n  store: dynamodb\n", "", "", "line 2: key_store.store: store dynamodb names no table: set key_store.table or KEYS_TABLE"},
		{"key_store:\n  store: memory\n", "stack-keys", "", "line 2: key_store.store: the Lambda functions keep stored keys in DynamoDB (store: dynamodb, or set KEYS_TABLE; or none); memory would be each instance's own"},
		{"key_store:\n  store: file\n", "", "", "line 2: key_store.store: the Lambda functions keep stored keys in DynamoDB (store: dynamodb, or set KEYS_TABLE; or none); file would be each instance's own"},
		{"key_store:\n  store: firestore\n", "", "", "line 2: key_store.store: the Lambda functions keep stored keys in DynamoDB"},
	} {
		getenv := func(k string) string { return map[string]string{EnvKeysTable: tc.table}[k] }
		cfg := parse(t, tc.yaml)
		s, what, err := keyStore(context.Background(), cfg, getenv)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q with table %q: err = %v\nwant %s", tc.yaml, tc.table, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want || (s == nil) != (what == "none") {
			t.Errorf("%q with table %q: %v %q, %v; want %q", tc.yaml, tc.table, s, what, err, tc.want)
		}
		// The store opened is the config's from then on: its counters are opened, its keys
		// let a public URL start without config keys.
		if s != nil && (cfg.KeyStore.Kind != config.StoreDynamoDB || !cfg.Limited()) {
			t.Errorf("%q with table %q: the config's key_store is %+v after opening the store", tc.yaml, tc.table, cfg.KeyStore)
		}
	}
}

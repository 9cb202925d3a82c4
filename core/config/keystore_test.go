package config_test

import (
	"context"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// TestAKeyStoreMayHoldLimitedKeys: with a key store named, stored keys may be given limits
// at any time, so the platforms open the counters (Limited) and key_defaults have keys to
// apply to even when the config has none of its own; with none, both stay as they were.
func TestAKeyStoreMayHoldLimitedKeys(t *testing.T) {
	const rest = "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
	for _, c := range []struct {
		name, yaml    string
		named, limits bool
	}{
		{"no key store", "", false, false},
		{"store: none", "key_store: {store: none}\n", false, false},
		{"store: memory", "key_store: {store: memory}\n", true, true},
		{"store: memory, key_defaults and no config keys", "key_store: {store: memory}\nkey_defaults: {rate: {requests_per_minute: 5}}\n", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Parse(context.Background(), []byte(c.yaml+rest), config.Options{Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.KeyStore.Named() != c.named || cfg.Limited() != c.limits {
				t.Errorf("Named %v, Limited %v; want %v, %v", cfg.KeyStore.Named(), cfg.Limited(), c.named, c.limits)
			}
		})
	}
	if err := start("key_store: {store: none}\nkey_defaults: {rate: {requests_per_minute: 5}}\n" + rest); err == nil {
		t.Error("key_defaults with neither config keys nor a key store were accepted")
	}
}

package gcf

import (
	"context"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// TestKeyStoreChoice: the Cloud Functions keep stored keys in Firestore, in the project the
// config or KEYS_PROJECT names, and refuse every store an instance would keep alone.
func TestKeyStoreChoice(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:1") // no client may reach Google
	for _, tc := range []struct {
		yaml string
		env  map[string]string
		want string
		err  string
	}{
		{"", nil, "none", ""},
		{"", map[string]string{EnvKeysProject: "p"}, "firestore collection fngate_keys of database (default)", ""},
		{"", map[string]string{EnvKeysProject: "p", EnvKeysDatabase: "fngate-keys", EnvKeysCollection: "keys"},
			"firestore collection keys of database fngate-keys", ""},
		{"key_store: {store: firestore, database: mine, collection: kept}", map[string]string{EnvKeysProject: "p", EnvKeysDatabase: "theirs"},
			"firestore collection kept of database mine", ""},
		{"key_store: {store: firestore}", nil, "firestore collection fngate_keys of database (default)", ""},
		{"key_store: {store: none}", map[string]string{EnvKeysProject: "p"}, "none", ""},
		{"key_store:\n  store: memory\n", nil, "", "line 2: key_store.store: the Cloud Functions keep stored keys in Firestore (store: firestore, or set KEYS_PROJECT; or none); memory would be each instance's own"},
		{"key_store:\n  store: file\n", nil, "", "line 2: key_store.store: the Cloud Functions keep stored keys in Firestore (store: firestore, or set KEYS_PROJECT; or none); file would be each instance's own"},
		{"key_store:\n  store: dynamodb\n  table: t-1\n", nil, "", "line 2: key_store.store: the Cloud Functions keep stored keys in Firestore"},
	} {
		cfg := parse(t, tc.yaml)
		s, what, err := keyStore(context.Background(), cfg, func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q %v: err = %v\nwant %s", tc.yaml, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want || (s == nil) != (what == "none") {
			t.Errorf("%q %v: %v %q, %v; want %q", tc.yaml, tc.env, s, what, err, tc.want)
		}
		if s != nil && (cfg.KeyStore.Kind != config.StoreFirestore || !cfg.Limited()) {
			t.Errorf("%q %v: the config's key_store is %+v after opening the store", tc.yaml, tc.env, cfg.KeyStore)
		}
	}
}

package gcf

import (
	"context"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// TestCacheStoreChoice: the Cloud Functions gateway keeps the response cache in Firestore,
// in the project, database and collection the config or the environment names, once a
// model or a key caches; it refuses every store an instance would keep alone, and a cache
// with no store.
func TestCacheStoreChoice(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:1") // no client may reach Google
	const (
		plain  = "models: {m: {routes: [{connection: mock, model: echo}]}}\n"
		cached = "models: {m: {cache: {ttl: 1h}, routes: [{connection: mock, model: echo}]}}\n"
		byKey  = "keys: [{name: app, value: k-1, cache: {ttl: 1m}}]\n" + plain
	)
	project := map[string]string{EnvCacheProject: "p"}
	for _, tc := range []struct {
		section, models string
		env             map[string]string
		want, err       string
	}{
		{"", plain, nil, "off", ""},
		{"", plain, project, "off", ""},
		{"response_cache: {store: file}", plain, nil, "off", ""},
		{"", cached, project, "firestore collection fngate_cache of database (default)", ""},
		{"", byKey, project, "firestore collection fngate_cache of database (default)", ""},
		{"", cached, map[string]string{EnvCacheProject: "p", EnvCacheDatabase: "fngate-cache", EnvCacheCollection: "answers"},
			"firestore collection answers of database fngate-cache", ""},
		{"response_cache: {store: firestore, database: mine, collection: kept}", cached, map[string]string{EnvCacheProject: "p", EnvCacheDatabase: "theirs"},
			"firestore collection kept of database mine", ""},
		{"response_cache: {store: firestore}", cached, nil, "firestore collection fngate_cache of database (default)", ""},
		{"", cached, nil, "", "the config opts into the response cache (cache on a model, a key or key_defaults), but names no store for it: set CACHE_PROJECT or response_cache.store: firestore"},
		{"response_cache:\n  store: memory", cached, project, "", "line 2: response_cache.store: the Cloud Functions gateway keeps the response cache in Firestore (store: firestore, or set CACHE_PROJECT); memory would be each instance's own"},
		{"response_cache:\n  store: file", cached, nil, "", "line 2: response_cache.store: the Cloud Functions gateway keeps the response cache in Firestore (store: firestore, or set CACHE_PROJECT); file would be each instance's own"},
		{"response_cache:\n  store: dynamodb\n  table: t-1", cached, project, "", "line 2: response_cache.store: the Cloud Functions gateway keeps the response cache in Firestore (store: firestore, or set CACHE_PROJECT), not dynamodb"},
	} {
		yaml := tc.section + "\nconnections: {mock: {kind: mock}}\n" + tc.models
		cfg, err := config.Parse(context.Background(), []byte(yaml), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, what, err := cacheStore(context.Background(), cfg, func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q %v: err = %v\nwant %s", yaml, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want || (s == nil) != (what == "off") {
			t.Errorf("%q %v: %v %q, %v; want %q", yaml, tc.env, s, what, err, tc.want)
		}
	}
}

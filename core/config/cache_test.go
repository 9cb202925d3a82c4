package config

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// cacheBase is a config with a key, key_defaults and a model whose cache settings the tests
// fill in (the placeholders), each on a line of its own so that a refusal's line is its.
const cacheBase = `
keys:
  - name: app
    value: sk-cache-app-0123456789
    cache: {{key}}
key_defaults:
  cache: {{defaults}}
connections:
  mock: {kind: mock}
models:
  m:
    routes: [{connection: mock, model: echo}]
    cache: {{model}}
`

// cacheYAML fills cacheBase's settings ("" leaves one out) and prepends head (a
// response_cache section).
func cacheYAML(head, model, key, defaults string) string {
	y := head + cacheBase
	for _, s := range []struct{ name, v string }{{"key", key}, {"defaults", defaults}, {"model", model}} {
		if s.v == "" {
			y = strings.Replace(y, "cache: {{"+s.name+"}}", "", 1)
			continue
		}
		y = strings.Replace(y, "{{"+s.name+"}}", s.v, 1)
	}
	return strings.Replace(y, "key_defaults:\n  \n", "", 1)
}

// TestCacheSettings: what a cache setting accepted means, wherever it is (a model, a key,
// key_defaults): ttl from 1 s to 30 days, scope key by default, and {} as a setting that
// caches nothing, which Caches does not count.
func TestCacheSettings(t *testing.T) {
	for _, tc := range []struct {
		set    string
		want   Cache
		caches bool
	}{
		{"{ttl: 1h}", Cache{TTL: Duration(time.Hour), Scope: CacheScopeKey}, true},
		{"{ttl: 1s}", Cache{TTL: Duration(MinCacheTTL), Scope: CacheScopeKey}, true},
		{"{ttl: 720h}", Cache{TTL: Duration(MaxCacheTTL), Scope: CacheScopeKey}, true},
		{"{ttl: 10m, scope: key}", Cache{TTL: Duration(10 * time.Minute), Scope: CacheScopeKey}, true},
		{"{ttl: 10m, scope: team}", Cache{TTL: Duration(10 * time.Minute), Scope: CacheScopeTeam}, true},
		{"{ttl: 10m, scope: global}", Cache{TTL: Duration(10 * time.Minute), Scope: CacheScopeGlobal}, true},
		{"{}", Cache{Scope: CacheScopeKey}, false},
	} {
		for _, where := range []string{"model", "key", "key_defaults"} {
			t.Run(where+" "+tc.set, func(t *testing.T) {
				var y string
				switch where {
				case "model":
					y = cacheYAML("", tc.set, "", "")
				case "key":
					y = cacheYAML("", "", tc.set, "")
				default:
					y = cacheYAML("", "", "", tc.set)
				}
				cfg, err := Parse(context.Background(), []byte(y), Options{})
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]*Cache{"model": cfg.Models["m"].Cache, "key": cfg.Keys[0].Cache}[where]
				if where == "key_defaults" {
					got = cfg.KeyDefaults.Cache
				}
				if got == nil || !reflect.DeepEqual(*got, tc.want) {
					t.Errorf("cache %+v, want %+v", got, tc.want)
				}
				if got.On() != tc.caches || cfg.Caches() != tc.caches {
					t.Errorf("On %v, Caches %v, want %v", got.On(), cfg.Caches(), tc.caches)
				}
			})
		}
	}
}

// TestCacheStoreSettings: the response_cache section names a store of the kinds the response
// cache has, with that kind's settings, and a timeout of 250 ms unless told (a look-up sits
// before every miss); unset, the platform chooses, and may take the settings of its store.
func TestCacheStoreSettings(t *testing.T) {
	timeout := Duration(DefaultCacheTimeout)
	for _, tc := range []struct {
		yaml string
		want ResponseCache
	}{
		{"", ResponseCache{Store{Timeout: timeout}}},
		{"response_cache: {store: memory}", ResponseCache{Store{Kind: StoreMemory, Timeout: timeout}}},
		{"response_cache: {store: file}", ResponseCache{Store{Kind: StoreFile, Timeout: timeout}}},
		{"response_cache: {store: file, path: /var/cache/fngate, timeout: 1s}", ResponseCache{Store{Kind: StoreFile, Path: "/var/cache/fngate", Timeout: Duration(time.Second)}}},
		{"response_cache: {store: dynamodb, table: fngate-cache}", ResponseCache{Store{Kind: StoreDynamoDB, Table: "fngate-cache", Timeout: timeout}}},
		{"response_cache: {store: firestore, project: p, database: d, collection: c}", ResponseCache{Store{Kind: StoreFirestore, Project: "p", Database: "d", Collection: "c", Timeout: timeout}}},
		{"response_cache: {store: none}", ResponseCache{Store{Kind: StoreNone, Timeout: timeout}}},
		{"response_cache: {table: stack-cache}", ResponseCache{Store{Table: "stack-cache", Timeout: timeout}}},
		{"response_cache: {collection: c, database: d}", ResponseCache{Store{Database: "d", Collection: "c", Timeout: timeout}}},
	} {
		t.Run(tc.yaml, func(t *testing.T) {
			cfg, err := Parse(context.Background(), []byte(tc.yaml+"\n"+base), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.ResponseCache, tc.want) {
				t.Errorf("\n got  %+v\n want %+v", cfg.ResponseCache, tc.want)
			}
		})
	}
}

// TestCacheMistakes: each is refused at load with its key path, the line marked "# <-", and
// what is wrong.
func TestCacheMistakes(t *testing.T) {
	const mark = " # <-"
	for _, tc := range []struct {
		name, yaml, path, why string
	}{
		{"a ttl under a second", cacheYAML("", "{ttl: 500ms}"+mark, "", ""), "models.m.cache.ttl", "must be between 1s and 720h0m0s, got 500ms"},
		{"a ttl over 30 days", cacheYAML("", "", "{ttl: 721h}"+mark, ""), "keys[0].cache.ttl", "must be between 1s and 720h0m0s, got 721h0m0s"},
		{"a negative ttl", cacheYAML("", "", "", "{ttl: -1h}"+mark), "key_defaults.cache.ttl", "invalid duration"},
		{"a ttl in days", cacheYAML("", "{ttl: 7d}"+mark, "", ""), "models.m.cache.ttl", "7d"},
		{"a scope without a ttl", cacheYAML("", "", "{scope: team}"+mark, ""), "keys[0].cache.ttl", "is required with scope: a cache without a ttl is off"},
		{"an unknown scope", cacheYAML("", "{ttl: 1h, scope: org}"+mark, "", ""), "models.m.cache.scope", `must be key, team or global, got "org"`},
		{"a misspelt setting", cacheYAML("", "", "", "{ttl: 1h, tll: 2h}"+mark), "key_defaults.cache.tll", "is not a setting of cache (settings: ttl, scope)"},
		{"an unknown store", cacheYAML("response_cache:\n  store: redis"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.store", `must be memory, file, dynamodb, firestore or none, got "redis"`},
		{"a setting of another store", cacheYAML("response_cache:\n  store: memory\n  table: t-1"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.table", "the memory store has no table setting"},
		{"a file setting without a store", cacheYAML("response_cache:\n  path: /tmp/c"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.path", "is set but response_cache.store is not"},
		{"a misspelt store setting", cacheYAML("response_cache:\n  store: dynamodb\n  tabel: t-1"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.tabel", "is not a setting of response_cache"},
		{"a store's own ttl", cacheYAML("response_cache:\n  store: memory\n  ttl: 1h"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.ttl", "is not a setting of response_cache"},
		{"a bad table name", cacheYAML("response_cache:\n  store: dynamodb\n  table: a/b"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.table", "3 to 255 letters"},
		{"a long timeout", cacheYAML("response_cache:\n  store: memory\n  timeout: 1m"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.timeout", "must be at most 30s"},
		{"store none with a key that caches", cacheYAML("response_cache:\n  store: none"+mark+"\n", "", "{ttl: 1h}", ""), "response_cache.store", "is none, but keys[0].cache opts into the cache: name a store, or take cache off"},
		{"store none with a model that caches", cacheYAML("response_cache:\n  store: none"+mark+"\n", "{ttl: 1h}", "", ""), "response_cache.store", "is none, but models.m.cache opts into the cache"},
		{"an embedding model that caches", `
connections:
  mock: {kind: mock}
models:
  e:
    kind: embedding
    dimensions: 8
    routes: [{connection: mock, model: embed}]
    cache: {ttl: 1h}` + mark + "\n", "models.e.cache", "the response cache serves chat models; embeddings are not cached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := 0
			for i, l := range strings.Split(tc.yaml, "\n") {
				if strings.Contains(l, mark) {
					line = i + 1
				}
			}
			_, err := Parse(context.Background(), []byte(tc.yaml), Options{})
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.yaml)
			}
			where := fmt.Sprintf("line %d: %s", line, tc.path)
			if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q\nwant it to name %q and say %q", err, where, tc.why)
			}
		})
	}
}

// TestCacheStoreNoneWithoutCaching: store none is refused only when something caches; a
// setting of {} caches nothing, so it needs no store.
func TestCacheStoreNoneWithoutCaching(t *testing.T) {
	for _, y := range []string{
		cacheYAML("response_cache: {store: none}\n", "", "", ""),
		cacheYAML("response_cache: {store: none}\n", "{}", "{}", "{}"),
	} {
		if _, err := Parse(context.Background(), []byte(y), Options{}); err != nil {
			t.Errorf("%v:\n%s", err, y)
		}
	}
}

package config

import (
	"fmt"
	"time"
)

// Cache opts a model's or a key's requests into the response cache (response_cache): an
// answer is served again to an identical request within TTL. A key's setting (its own, else
// key_defaults') wins over its model's; `cache: {}` on a key turns the cache off for it.
type Cache struct {
	// TTL is how long an answer is served again; 0 is off.
	TTL Duration `yaml:"ttl"`
	// Scope is who shares an entry: key (the default: the key that made it, by its id),
	// team (the keys of the key's team) or global (every key that may use the model).
	Scope string `yaml:"scope"`
}

// Cache scopes.
const (
	CacheScopeKey    = "key"
	CacheScopeTeam   = "team"
	CacheScopeGlobal = "global"
)

// Bounds of a cache TTL: below a second nothing would be served again, and past the stores'
// retention of stored responses an answer is older than anyone expects from a cache.
const (
	MinCacheTTL = time.Second
	MaxCacheTTL = DefaultResponsesTTL
)

// On reports whether the setting caches.
func (c *Cache) On() bool { return c != nil && c.TTL > 0 }

func (c *Cache) validate(p string, bad *problems) {
	if c == nil {
		return
	}
	switch t := c.TTL.D(); {
	case t == 0 && c.Scope != "":
		bad.add(p+".ttl", " is required with scope: a cache without a ttl is off")
	case t != 0 && (t < MinCacheTTL || t > MaxCacheTTL):
		bad.add(p+".ttl", " must be between %v and %v, got %v", MinCacheTTL, MaxCacheTTL, t)
	}
	switch c.Scope {
	case "":
		c.Scope = CacheScopeKey
	case CacheScopeKey, CacheScopeTeam, CacheScopeGlobal:
	default:
		bad.add(p+".scope", " must be key, team or global, got %q", c.Scope)
	}
	for _, key := range bad.where.children(p) {
		if key != "ttl" && key != "scope" {
			bad.add(p+"."+key, " is not a setting of cache (settings: ttl, scope)")
		}
	}
}

// ResponseCache is where cached answers live. The kind, when empty, is the platform's:
// memory on the local server, DynamoDB on Lambda when CACHE_TABLE is set, Firestore on Cloud
// Functions when CACHE_PROJECT is.
type ResponseCache struct {
	Store `yaml:",inline"`
}

// Response cache defaults.
const (
	// DefaultCacheTimeout bounds each cache call: a lookup sits before the upstream call of
	// every miss, so it must be short; a slow store is a miss, never a slow request.
	DefaultCacheTimeout = 250 * time.Millisecond
	// DefaultCacheDir is the file store's directory when path is not given.
	DefaultCacheDir = ".fngate/cache"
	// DefaultCacheCollection is the Firestore collection when collection is not given.
	DefaultCacheCollection = "fngate_cache"
)

var cacheStore = storeSection{
	name:  "response_cache",
	kinds: []string{StoreMemory, StoreFile, StoreDynamoDB, StoreFirestore, StoreNone},
	settings: []storeSetting{{StoreFile, "path"}, {StoreDynamoDB, "table"},
		{StoreFirestore, "project"}, {StoreFirestore, "database"}, {StoreFirestore, "collection"}},
	platform: []string{StoreDynamoDB, StoreFirestore},
	timeout:  DefaultCacheTimeout,
}

// Caches reports whether any model or key opts into the response cache, which then needs a
// store.
func (c *Config) Caches() bool {
	if c.KeyDefaults != nil && c.KeyDefaults.Cache.On() {
		return true
	}
	for i := range c.Keys {
		if c.Keys[i].Cache.On() {
			return true
		}
	}
	for _, m := range c.Models {
		if m.Cache.On() {
			return true
		}
	}
	return false
}

func (c *Config) validateCache(bad *problems) {
	c.ResponseCache.Store.validate(bad, &cacheStore, nil)
	if c.KeyDefaults != nil {
		c.KeyDefaults.Cache.validate("key_defaults.cache", bad)
	}
	for i := range c.Keys {
		c.Keys[i].Cache.validate(fmt.Sprintf("keys[%d].cache", i), bad)
	}
	for name, m := range c.Models {
		p := "models." + name + ".cache"
		m.Cache.validate(p, bad)
		if m.Cache.On() && m.Embedding() {
			bad.add(p, ": the response cache serves chat models; embeddings are not cached")
		}
	}
	if c.ResponseCache.Kind == StoreNone && c.Caches() {
		bad.add("response_cache.store", " is none, but %s opts into the cache: name a store, or take cache off", c.firstCache())
	}
}

// firstCache names a setting that opts into the cache, for a refusal.
func (c *Config) firstCache() string {
	for i := range c.Keys {
		if c.Keys[i].Cache.On() {
			return fmt.Sprintf("keys[%d].cache", i)
		}
	}
	if c.KeyDefaults != nil && c.KeyDefaults.Cache.On() {
		return "key_defaults.cache"
	}
	for name, m := range c.Models {
		if m.Cache.On() {
			return "models." + name + ".cache"
		}
	}
	return "a cache setting"
}

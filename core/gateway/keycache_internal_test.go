package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
)

// The key cache on its own, without its background reads (run), on a clock the test moves:
// what it asks the store, and when.

// countingStore counts a store's calls; hold, when set, makes Changed wait for it to close,
// and byHashHook runs inside each ByHash before it answers.
type countingStore struct {
	keystore.Store
	byHash, changed atomic.Int64
	hold            chan struct{}
	byHashHook      func()
	// changes, when set, answers Changed instead of the store.
	changes func(since time.Time) ([]*keystore.Key, bool, error)
}

func (s *countingStore) ByHash(ctx context.Context, h [32]byte) (*keystore.Key, error) {
	s.byHash.Add(1)
	k, err := s.Store.ByHash(ctx, h)
	if s.byHashHook != nil {
		s.byHashHook()
	}
	return k, err
}

func (s *countingStore) Changed(ctx context.Context, since time.Time) ([]*keystore.Key, bool, error) {
	s.changed.Add(1)
	if s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	if s.changes != nil {
		return s.changes(since)
	}
	return s.Store.Changed(ctx, since)
}

type testClock struct{ ns atomic.Int64 }

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func newTestCache(t *testing.T, store keystore.Store) (*keyCache, *testClock) {
	clock := &testClock{}
	clock.ns.Store(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).UnixNano())
	cfg := &config.Config{KeyStore: config.KeyStore{Store: config.Store{Timeout: config.Duration(200 * time.Millisecond)}, StaleFor: config.Duration(time.Minute)}}
	return newKeyCache(cfg, store, clock.now, slog.New(slog.NewJSONHandler(io.Discard, nil))), clock
}

// storeKey makes a live stored key in s at now and returns it.
func storeKey(t *testing.T, s keystore.Store, now time.Time) *keystore.Key {
	t.Helper()
	_, hash := keystore.NewSecret()
	id := keystore.NewID()
	k := &keystore.Key{Key: config.Key{ID: id, Name: "k-" + id, Hash: hash}, Created: now, Updated: now}
	if err := s.Create(context.Background(), k, nil); err != nil {
		t.Fatal(err)
	}
	k.Version = 1
	return k
}

func mustFind(t *testing.T, c *keyCache, hash [32]byte) *clientKey {
	t.Helper()
	k, oe := c.find(context.Background(), hash, &requestCtx{id: "req_t"})
	if oe != nil {
		t.Fatalf("find: %v", oe)
	}
	return k
}

// TestCachedStoredKeyCallsNoStore: once a stored key is cached, its requests call the store
// not at all until the last read is keysFreshFor old; then one request makes one read.
func TestCachedStoredKeyCallsNoStore(t *testing.T) {
	store := &countingStore{Store: keystore.NewMemory()}
	c, clock := newTestCache(t, store)
	k := storeKey(t, store, clock.now())
	mustFind(t, c, k.Hash)
	if store.byHash.Load() != 1 || store.changed.Load() != 0 {
		t.Fatalf("first use: %d look-ups, %d reads", store.byHash.Load(), store.changed.Load())
	}
	for range 100 {
		clock.advance(keysFreshFor / 100)
		mustFind(t, c, k.Hash)
	}
	if store.byHash.Load() != 1 || store.changed.Load() != 0 {
		t.Errorf("within %v: %d look-ups, %d reads, want 1 and 0", keysFreshFor, store.byHash.Load(), store.changed.Load())
	}
	clock.advance(time.Millisecond)
	mustFind(t, c, k.Hash)
	mustFind(t, c, k.Hash)
	if store.changed.Load() != 1 {
		t.Errorf("past %v: %d reads, want 1", keysFreshFor, store.changed.Load())
	}
}

// TestOneReadAtATime: requests that find the cache stale at once make one read between them;
// while it hangs they wait at most the store's timeout and are served from the cache.
func TestOneReadAtATime(t *testing.T) {
	store := &countingStore{Store: keystore.NewMemory(), hold: make(chan struct{})}
	c, clock := newTestCache(t, store)
	k := storeKey(t, store, clock.now())
	mustFind(t, c, k.Hash)
	clock.advance(keysFreshFor + time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { mustFind(t, c, k.Hash) })
	}
	wg.Wait() // the read hangs until its timeout; nobody waits longer
	if n := store.changed.Load(); n != 1 {
		t.Errorf("%d reads for 8 requests", n)
	}
	// The failed read holds the others back for keysRefreshEvery: no read per request.
	mustFind(t, c, k.Hash)
	if n := store.changed.Load(); n != 1 {
		t.Errorf("%d reads right after a failed one", n)
	}
	close(store.hold)
	clock.advance(keysRefreshEvery)
	mustFind(t, c, k.Hash)
	if n := store.changed.Load(); n != 2 {
		t.Errorf("%d reads once the pause is over, want 2", n)
	}
}

// TestALookUpOlderThanARevocationDoesNotBringTheKeyBack: a look-up that read a key before its
// deletion and answers after a read applied the tombstone leaves the key refused.
func TestALookUpOlderThanARevocationDoesNotBringTheKeyBack(t *testing.T) {
	inner := keystore.NewMemory()
	store := &countingStore{Store: inner}
	c, clock := newTestCache(t, store)
	k := storeKey(t, inner, clock.now())
	store.byHashHook = func() { // the look-up has read the live key; now it is deleted, and a read sees it
		store.byHashHook = nil
		clock.advance(time.Second)
		d := k.Clone()
		d.Deleted, d.Version, d.Updated = true, 2, clock.now()
		if err := inner.Update(context.Background(), d, nil); err != nil {
			t.Error(err)
		}
		c.refresh()
	}
	if _, oe := c.find(context.Background(), k.Hash, &requestCtx{}); oe == nil || oe.Status != http.StatusUnauthorized {
		t.Errorf("the deleted key was served from a look-up older than its deletion: %v", oe)
	}
}

// TestACacheFarBehindStartsOver: a read that finds more changes than maxChangePages pages
// drops the cache, so each key is looked up afresh.
func TestACacheFarBehindStartsOver(t *testing.T) {
	store := &countingStore{Store: keystore.NewMemory()}
	c, clock := newTestCache(t, store)
	k := storeKey(t, store, clock.now())
	mustFind(t, c, k.Hash)
	store.changes = func(since time.Time) ([]*keystore.Key, bool, error) {
		o := storeKey(t, store.Store, since.Add(time.Millisecond)) // always one more
		return []*keystore.Key{o}, true, nil
	}
	clock.advance(keysFreshFor + time.Millisecond)
	mustFind(t, c, k.Hash)
	if n := store.changed.Load(); n != maxChangePages {
		t.Errorf("%d pages read, want %d", n, maxChangePages)
	}
	if n := store.byHash.Load(); n != 2 {
		t.Errorf("%d look-ups: the cache was not dropped", n)
	}
}

// TestStoredKeyLimitsCompiledOncePerVersion: a stored key's rules are compiled when its
// version is cached, and served as they are until a new version arrives.
func TestStoredKeyLimitsCompiledOncePerVersion(t *testing.T) {
	store := &countingStore{Store: keystore.NewMemory()}
	c, clock := newTestCache(t, store)
	k := storeKey(t, store, clock.now())
	first := mustFind(t, c, k.Hash)
	if first.rules != nil {
		t.Fatalf("a key without limits has rules %v", first.rules)
	}
	u := k.Clone()
	u.Rate, u.Version, u.Updated = &config.Rate{RequestsPerMinute: 5}, 2, clock.now()
	if err := store.Update(context.Background(), u, nil); err != nil {
		t.Fatal(err)
	}
	clock.advance(keysFreshFor + time.Millisecond)
	a, b := mustFind(t, c, k.Hash), mustFind(t, c, k.Hash)
	if len(a.rules) != 1 || a.rules[0].rpm != 5 || a.rules[0] != b.rules[0] {
		t.Errorf("rules %v and %v, want one rule of 5 rpm, compiled once", a.rules, b.rules)
	}
}

// authGateway is a gateway with one config key and one stored key, and a request of each;
// store, when not nil, wraps the memory store, and now, when not nil, is its clock.
func authGateway(tb testing.TB, store *countingStore, now func() time.Time) (g *Gateway, configReq, storedReq *http.Request) {
	tb.Helper()
	cfg, err := config.Parse(context.Background(), []byte(`
keys: [{name: app, value: sk-config-app-0123456789abcdef0123456789abcdef01234}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
key_store: {store: memory}
`), config.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		tb.Fatal(err)
	}
	if store == nil {
		store = &countingStore{}
	}
	store.Store = keystore.NewMemory()
	secret, hash := keystore.NewSecret()
	if err := store.Create(context.Background(), &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: "team", Hash: hash}, Updated: time.Now()}, nil); err != nil {
		tb.Fatal(err)
	}
	reg := providers.Registry{}
	mock.Register(reg)
	g, err = New(cfg, Options{Registry: reg, KeyStore: store, Now: now, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(g.Close)
	configReq = httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	configReq.Header.Set("Authorization", "Bearer sk-config-app-0123456789abcdef0123456789abcdef01234")
	storedReq = httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	storedReq.Header.Set("Authorization", "Bearer "+secret)
	if k, oe := g.authenticate(storedReq, &requestCtx{}); oe != nil || !k.stored {
		tb.Fatalf("stored key: %v %v", k, oe)
	}
	return g, configReq, storedReq
}

// TestACachedStoredKeyAllocatesNoMore: authenticating a cached stored key allocates no more
// than authenticating a config key.
func TestACachedStoredKeyAllocatesNoMore(t *testing.T) {
	g, configReq, storedReq := authGateway(t, nil, nil)
	rc := &requestCtx{}
	cfgAllocs := testing.AllocsPerRun(1000, func() { _, _ = g.authenticate(configReq, rc) })
	storedAllocs := testing.AllocsPerRun(1000, func() { _, _ = g.authenticate(storedReq, rc) })
	if storedAllocs > cfgAllocs {
		t.Errorf("a cached stored key allocates %v times, a config key %v", storedAllocs, cfgAllocs)
	}
}

// BenchmarkAuthenticate is the key check alone: a config key (a constant-time pass over the
// config's hashes) and a cached stored key (that pass, then the cache).
func BenchmarkAuthenticate(b *testing.B) {
	g, configReq, storedReq := authGateway(b, nil, nil)
	for _, c := range []struct {
		name string
		r    *http.Request
	}{{"config key", configReq}, {"stored key", storedReq}} {
		b.Run(c.name, func(b *testing.B) {
			rc := &requestCtx{}
			b.ReportAllocs()
			for b.Loop() {
				if _, oe := g.authenticate(c.r, rc); oe != nil {
					b.Fatal(oe)
				}
			}
		})
	}
}

// TestAFullCacheStaysBounded: past maxCachedKeys a look-up evicts an entry (and its id), and a
// read of changes adds no key nobody asked for.
func TestAFullCacheStaysBounded(t *testing.T) {
	c, clock := newTestCache(t, keystore.NewMemory())
	key := func(i int) *keystore.Key {
		var h [32]byte
		h[0], h[1], h[2] = byte(i), byte(i>>8), byte(i>>16)
		return &keystore.Key{Key: config.Key{ID: fmt.Sprintf("%s%d", keystore.IDPrefix, i), Hash: h}, Version: 1}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range maxCachedKeys + 10 {
		c.apply(key(i), clock.now(), true)
	}
	c.apply(key(maxCachedKeys+10), clock.now(), false)
	if len(c.byHash) != maxCachedKeys || len(c.byID) != maxCachedKeys {
		t.Errorf("%d entries, %d ids; want %d of each", len(c.byHash), len(c.byID), maxCachedKeys)
	}
	for id, h := range c.byID {
		if e := c.byHash[h]; e == nil || e.key.ID != id {
			t.Fatalf("id %s names an entry that is gone", id)
		}
	}
}

// TestAConfigKeyNeverCallsTheKeyStore: a config key matches before the key store is
// consulted, so its requests never call it, however stale the cache (a stored key's request
// then makes one read before it is served).
func TestAConfigKeyNeverCallsTheKeyStore(t *testing.T) {
	store := &countingStore{}
	clock := &testClock{}
	clock.ns.Store(time.Now().UnixNano())
	g, configReq, storedReq := authGateway(t, store, clock.now)
	g.stored.close() // no background reads: every call counted is a request's
	base := store.byHash.Load() + store.changed.Load()
	clock.advance(time.Hour)
	for range 10 {
		if k, oe := g.authenticate(configReq, &requestCtx{}); oe != nil || k.stored {
			t.Fatalf("config key: %v %v", k, oe)
		}
	}
	if n := store.byHash.Load() + store.changed.Load() - base; n != 0 {
		t.Errorf("config keys' requests made %d key store calls", n)
	}
	if _, oe := g.authenticate(storedReq, &requestCtx{}); oe != nil {
		t.Errorf("a stored key after an hour: %v", oe)
	}
	if n := store.changed.Load(); n != 1 {
		t.Errorf("the stale stored key's request made %d reads, want 1", n)
	}
}

package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
)

// The key cache's bounds. keysFreshFor is the revocation bound: a request is never served
// from a cache whose last "changes since" read started longer ago than that, so a key
// revoked, disabled or rotated anywhere stops working on every instance within it.
const (
	keysFreshFor = 5 * time.Second
	// keysRefreshEvery is the background read's period, where the process runs between
	// requests (the local server, Cloud Functions); a frozen Lambda environment runs nothing,
	// so its first request after a thaw makes the read (keepCurrent). It is also how long
	// requests wait after a failed read before one of them tries again.
	keysRefreshEvery = 2 * time.Second
	// keysUnknownFor is how long a secret the store does not know is refused without asking
	// it again. A key made meanwhile is let in by the next read, which clears its entry.
	keysUnknownFor = 5 * time.Second
	// The look-ups of secrets not in the cache, per instance: a token bucket. Past it an
	// unknown secret gets its 401 without a store call, so random keys cannot flood the
	// store (a key made in the last seconds may meet the same 401 until the next read adds it).
	keysLookupRate  = 20 // per second
	keysLookupBurst = 40
	// maxCachedKeys bounds the cache: past it a look-up evicts an entry, and a read adds no
	// key it has not been asked for.
	maxCachedKeys  = 10000
	maxUnknownKeys = 4096
	// maxChangePages bounds one read: an instance further behind than that many pages of
	// keystore.MaxChanges drops its cache and looks each key up afresh.
	maxChangePages = 10
	// keysClockSkew widens each read's "since" beyond the store call's timeout, for writers
	// whose clocks run behind this instance's (a key's Updated is its writer's time).
	keysClockSkew = 5 * time.Second
)

// Why a stored key's secret no longer works, in its key_refused line.
const (
	refusedDisabled = "disabled"
	refusedExpired  = "expired"
	refusedDeleted  = "deleted"
	refusedRotated  = "rotated" // the secret the key had before its rotation
)

// keyCache serves one instance the keys issued at runtime (core/keystore): a secret not in
// config is looked up in the cache by its SHA-256, else once in the store (bounded by the
// key_store timeout, deduplicated, rate-bounded, negatively cached), and the answer is kept.
// The cache follows the store through keystore.Store.Changed reads: in the background every
// keysRefreshEvery, and before serving a request that finds the last read older than
// keysFreshFor. Otherwise nothing on a cached key's path calls the store.
//
// The store unreachable, cached keys keep working for key_store.stale_for after the store
// last vouched for them, then get a 503; keys not cached get the 503 at once (fail closed).
type keyCache struct {
	store    keystore.Store
	timeout  time.Duration // of each store call
	staleFor time.Duration
	now      func() time.Time
	log      *slog.Logger
	// What a stored key that sets none of its own takes from the config: key_defaults, the
	// request profile and its ignore list (as validation gives config keys).
	defaults *config.KeyLimits
	profile  string
	ignore   []string

	mu      sync.RWMutex
	byHash  map[[32]byte]*cachedKey // live keys, and the refused ones and old secrets kept to log their id
	byID    map[string][32]byte     // each cached key's current secret's hash
	unknown map[[32]byte]time.Time  // secrets the store does not know, until when that is trusted
	lookups map[[32]byte]*lookup    // store look-ups in flight, one per secret
	tokens  float64                 // the look-up bucket
	filled  time.Time               // when tokens was last topped up

	// refreshed is when the last read that answered started (UnixNano); retryAt, after a read
	// that failed, is when a request may try again.
	refreshed atomic.Int64
	retryAt   atomic.Int64
	flight    sync.Mutex
	running   chan struct{} // closed when the read in flight ends; nil when none is
	cursor    time.Time     // the next read's since; only the read in flight touches it

	healthMu     sync.Mutex
	failures     int // store calls failed since the last that answered
	failingSince time.Time

	stop chan struct{}
	once sync.Once
}

// cachedKey is one secret the cache knows: the key it opens, as served, or why it opens none.
type cachedKey struct {
	key     clientKey
	version int64
	refused string    // refusedDisabled, refusedDeleted, refusedRotated; "" while it works
	expires time.Time // zero: never
	// vouched is when the store last said this entry was so (UnixNano): its look-up; the reads
	// that answer vouch for every entry at once (keyCache.refreshed).
	vouched int64
}

// lookup is one store look-up in flight, which requests with the same secret wait for.
type lookup struct {
	done chan struct{}
	err  error
}

// errNoLookup is a look-up the bucket had no token for.
var errNoLookup = errors.New("key store look-ups are rate-bounded")

func newKeyCache(cfg *config.Config, store keystore.Store, now func() time.Time, log *slog.Logger) *keyCache {
	c := &keyCache{
		store: store, timeout: cfg.KeyStore.Timeout.D(), staleFor: cfg.KeyStore.StaleFor.D(), now: now, log: log,
		defaults: cfg.KeyDefaults, profile: cfg.RequestProfile, ignore: cfg.RequestProfileIgnore,
		byHash: map[[32]byte]*cachedKey{}, byID: map[string][32]byte{}, unknown: map[[32]byte]time.Time{}, lookups: map[[32]byte]*lookup{},
		tokens: keysLookupBurst, stop: make(chan struct{}),
	}
	// The cache starts empty, so nothing in it is stale: the first read asks what changed
	// since a little before now, and each key is looked up as it is first used.
	start := now()
	c.filled = start
	c.cursor = start.Add(-c.overlap())
	c.refreshed.Store(start.UnixNano())
	return c
}

// overlap is how far before the last read's start the next one asks from: a look-up that
// began before that read may keep what it found after it, and writers' clocks differ.
func (c *keyCache) overlap() time.Duration { return c.timeout + keysClockSkew }

// run reads the store's changes every keysRefreshEvery until close.
func (c *keyCache) run() {
	t := time.NewTicker(keysRefreshEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.refresh()
		case <-c.stop:
			return
		}
	}
}

func (c *keyCache) close() { c.once.Do(func() { close(c.stop) }) }

// find is the stored key of the secret whose hash is given, or the client's error: 401 for
// a secret the store does not know or whose key no longer works, 503 when the store cannot
// say.
func (c *keyCache) find(ctx context.Context, hash [32]byte, rc *requestCtx) (*clientKey, *llm.Error) {
	now := c.now()
	c.keepCurrent(now)
	for looked := false; ; looked = true {
		c.mu.RLock()
		e := c.byHash[hash]
		var until time.Time
		if e == nil {
			until = c.unknown[hash]
		}
		c.mu.RUnlock()
		switch {
		case e != nil:
			return c.serve(e, now, rc)
		case now.Before(until), looked:
			return nil, invalidKey()
		}
		switch err := c.lookUp(ctx, hash, now); {
		case errors.Is(err, errNoLookup):
			return nil, invalidKey()
		case err != nil:
			return nil, keyStoreUnavailable()
		}
	}
}

// serve answers a cached secret: its key while it works and the store has vouched for it
// within stale_for.
func (c *keyCache) serve(e *cachedKey, now time.Time, rc *requestCtx) (*clientKey, *llm.Error) {
	why := e.refused
	if why == "" && !e.expires.IsZero() && !now.Before(e.expires) {
		why = refusedExpired
	}
	if why != "" {
		c.log.LogAttrs(context.Background(), slog.LevelWarn, record.MsgKeyRefused,
			slog.String("request_id", rc.id), slog.String("key", e.key.Name), slog.String("key_id", e.key.ID), slog.String("reason", why))
		return nil, invalidKey()
	}
	if now.UnixNano()-max(e.vouched, c.refreshed.Load()) > int64(c.staleFor) {
		return nil, keyStoreUnavailable()
	}
	return &e.key, nil
}

func keyStoreUnavailable() *llm.Error {
	return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "key_store_unavailable", RetryAfter: "1",
		Message: "The gateway cannot check this key right now: its key store is unreachable (key_store_unavailable). Retry shortly."}
}

// keepCurrent reads the store's changes before a request is served from a cache whose last
// read is older than keysFreshFor (a Lambda environment thawed): one read per instance at a
// time, which the others wait for, each at most the store's timeout. After a failed read,
// requests go on with the cache (within stale_for) until keysRefreshEvery has passed.
func (c *keyCache) keepCurrent(now time.Time) {
	n := now.UnixNano()
	if n-c.refreshed.Load() <= int64(keysFreshFor) || n < c.retryAt.Load() {
		return
	}
	c.refresh()
}

// refresh makes one read of the store's changes, or waits for the one in flight (at most
// the store's timeout).
func (c *keyCache) refresh() {
	c.flight.Lock()
	if ch := c.running; ch != nil {
		c.flight.Unlock()
		t := time.NewTimer(c.timeout)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		}
		return
	}
	ch := make(chan struct{})
	c.running = ch
	c.flight.Unlock()
	start := c.now()
	err := c.readChanges(start)
	if err != nil {
		c.retryAt.Store(start.Add(keysRefreshEvery).UnixNano())
	}
	c.noted("changed", err)
	c.flight.Lock()
	c.running = nil
	c.flight.Unlock()
	close(ch)
}

// readChanges applies what changed since the cursor, page by page; a cache too far behind
// is dropped instead, and refills by look-ups.
func (c *keyCache) readChanges(start time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	since := c.cursor
	for page := 1; ; page++ {
		keys, more, err := c.store.Changed(ctx, since)
		if err != nil {
			return err
		}
		c.mu.Lock()
		for _, k := range keys {
			c.apply(k, start, false)
		}
		c.mu.Unlock()
		if !more {
			break
		}
		if n := len(keys); n > 0 && page < maxChangePages && keys[n-1].Updated.After(since) {
			since = keys[n-1].Updated
			continue
		}
		c.mu.Lock()
		clear(c.byHash)
		clear(c.byID)
		clear(c.unknown)
		c.mu.Unlock()
		break
	}
	c.cursor = start.Add(-c.overlap())
	c.refreshed.Store(start.UnixNano())
	return nil
}

// lookUp asks the store for the key of hash, once for all the requests that carry it, and
// caches the answer: the key, or that there is none. It reports errNoLookup when the bucket
// is empty, and the store's error when it could not say.
func (c *keyCache) lookUp(ctx context.Context, hash [32]byte, now time.Time) error {
	c.mu.Lock()
	if l := c.lookups[hash]; l != nil {
		c.mu.Unlock()
		select {
		case <-l.done:
			return l.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if !c.take(now) {
		c.mu.Unlock()
		return errNoLookup
	}
	l := &lookup{done: make(chan struct{})}
	c.lookups[hash] = l
	c.mu.Unlock()

	// Not the request's own deadline alone: the others waiting for this look-up share it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
	k, err := c.store.ByHash(sctx, hash)
	cancel()
	if err == nil && k.Hash != hash { // a store's bug must not open one key with another's secret
		k, err = nil, keystore.ErrNotFound
	}
	c.mu.Lock()
	switch {
	case err == nil:
		c.apply(k, now, true)
		if c.byHash[hash] == nil { // not servable (an id that is not a stored key's)
			c.forget(hash, now)
		}
	case errors.Is(err, keystore.ErrNotFound):
		c.forget(hash, now)
		err = nil
	}
	delete(c.lookups, hash)
	c.mu.Unlock()
	l.err = err
	close(l.done)
	c.noted("by_hash", err)
	return err
}

// take takes a look-up token, if the bucket has one. c.mu is held.
func (c *keyCache) take(now time.Time) bool {
	if d := now.Sub(c.filled); d > 0 {
		c.tokens = min(c.tokens+d.Seconds()*keysLookupRate, keysLookupBurst)
		c.filled = now
	}
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

// forget caches that the store knows no key of hash. c.mu is held.
func (c *keyCache) forget(hash [32]byte, now time.Time) {
	if len(c.unknown) >= maxUnknownKeys {
		for h, until := range c.unknown {
			if !now.Before(until) {
				delete(c.unknown, h)
			}
		}
		if len(c.unknown) >= maxUnknownKeys {
			clear(c.unknown)
		}
	}
	c.unknown[hash] = now.Add(keysUnknownFor)
}

// apply brings the cache up to the stored key k, read at now: looked up (its secret asked
// for), or from a read of changes, which adds no key the cache lacks once it is full. An
// answer older than what the cache has is ignored, which is why a read keeps the keys it
// finds revoked, tombstones included: a look-up that began before the revocation and ends
// after the read must not bring the key back. c.mu is held.
func (c *keyCache) apply(k *keystore.Key, now time.Time, looked bool) {
	if !strings.HasPrefix(k.ID, keystore.IDPrefix) {
		return // a config key's id is its name: a stored key must not share its counters
	}
	old, seen := c.byID[k.ID]
	if cur := c.byHash[old]; seen && cur != nil {
		if cur.version >= k.Version {
			return
		}
		if old != k.Hash { // rotated: the old secret now opens nothing
			why := refusedRotated
			if k.Deleted {
				why = refusedDeleted
			}
			c.byHash[old] = &cachedKey{key: cur.key, version: k.Version, refused: why}
		}
	} else if !looked && len(c.byHash) >= maxCachedKeys {
		return
	}
	e := &cachedKey{key: c.served(k), version: k.Version, vouched: now.UnixNano()}
	switch {
	case k.Deleted:
		e.refused = refusedDeleted
	case k.Disabled:
		e.refused = refusedDisabled
	}
	if k.ExpiresAt != nil {
		e.expires = *k.ExpiresAt
	}
	if _, ok := c.byHash[k.Hash]; !ok && len(c.byHash) >= maxCachedKeys {
		c.evict()
	}
	c.byHash[k.Hash] = e
	c.byID[k.ID] = k.Hash
	delete(c.unknown, k.Hash)
}

// evict drops one entry of a few drawn at random (Go's map order is random enough), a
// refused one when there is one among them, so a full cache costs a look-up no more than a
// few steps. c.mu is held.
func (c *keyCache) evict() {
	var victim [32]byte
	found, drawn := false, 0
	for h, e := range c.byHash {
		if !found || e.refused != "" {
			victim, found = h, true
		}
		if drawn++; e.refused != "" || drawn == 16 {
			break
		}
	}
	if !found {
		return
	}
	if e := c.byHash[victim]; c.byID[e.key.ID] == victim {
		delete(c.byID, e.key.ID)
	}
	delete(c.byHash, victim)
}

// served is the stored key k as the gateway serves it: what it leaves unset taken from the
// config as a config key's is (validation does that for those), and its limits compiled,
// once per version.
func (c *keyCache) served(k *keystore.Key) clientKey {
	ck := clientKey{Key: k.Key, stored: true}
	ck.Team = k.Team // the stored key's own field, which shadows the config key's
	ck.Value, ck.SHA256 = "", ""
	if ck.RequestProfile == "" {
		ck.RequestProfile = c.profile
	}
	if ck.RequestProfileIgnore == nil {
		ck.RequestProfileIgnore = c.ignore
	}
	ck.rules = compileRules(ck.KeyLimits.Effective(c.defaults))
	return ck
}

// noted logs the key store's health: the first failure of a burst, and the first answer
// after one, never a line per request.
func (c *keyCache) noted(op string, err error) {
	c.healthMu.Lock()
	defer c.healthMu.Unlock()
	now := c.now()
	switch {
	case err == nil && c.failures > 0:
		c.log.LogAttrs(context.Background(), slog.LevelInfo, record.MsgKeyStoreRecovered,
			slog.Int("failures", c.failures), slog.Float64("failing_ms", ms(now.Sub(c.failingSince))))
		c.failures = 0
	case err != nil:
		if c.failures == 0 {
			c.failingSince = now
			c.log.LogAttrs(context.Background(), slog.LevelError, record.MsgKeyStoreError,
				slog.String("op", op), slog.String("error", err.Error()),
				slog.String("stale_for", c.staleFor.String()))
		}
		c.failures++
	}
}

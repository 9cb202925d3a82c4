package routestate

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultRefresh bounds how stale a gateway instance's view of route state is while the store
// answers: a route cooled by a handler is skipped by every instance within this time.
const DefaultRefresh = 5 * time.Second

// CacheOptions tune a Cache.
type CacheOptions struct {
	// Refresh is the time between store reads; 0 means DefaultRefresh.
	Refresh time.Duration
	// Timeout bounds one store read; 0 means Refresh.
	Timeout time.Duration
	// Logger receives refresh failures and recoveries; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Cache is a gateway instance's view of route state. Lookup serves from memory and never
// waits on the store; a background loop replaces the view every Refresh. When the store fails,
// the last good view stays in place (empty before the first success, which means config order)
// and the failure is logged: route state can steer traffic but never fail a request.
type Cache struct {
	src     Lister
	refresh time.Duration
	timeout time.Duration
	log     *slog.Logger
	now     func() time.Time

	view        atomic.Pointer[view]
	lastAttempt atomic.Int64 // unix nanos of the last store read, successful or not
	kick        chan struct{}

	mu        sync.Mutex // guards failing state and the loop's lifecycle
	failures  int
	lastLog   time.Time
	stop      context.CancelFunc
	done      chan struct{}
	refreshMu sync.Mutex // one store read at a time
}

type view struct {
	states map[string]State
	at     time.Time
}

// NewCache returns a cache over src with an empty view; call Start to begin refreshing.
func NewCache(src Lister, opt CacheOptions) *Cache {
	c := &Cache{
		src:     src,
		refresh: opt.Refresh,
		timeout: opt.Timeout,
		log:     opt.Logger,
		now:     opt.Now,
		kick:    make(chan struct{}, 1),
	}
	if c.refresh <= 0 {
		c.refresh = DefaultRefresh
	}
	if c.timeout <= 0 {
		c.timeout = c.refresh
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.view.Store(&view{states: map[string]State{}})
	return c
}

// Lookup returns the route's cached record. It only reads memory; when the view has not been
// refreshed for two periods (an instance thawed after a freeze, as Lambda does between
// invocations) it also nudges the loop, without waiting for it.
func (c *Cache) Lookup(route string) (State, bool) {
	if c.now().UnixNano()-c.lastAttempt.Load() > int64(2*c.refresh) {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
	s, ok := c.view.Load().states[route]
	return s, ok
}

// Age is how old the current view is; a large age means the store has been failing.
func (c *Cache) Age() time.Duration {
	v := c.view.Load()
	if v.at.IsZero() {
		return -1
	}
	return c.now().Sub(v.at)
}

// Refresh reads the store once and replaces the view on success. On failure the old view
// stays and the error is returned (and logged).
func (c *Cache) Refresh(ctx context.Context) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.lastAttempt.Store(c.now().UnixNano())
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	states, err := c.src.List(ctx)
	if err != nil {
		c.failed(err)
		return err
	}
	m := make(map[string]State, len(states))
	for _, s := range states {
		m[s.Route] = s
	}
	c.view.Store(&view{states: m, at: c.now()})
	c.recovered()
	return nil
}

// failureLogEvery rate-limits the failure log while the store stays down.
const failureLogEvery = time.Minute

func (c *Cache) failed(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures++
	now := c.now()
	if c.failures > 1 && now.Sub(c.lastLog) < failureLogEvery {
		return
	}
	c.lastLog = now
	c.log.Warn("route state refresh failed; keeping the last good view",
		slog.String("error", err.Error()), slog.Int("failures", c.failures), slog.Duration("view_age", c.Age()))
}

func (c *Cache) recovered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failures > 0 {
		c.log.Info("route state refresh recovered", slog.Int("failures", c.failures))
	}
	c.failures = 0
}

// Start runs the refresh loop in the background, reading the store at once and then every
// Refresh, until Close or ctx ends. It returns immediately.
func (c *Cache) Start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		return
	}
	ctx, c.stop = context.WithCancel(ctx)
	c.done = make(chan struct{})
	go c.loop(ctx, c.done)
}

func (c *Cache) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.kick:
		}
		_ = c.Refresh(ctx)
		t.Reset(c.refresh)
	}
}

// Close stops the loop and waits for it.
func (c *Cache) Close() {
	c.mu.Lock()
	stop, done := c.stop, c.done
	c.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

var _ Reader = (*Cache)(nil)

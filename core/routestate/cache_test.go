package routestate_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// flakyLister answers from a memory store unless told to fail or to block.
type flakyLister struct {
	*routestate.Memory
	fail  atomic.Bool
	gate  chan struct{} // non-nil: List waits for it
	calls atomic.Int64
}

func (f *flakyLister) List(ctx context.Context) ([]routestate.State, error) {
	f.calls.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.fail.Load() {
		return nil, errors.New("dial tcp: connection refused")
	}
	return f.Memory.List(ctx)
}

func put(t *testing.T, s routestate.Store, st routestate.State) {
	t.Helper()
	cur, err := s.Get(context.Background(), st.Route)
	if err != nil {
		t.Fatal(err)
	}
	st.Version = cur.Version
	if _, err := s.Put(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
}

func TestCacheKeepsLastGoodViewWhenTheStoreFails(t *testing.T) {
	src := &flakyLister{Memory: routestate.NewMemory()}
	put(t, src, routestate.State{Route: "a/x", Status: routestate.Disabled, Reason: "credentials"})
	var logs gatewaytest.LogBuffer
	c := routestate.NewCache(src, routestate.CacheOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	ctx := context.Background()

	if _, ok := c.Lookup("a/x"); ok {
		t.Fatal("a cache that never read the store has a record")
	}
	if c.Age() >= 0 {
		t.Fatalf("Age before the first read = %v, want negative", c.Age())
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	src.fail.Store(true)
	for range 3 {
		if err := c.Refresh(ctx); err == nil {
			t.Fatal("Refresh over a failing store returned nil")
		}
	}
	st, ok := c.Lookup("a/x")
	if !ok || st.Status != routestate.Disabled {
		t.Fatalf("after store failures Lookup = %+v, %v; want the last good view", st, ok)
	}
	if n := strings.Count(logs.String(), "route state refresh failed"); n != 1 {
		t.Fatalf("%d failure lines for 3 failures in a minute, want 1 (rate-limited):\n%s", n, logs.String())
	}
	src.fail.Store(false)
	put(t, src, routestate.State{Route: "a/x", Status: routestate.Active})
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.Lookup("a/x"); st.Status != routestate.Active {
		t.Fatalf("after recovery Lookup = %+v", st)
	}
	if !strings.Contains(logs.String(), "route state refresh recovered") {
		t.Fatalf("no recovery line:\n%s", logs.String())
	}
}

func TestCacheStartsEmptyWhenTheStoreIsDown(t *testing.T) {
	src := &flakyLister{Memory: routestate.NewMemory()}
	put(t, src, routestate.State{Route: "a/x", Status: routestate.Disabled})
	src.fail.Store(true)
	c := routestate.NewCache(src, routestate.CacheOptions{Refresh: 10 * time.Millisecond})
	c.Start(context.Background())
	defer c.Close()
	for src.calls.Load() < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	if st, ok := c.Lookup("a/x"); ok {
		t.Fatalf("Lookup = %+v with the store down from the start; want no record (config order)", st)
	}
}

func TestCacheLookupNeverWaitsForTheStore(t *testing.T) {
	src := &flakyLister{Memory: routestate.NewMemory(), gate: make(chan struct{})}
	put(t, src, routestate.State{Route: "a/x", Status: routestate.Disabled})
	c := routestate.NewCache(src, routestate.CacheOptions{Refresh: time.Hour})
	c.Start(context.Background())
	defer c.Close()
	for src.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// The store read is now hanging.
	t0 := time.Now()
	for range 1000 {
		c.Lookup("a/x")
	}
	if d := time.Since(t0); d > 100*time.Millisecond {
		t.Fatalf("1000 lookups during a hanging store read took %v", d)
	}
	close(src.gate)
	waitFor(t, time.Second, func() bool { st, _ := c.Lookup("a/x"); return st.Status == routestate.Disabled })
}

func TestCacheSeesAChangeWithinTheRefreshPeriod(t *testing.T) {
	src := routestate.NewMemory()
	const period = 50 * time.Millisecond
	c := routestate.NewCache(src, routestate.CacheOptions{Refresh: period})
	c.Start(context.Background())
	defer c.Close()
	waitFor(t, time.Second, func() bool { return c.Age() >= 0 })
	put(t, src, routestate.State{Route: "a/x", Status: routestate.Cooling, Until: time.Now().Add(time.Minute)})
	t0 := time.Now()
	waitFor(t, 2*time.Second, func() bool { st, _ := c.Lookup("a/x"); return st.Status == routestate.Cooling })
	// Generous slack for -race on a shared machine; the point is the order of magnitude.
	if d := time.Since(t0); d > period+250*time.Millisecond {
		t.Fatalf("change visible after %v with a %v refresh period", d, period)
	}
}

// An instance frozen between invocations (Lambda) wakes with a stale view; the first lookup
// nudges the loop instead of waiting for the next tick.
func TestCacheLookupNudgesAStaleView(t *testing.T) {
	src := &flakyLister{Memory: routestate.NewMemory()}
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).UnixNano())
	c := routestate.NewCache(src, routestate.CacheOptions{Refresh: time.Hour, Now: func() time.Time { return time.Unix(0, now.Load()) }})
	c.Start(context.Background())
	defer c.Close()
	waitFor(t, time.Second, func() bool { return src.calls.Load() == 1 })
	put(t, src, routestate.State{Route: "a/x", Status: routestate.Disabled})
	c.Lookup("a/x") // fresh view: no nudge
	time.Sleep(20 * time.Millisecond)
	if n := src.calls.Load(); n != 1 {
		t.Fatalf("a fresh view was re-read (%d reads)", n)
	}
	now.Add(int64(3 * time.Hour))
	c.Lookup("a/x")
	waitFor(t, time.Second, func() bool { st, _ := c.Lookup("a/x"); return st.Status == routestate.Disabled })
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

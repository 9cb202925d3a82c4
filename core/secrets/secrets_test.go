package secrets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCacheFetchesOnceUnderConcurrency(t *testing.T) {
	var c Cache
	var calls atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context) (string, error) {
		calls.Add(1)
		<-release
		return "v", nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := c.Get(context.Background(), "name", fetch); v != "v" || err != nil {
				t.Errorf("Get = %q, %v", v, err)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond) // let the goroutines pile up on the in-flight fetch
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("fetch ran %d times for one name, want 1", n)
	}
}

func TestCacheForgetsFailures(t *testing.T) {
	var c Cache
	boom := errors.New("throttled")
	if _, err := c.Get(context.Background(), "n", func(context.Context) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the fetch error", err)
	}
	v, err := c.Get(context.Background(), "n", func(context.Context) (string, error) { return "ok", nil })
	if v != "ok" || err != nil {
		t.Fatalf("after a failure Get = %q, %v; want a fresh fetch", v, err)
	}
	v, _ = c.Get(context.Background(), "n", func(context.Context) (string, error) { return "other", nil })
	if v != "ok" {
		t.Fatalf("a success was not cached: got %q", v)
	}
}

func TestCacheWaiterHonoursItsContext(t *testing.T) {
	var c Cache
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	go func() {
		_, _ = c.Get(context.Background(), "slow", func(context.Context) (string, error) { close(started); <-release; return "v", nil })
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx, "slow", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a waiter past its deadline got %v", err)
	}
}

func TestJSONKey(t *testing.T) {
	secret := `{"s":"text","n":42,"f":1.5,"b":false,"o":{"x":1},"a":[1]}`
	for key, want := range map[string]string{"s": "text", "n": "42", "f": "1.5", "b": "false"} {
		if got, err := JSONKey(secret, key); err != nil || got != want {
			t.Errorf("JSONKey(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	for _, key := range []string{"o", "a", "missing"} {
		if _, err := JSONKey(secret, key); err == nil {
			t.Errorf("JSONKey(%q) succeeded", key)
		}
	}
	if _, err := JSONKey("not json sk-123", "k"); err == nil || strings.Contains(err.Error(), "sk-123") {
		t.Errorf("JSONKey on a non-JSON secret: %v (must fail without echoing the secret)", err)
	}
}

func TestLazyBuildsOnceAndKeepsTheOutcome(t *testing.T) {
	builds := 0
	get := Lazy(func(context.Context) (int, error) {
		builds++
		return 0, errors.New("no credentials")
	})
	for range 3 {
		if _, err := get(context.Background()); err == nil || err.Error() != "no credentials" {
			t.Fatalf("err = %v, want the build's error", err)
		}
	}
	if builds != 1 {
		t.Fatalf("%d builds, want 1", builds)
	}
}

func TestCacheResolveNamesTheSecretInKeyErrors(t *testing.T) {
	var c Cache
	fetch := func(context.Context) (string, error) { return `{"k":"v"}`, nil }
	if v, err := c.Resolve(context.Background(), "s1", "k", fetch); err != nil || v != "v" {
		t.Fatalf("Resolve = %q, %v; want v", v, err)
	}
	if v, err := c.Resolve(context.Background(), "s1", "", fetch); err != nil || v != `{"k":"v"}` {
		t.Fatalf("whole secret = %q, %v", v, err)
	}
	if _, err := c.Resolve(context.Background(), "s1", "nope", fetch); err == nil || !strings.HasPrefix(err.Error(), "secret s1: ") {
		t.Fatalf("err = %v, want it to name the secret", err)
	}
}

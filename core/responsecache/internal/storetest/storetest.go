// Package storetest holds what every responsecache.Store is tested with: one conformance
// suite (run against memory, file, DynamoDB on moto and the Firestore emulator, which
// internal/emulator starts), and the check that a store which cannot be reached (a refused
// port, or internal/loopback's Blackhole) fails each call within its timeout with an error
// that is not ErrNotFound: the gateway then serves the request as a miss and logs why. Key
// and Random make the keys and bodies the stores' own tests need.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/responsecache"
)

// Open returns a new, empty store for one subtest, deciding expiry by now.
type Open func(t *testing.T, now func() time.Time) responsecache.Store

// Options describe the store under test.
type Options struct {
	// Limit is the largest body the store holds that does not compress (random bytes):
	// responsecache.MaxEntryBytes for memory and files, about its item's limit less the
	// item's other attributes for a cloud store.
	Limit int
	// Compresses says the store compresses a body its item does not hold as it is, so that
	// a body that compresses is stored though it is several times Limit. Such a store counts
	// Limit with the item's other attributes, so the suite checks it within a margin.
	Compresses bool
}

// Firestore keeps microseconds; whole milliseconds survive every store unchanged.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// clock is a settable clock for one subtest.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// Key returns a fresh key of MaxKeyBytes, as Identity.Key makes them.
func Key() string {
	var id responsecache.Identity
	_, _ = rand.Read(id.Partition[:])
	_, _ = rand.Read(id.Digest[:])
	return id.Key()
}

// entry is an entry under k whose body holds text and every byte value, the newline and
// bytes that are not UTF-8 among them: the stores keep bodies as bytes, not text.
func entry(k, text string) *responsecache.Entry {
	body := fmt.Appendf(nil, "{\"v\":1,\"whole\":{\"text\":%q}}\n", text)
	for b := range 256 {
		body = append(body, byte(b))
	}
	return &responsecache.Entry{Key: k, Model: "mock/echo", Created: t0, Expires: t0.Add(time.Hour), Body: body}
}

// Run checks that a store keeps the Store contract.
func Run(t *testing.T, open Open, opt Options) {
	ctx := context.Background()
	start := func(t *testing.T) (responsecache.Store, *clock) {
		c := &clock{now: t0}
		return open(t, c.Now), c
	}

	t.Run("miss", func(t *testing.T) {
		s, _ := start(t)
		missing(t, s, Key())
		must(t, s.Put(ctx, entry(Key(), "another")))
		missing(t, s, Key())
	})

	t.Run("put, get", func(t *testing.T) {
		s, _ := start(t)
		want := entry(Key(), "hello")
		must(t, s.Put(ctx, want))
		got := get(t, s, want.Key)
		same(t, got, want)

		// What a call returns, and what it was given, are the caller's to change.
		got.Body[0], want.Body[1] = 'X', 'Y'
		same(t, get(t, s, want.Key), entry(want.Key, "hello"))

		// An entry without a model, with an empty body.
		bare := &responsecache.Entry{Key: Key(), Created: t0, Expires: t0.Add(time.Minute)}
		must(t, s.Put(ctx, bare))
		same(t, get(t, s, bare.Key), bare)
	})

	t.Run("keys", func(t *testing.T) {
		s, _ := start(t)
		// Keys of MaxKeyBytes that differ in their first or last character are other entries.
		k := Key()
		if len(k) != responsecache.MaxKeyBytes {
			t.Fatalf("Identity.Key is %d bytes, MaxKeyBytes %d", len(k), responsecache.MaxKeyBytes)
		}
		flip := func(c byte) string { return string("01"[c&1^1]) }
		keys := []string{k, flip(k[0]) + k[1:], k[:len(k)-1] + flip(k[len(k)-1])}
		for i, k := range keys {
			must(t, s.Put(ctx, entry(k, fmt.Sprint("entry ", i))))
		}
		for i, k := range keys {
			same(t, get(t, s, k), entry(k, fmt.Sprint("entry ", i)))
		}
		// A key no store could hold is refused, and finds nothing.
		for _, bad := range []string{"", "../" + k[3:], k + "0", ".hidden", "__" + k[2:], "a/b", "a b", k[:64] + ":" + k[65:]} {
			err := s.Put(ctx, entry(bad, "bad key"))
			if err == nil || errors.Is(err, responsecache.ErrTooLarge) {
				t.Errorf("Put under key %.40q: err = %v, want a refusal", bad, err)
			}
			missing(t, s, bad)
		}
	})

	t.Run("put replaces", func(t *testing.T) {
		s, _ := start(t)
		k := Key()
		must(t, s.Put(ctx, entry(k, "first")))
		second := entry(k, "second, longer than the first")
		second.Model, second.Created, second.Expires = "other/model", t0.Add(time.Second), t0.Add(2*time.Hour)
		must(t, s.Put(ctx, second))
		same(t, get(t, s, k), second)
		// As it is, compressed and as it is again: nothing of one stays with the next.
		for _, e := range []*responsecache.Entry{compressible(k, opt), entry(k, "small"), compressible(k, opt), incompressible(k, opt.Limit/2)} {
			must(t, s.Put(ctx, e))
			same(t, get(t, s, k), e)
		}
	})

	t.Run("expiry on read", func(t *testing.T) {
		s, c := start(t)
		e := entry(Key(), "short-lived")
		must(t, s.Put(ctx, e))
		c.set(e.Expires.Add(-time.Millisecond))
		same(t, get(t, s, e.Key), e)
		c.set(e.Expires)
		missing(t, s, e.Key)
		c.set(e.Expires.Add(time.Hour))
		missing(t, s, e.Key)
		// The expired entry may still sit in the store (TTLs delete late); a new one under
		// its key is stored whole.
		fresh := entry(e.Key, "again")
		fresh.Created, fresh.Expires = e.Expires.Add(time.Hour), e.Expires.Add(2*time.Hour)
		must(t, s.Put(ctx, fresh))
		same(t, get(t, s, e.Key), fresh)
	})

	t.Run("too large", func(t *testing.T) {
		s, _ := start(t)
		margin := 0
		if opt.Compresses {
			margin = 1 << 10
		}
		k := Key()
		under := incompressible(k, opt.Limit-margin)
		must(t, s.Put(ctx, under))
		same(t, get(t, s, k), under)
		// Past the limit, and no smaller compressed: refused, and the entry stored before
		// under its key stays as it was.
		over := incompressible(k, opt.Limit+margin+1)
		if err := s.Put(ctx, over); !errors.Is(err, responsecache.ErrTooLarge) {
			t.Fatalf("Put of %d random bytes, over the limit of %d: err = %v, want ErrTooLarge", len(over.Body), opt.Limit, err)
		}
		same(t, get(t, s, k), under)
	})

	t.Run("a large body that compresses", func(t *testing.T) {
		s, _ := start(t)
		e := compressible(Key(), opt)
		must(t, s.Put(ctx, e))
		same(t, get(t, s, e.Key), e)
	})

	t.Run("concurrent puts and gets", func(t *testing.T) {
		s, _ := start(t)
		const n = 8
		own := make([]string, n)
		for i := range own {
			own[i] = Key()
		}
		shared := Key()
		written := func(i int) *responsecache.Entry { return entry(shared, fmt.Sprint("shared ", i)) }
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				// Not Fatal: this is not the test's goroutine.
				if err := s.Put(ctx, entry(own[i], fmt.Sprint("own ", i))); err != nil {
					t.Errorf("Put: %v", err)
				}
				if err := s.Put(ctx, written(i)); err != nil {
					t.Errorf("Put: %v", err)
				}
			})
			wg.Go(func() {
				got, err := s.Get(ctx, shared)
				if errors.Is(err, responsecache.ErrNotFound) {
					return
				}
				if err != nil {
					t.Errorf("Get while others write: %v", err)
				} else if whichOf(got, n, written) < 0 {
					t.Errorf("Get while others write read none of the entries written whole: %.80q", got.Body)
				}
			})
		}
		wg.Wait()
		for i := range n {
			same(t, get(t, s, own[i]), entry(own[i], fmt.Sprint("own ", i)))
		}
		// One of the writers of the shared key won, whole.
		if got := get(t, s, shared); whichOf(got, n, written) < 0 {
			t.Fatalf("the shared entry is none of those written: %.80q", got.Body)
		}
	})

	t.Run("a cancelled or expired context", func(t *testing.T) {
		s, _ := start(t)
		e := entry(Key(), "stored")
		must(t, s.Put(ctx, e))
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel()
		for name, c := range map[string]context.Context{"cancelled": cancelled, "expired": expired} {
			failure(t, name+" Get", func() error { _, err := s.Get(c, e.Key); return err })
			failure(t, name+" Put", func() error { return s.Put(c, entry(Key(), "never")) })
		}
	})
}

// compressible is an entry whose body compresses well, as recorded answers do: for a store
// that compresses, four times its Limit; else its Limit exactly.
func compressible(k string, opt Options) *responsecache.Entry {
	n := opt.Limit
	if opt.Compresses {
		n *= 4
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"text":"a token or two, delta %d"},`, i)
	}
	e := entry(k, "")
	e.Body = []byte(b.String()[:n])
	return e
}

// incompressible is an entry whose body is n random bytes.
func incompressible(k string, n int) *responsecache.Entry {
	e := entry(k, "")
	e.Body = Random(n)
	return e
}

// Random returns n random bytes, which gzip only makes larger.
func Random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// whichOf returns the i below n whose want(i) got is, or -1.
func whichOf(got *responsecache.Entry, n int, want func(i int) *responsecache.Entry) int {
	for i := range n {
		if w := want(i); bytes.Equal(got.Body, w.Body) && got.Model == w.Model && got.Expires.Equal(w.Expires) {
			return i
		}
	}
	return -1
}

func get(t *testing.T, s responsecache.Store, k string) *responsecache.Entry {
	t.Helper()
	e, err := s.Get(context.Background(), k)
	if err != nil {
		t.Fatalf("Get %.40q: %v", k, err)
	}
	return e
}

func missing(t *testing.T, s responsecache.Store, k string) {
	t.Helper()
	if e, err := s.Get(context.Background(), k); !errors.Is(err, responsecache.ErrNotFound) {
		t.Fatalf("Get %.40q: %v, err = %v; want ErrNotFound", k, e, err)
	}
}

// failure checks that call fails as a store failure: not nil, not ErrNotFound (a miss the
// gateway would take for evidence) and not ErrTooLarge.
func failure(t *testing.T, name string, call func() error) {
	t.Helper()
	if err := call(); err == nil || errors.Is(err, responsecache.ErrNotFound) || errors.Is(err, responsecache.ErrTooLarge) {
		t.Errorf("%s: err = %v, want a store failure", name, err)
	}
}

func same(t *testing.T, got, want *responsecache.Entry) {
	t.Helper()
	if got.Key != want.Key || got.Model != want.Model || !got.Created.Equal(want.Created) || !got.Expires.Equal(want.Expires) {
		t.Fatalf("entry mismatch:\n got  %.40q %q %v %v\n want %.40q %q %v %v",
			got.Key, got.Model, got.Created, got.Expires, want.Key, want.Model, want.Created, want.Expires)
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Fatalf("entry %.40q: the body changed: got %d bytes %.80q, want %d bytes %.80q", want.Key, len(got.Body), got.Body, len(want.Body), want.Body)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Unreachable checks that each call on a store that cannot answer returns within bound (the
// store's timeout and some slack: a lookup sits before every miss's upstream call) with a
// store failure, not ErrNotFound nor ErrTooLarge.
func Unreachable(t *testing.T, s responsecache.Store, bound time.Duration) {
	t.Helper()
	ctx := context.Background()
	k := Key()
	for name, call := range map[string]func() error{
		"Put": func() error { return s.Put(ctx, entry(k, "x")) },
		"Get": func() error { _, err := s.Get(ctx, k); return err },
	} {
		done := make(chan error, 1)
		began := time.Now()
		go func() { done <- call() }()
		select {
		case err := <-done:
			if err == nil || errors.Is(err, responsecache.ErrNotFound) || errors.Is(err, responsecache.ErrTooLarge) {
				t.Errorf("%s on an unreachable store: err = %v, want a store failure", name, err)
			}
			t.Logf("%s after %v: %v", name, time.Since(began).Round(time.Millisecond), err)
		case <-time.After(bound):
			t.Errorf("%s on an unreachable store has not returned after %v", name, bound)
		}
	}
}

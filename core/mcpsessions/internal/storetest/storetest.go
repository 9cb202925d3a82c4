// Package storetest holds what every mcpsessions.Store is tested with: one conformance suite
// (run against the memory store, DynamoDB on moto and the Firestore emulator), and the check
// that a store which cannot be reached (a refused port, or internal/loopback's Blackhole)
// fails each call, quickly, with an error that is not ErrNotFound: a session an outage hid
// would be answered 404, and the client would open a new one and lose its state.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/mcpsessions"
)

// Open returns a new, empty store for one subtest, deciding expiry by now.
type Open func(t *testing.T, now func() time.Time) mcpsessions.Store

// Firestore keeps microseconds; whole milliseconds survive every store unchanged.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// clock is a settable clock for one subtest.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// state is a session's record: JSON with HTML characters and indentation, then bytes that
// are not UTF-8, all of which must come back as they went in.
func state(text string) []byte {
	b := fmt.Appendf(nil, "{\n  \"protocolVersion\": \"2025-06-18\",\n  \"note\": \"<b>%s</b> & more\"\n}", text)
	return append(b, 0, 0xff, 0xfe, '\n')
}

func session(id, owner, text string) mcpsessions.Session {
	// Expires carries milliseconds: a store must keep them.
	return mcpsessions.Session{ID: id, Owner: owner, State: state(text), Expires: t0.Add(time.Hour + 123*time.Millisecond)}
}

// Run checks that a store keeps the Store contract.
func Run(t *testing.T, open Open) {
	ctx := context.Background()
	start := func(t *testing.T) (mcpsessions.Store, *clock) {
		c := &clock{now: t0}
		return open(t, c.Now), c
	}

	t.Run("put and get", func(t *testing.T) {
		s, _ := start(t)
		want := session("3f9a0c1e5b7d4a2f8e6c0b1d3a5f7e9c", "key_app", "hello")
		put := want
		put.State = bytes.Clone(want.State)
		must(t, s.Put(ctx, put))
		put.State[0] = 'X' // the store holds what was put, not the caller's slice
		got, err := s.Get(ctx, want.ID)
		must(t, err)
		same(t, got, want)
		got.State[0] = 'Y' // nor hands out its own
		got, err = s.Get(ctx, want.ID)
		must(t, err)
		same(t, got, want)
	})

	t.Run("unknown id", func(t *testing.T) {
		s, _ := start(t)
		must(t, s.Put(ctx, session("sess_1", "key_app", "x")))
		for _, id := range []string{"sess_never", "sess_", "sess_1 ", "SESS_1"} {
			if _, err := s.Get(ctx, id); !errors.Is(err, mcpsessions.ErrNotFound) {
				t.Errorf("Get(%q), never stored: err = %v, want ErrNotFound", id, err)
			}
		}
	})

	t.Run("odd ids and empty state", func(t *testing.T) {
		s, _ := start(t)
		ids := []string{"a/b", "a%2Fb", ".", "..", "%2E", "__x__", "_x", "ü/../x?y#z", "a b:c", "AbC-_09" + strings.Repeat("z", 100)}
		for i, id := range ids {
			w := session(id, fmt.Sprint("oauth:user/", i), id)
			if i%3 == 0 {
				w.State = nil
			}
			must(t, s.Put(ctx, w))
		}
		// Each id is its own session: none was taken for another.
		for i, id := range ids {
			want := session(id, fmt.Sprint("oauth:user/", i), id)
			if i%3 == 0 {
				want.State = nil
			}
			got, err := s.Get(ctx, id)
			must(t, err)
			same(t, got, want)
		}
	})

	t.Run("put replaces", func(t *testing.T) {
		s, _ := start(t)
		must(t, s.Put(ctx, session("sess_1", "key_app", "first, longer than the second")))
		second := session("sess_1", "key_other", "2nd")
		second.Expires = t0.Add(2*time.Hour + 456*time.Millisecond)
		must(t, s.Put(ctx, second))
		got, err := s.Get(ctx, "sess_1")
		must(t, err)
		same(t, got, second)
		// An empty state replaces one that was not.
		third := session("sess_1", "key_app", "")
		third.State = nil
		must(t, s.Put(ctx, third))
		got, err = s.Get(ctx, "sess_1")
		must(t, err)
		same(t, got, third)
	})

	t.Run("expiry", func(t *testing.T) {
		s, c := start(t)
		w := session("sess_1", "key_app", "short-lived")
		must(t, s.Put(ctx, w))
		c.set(w.Expires.Add(-time.Millisecond))
		_, err := s.Get(ctx, "sess_1")
		must(t, err)
		c.set(w.Expires)
		if _, err := s.Get(ctx, "sess_1"); !errors.Is(err, mcpsessions.ErrNotFound) {
			t.Fatalf("Get at Expires: err = %v, want ErrNotFound", err)
		}
		// An expired session may still sit in the store (TTLs delete late); Put again with a
		// later time, it is there whole.
		w.Expires, w.State = w.Expires.Add(time.Hour), state("again")
		must(t, s.Put(ctx, w))
		got, err := s.Get(ctx, "sess_1")
		must(t, err)
		same(t, got, w)
		must(t, s.Delete(ctx, "sess_1"))
		// A session put already expired is not found.
		must(t, s.Put(ctx, mcpsessions.Session{ID: "sess_past", Owner: "key_app", State: state("x"), Expires: c.Now().Add(-time.Millisecond)}))
		if _, err := s.Get(ctx, "sess_past"); !errors.Is(err, mcpsessions.ErrNotFound) {
			t.Fatalf("Get of a session put expired: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		s, _ := start(t)
		must(t, s.Put(ctx, session("sess_1", "key_app", "one")))
		keep := session("sess_2", "key_app", "two")
		must(t, s.Put(ctx, keep))
		must(t, s.Delete(ctx, "sess_1"))
		if _, err := s.Get(ctx, "sess_1"); !errors.Is(err, mcpsessions.ErrNotFound) {
			t.Fatalf("Get after Delete: err = %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "sess_1"); err != nil {
			t.Fatalf("second Delete: err = %v, want nil", err)
		}
		if err := s.Delete(ctx, "sess_never"); err != nil {
			t.Fatalf("Delete of an id never stored: err = %v, want nil", err)
		}
		got, err := s.Get(ctx, "sess_2")
		must(t, err)
		same(t, got, keep)
	})

	t.Run("concurrent puts and gets", func(t *testing.T) {
		s, _ := start(t)
		const n = 8
		shared := func(i int) mcpsessions.Session {
			return session("sess_shared", fmt.Sprint("key_", i), fmt.Sprint("shared ", i))
		}
		must(t, s.Put(ctx, shared(0)))
		// A reader racing the writers of one id reads one writer's session whole.
		whole := func(got mcpsessions.Session) bool {
			for i := range n {
				w := shared(i)
				if got.Owner == w.Owner && bytes.Equal(got.State, w.State) && got.Expires.Equal(w.Expires) {
					return true
				}
			}
			return false
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(3)
			go func() {
				defer wg.Done()
				if err := s.Put(ctx, session(fmt.Sprint("sess_", i), "key_app", fmt.Sprint("own ", i))); err != nil {
					t.Errorf("Put: %v", err) // not Fatal: this is not the test's goroutine
				}
			}()
			go func() {
				defer wg.Done()
				if err := s.Put(ctx, shared(i)); err != nil {
					t.Errorf("Put: %v", err)
				}
			}()
			go func() {
				defer wg.Done()
				got, err := s.Get(ctx, "sess_shared")
				if err != nil {
					t.Errorf("Get while others write: %v", err)
				} else if !whole(got) {
					t.Errorf("Get while others write read none of the sessions written whole: %q %q", got.Owner, got.State)
				}
			}()
		}
		wg.Wait()
		for i := range n {
			got, err := s.Get(ctx, fmt.Sprint("sess_", i))
			must(t, err)
			same(t, got, session(fmt.Sprint("sess_", i), "key_app", fmt.Sprint("own ", i)))
		}
		got, err := s.Get(ctx, "sess_shared")
		must(t, err)
		if !whole(got) {
			t.Fatalf("the shared session is none of those written: %q %q", got.Owner, got.State)
		}
	})
}

func same(t *testing.T, got, want mcpsessions.Session) {
	t.Helper()
	if got.ID != want.ID || got.Owner != want.Owner || !got.Expires.Equal(want.Expires) || !bytes.Equal(got.State, want.State) {
		t.Fatalf("session mismatch:\n got  %q %q %v %q\n want %q %q %v %q",
			got.ID, got.Owner, got.Expires, got.State, want.ID, want.Owner, want.Expires, want.State)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Unreachable checks that each call on a store that cannot answer returns an error that is
// not ErrNotFound, and returns within within: a store's timeout plus a margin.
func Unreachable(t *testing.T, s mcpsessions.Store, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Put", func() error { return s.Put(ctx, session("sess_1", "key_app", "x")) }},
		{"Get", func() error { _, err := s.Get(ctx, "sess_1"); return err }},
		{"Delete", func() error { return s.Delete(ctx, "sess_1") }},
	} {
		done := make(chan error, 1)
		began := time.Now()
		go func() { done <- c.call() }()
		select {
		case err := <-done:
			if err == nil || errors.Is(err, mcpsessions.ErrNotFound) {
				t.Errorf("%s on an unreachable store: err = %v, want a store failure", c.name, err)
			} else {
				t.Logf("%s failed after %v: %v", c.name, time.Since(began).Round(time.Millisecond), err)
			}
		case <-time.After(within):
			t.Fatalf("%s on an unreachable store has not returned after %v", c.name, within)
		}
	}
}

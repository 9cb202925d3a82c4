// Package storetest holds what every responsestore.Store is tested with: one conformance
// suite (run against memory, file, DynamoDB on moto and the Firestore emulator), and the
// check that a store which cannot be reached (a refused port, or internal/loopback's
// Blackhole) fails each call, quickly, with an error that is not ErrNotFound. The emulators
// are started by internal/emulator. It sits under responsestore's internal/ because the
// suite sizes its bodies with the stores' own packing (internal/record).
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/internal/record"
)

// Open returns a new, empty store for one subtest, deciding expiry by now.
type Open func(t *testing.T, now func() time.Time) responsestore.Store

// Options describe the store under test.
type Options struct {
	// Limit is the largest compressed body the store holds, in bytes (about its item limit
	// less the item's other attributes); 0 means no limit.
	Limit int
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

func response(id, text string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"response","status":"completed","store":true,"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":%q}]}]}`, id, text)
}

func stored(id, owner, text string) *responsestore.Stored {
	return &responsestore.Stored{
		ID: id, Owner: owner, Model: "mock/echo",
		Created: t0, Expires: t0.Add(time.Hour),
		// HTML characters and indentation must come back as they went in.
		Input:    []byte("[\n  {\"type\": \"message\", \"role\": \"user\", \"content\": \"<b>" + text + "</b> & more\"}\n]"),
		Response: response(id, text),
	}
}

// Run checks that a store keeps the Store contract.
func Run(t *testing.T, open Open, opt Options) {
	ctx := context.Background()
	start := func(t *testing.T) (responsestore.Store, *clock) {
		c := &clock{now: t0}
		return open(t, c.Now), c
	}

	t.Run("put, get, delete", func(t *testing.T) {
		s, _ := start(t)
		want := stored("resp_1", "app", "hello")
		must(t, s.Put(ctx, want))
		got, err := s.Get(ctx, "resp_1", "app")
		must(t, err)
		same(t, got, want)
		must(t, s.Delete(ctx, "resp_1", "app"))
		if _, err := s.Get(ctx, "resp_1", "app"); !errors.Is(err, responsestore.ErrNotFound) {
			t.Fatalf("Get after Delete: err = %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "resp_1", "app"); !errors.Is(err, responsestore.ErrNotFound) {
			t.Fatalf("second Delete: err = %v, want ErrNotFound", err)
		}
		if _, err := s.Get(ctx, "resp_never", "app"); !errors.Is(err, responsestore.ErrNotFound) {
			t.Fatalf("Get of an id never stored: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("empty input and odd ids", func(t *testing.T) {
		s, _ := start(t)
		for _, w := range []*responsestore.Stored{
			{ID: "resp_ü/../x?y#z", Owner: "team/a b:c", Created: t0, Expires: t0.Add(time.Minute), Response: response("resp_ü", "")},
			{ID: "..", Owner: "", Created: t0, Expires: t0.Add(time.Minute), Input: []byte(`"hi"`), Response: response("..", "x")},
			{ID: "__x__", Owner: "__y__", Created: t0, Expires: t0.Add(time.Minute), Response: response("__x__", "y")},
		} {
			must(t, s.Put(ctx, w))
			got, err := s.Get(ctx, w.ID, w.Owner)
			must(t, err)
			same(t, got, w)
		}
	})

	t.Run("a response is its owner's only", func(t *testing.T) {
		s, _ := start(t)
		mine := stored("resp_1", "app", "mine")
		must(t, s.Put(ctx, mine))
		for _, other := range []string{"other", "", "App", "app "} {
			if _, err := s.Get(ctx, "resp_1", other); !errors.Is(err, responsestore.ErrNotFound) {
				t.Errorf("Get by owner %q: err = %v, want ErrNotFound", other, err)
			}
			if err := s.Delete(ctx, "resp_1", other); !errors.Is(err, responsestore.ErrNotFound) {
				t.Errorf("Delete by owner %q: err = %v, want ErrNotFound", other, err)
			}
		}
		got, err := s.Get(ctx, "resp_1", "app")
		must(t, err)
		same(t, got, mine)

		// The same id under another owner is another response; neither replaces the other.
		theirs := stored("resp_1", "other", "theirs")
		must(t, s.Put(ctx, theirs))
		got, err = s.Get(ctx, "resp_1", "app")
		must(t, err)
		same(t, got, mine)
		got, err = s.Get(ctx, "resp_1", "other")
		must(t, err)
		same(t, got, theirs)

		// Owner and id are kept apart: neither can be shifted into the other.
		must(t, s.Put(ctx, stored("b:c", "a", "split one way")))
		if _, err := s.Get(ctx, "c", "a:b"); !errors.Is(err, responsestore.ErrNotFound) {
			t.Errorf("owner a:b found owner a's response b:c: err = %v", err)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		s, c := start(t)
		w := stored("resp_1", "app", "short-lived")
		must(t, s.Put(ctx, w))
		c.set(w.Expires.Add(-time.Millisecond))
		_, err := s.Get(ctx, "resp_1", "app")
		must(t, err)
		c.set(w.Expires)
		if _, err := s.Get(ctx, "resp_1", "app"); !errors.Is(err, responsestore.ErrNotFound) {
			t.Fatalf("Get at Expires: err = %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "resp_1", "app"); !errors.Is(err, responsestore.ErrNotFound) {
			t.Fatalf("Delete of an expired response: err = %v, want ErrNotFound", err)
		}
		// An expired response may still sit in the store (TTLs delete late); a new one
		// under its id is stored whole.
		fresh := stored("resp_1", "app", "again")
		fresh.Created, fresh.Expires = w.Expires, w.Expires.Add(time.Hour)
		must(t, s.Put(ctx, fresh))
		got, err := s.Get(ctx, "resp_1", "app")
		must(t, err)
		same(t, got, fresh)
	})

	t.Run("put replaces", func(t *testing.T) {
		s, _ := start(t)
		must(t, s.Put(ctx, stored("resp_1", "app", "first")))
		second := stored("resp_1", "app", "second, longer than the first")
		second.Model, second.Expires = "other/model", t0.Add(2*time.Hour)
		second.Input = nil
		must(t, s.Put(ctx, second))
		got, err := s.Get(ctx, "resp_1", "app")
		must(t, err)
		same(t, got, second)
	})

	t.Run("large and small replace each other", func(t *testing.T) {
		s, _ := start(t)
		n := 1 << 20
		if opt.Limit > 0 {
			n = opt.Limit / 2 // more than one item of a store with items, if it has them
		}
		large := sized(n)
		small := stored(large.ID, large.Owner, "small")
		for _, w := range []*responsestore.Stored{large, small, large} {
			must(t, s.Put(ctx, w))
			got, err := s.Get(ctx, w.ID, w.Owner)
			must(t, err)
			same(t, got, w)
		}
		must(t, s.Delete(ctx, large.ID, large.Owner))
		if _, err := s.Get(ctx, large.ID, large.Owner); !errors.Is(err, responsestore.ErrNotFound) {
			t.Fatalf("Get of a deleted large response: err = %v, want ErrNotFound", err)
		}

		// Readers racing writers of one id each read one response whole, never a mix.
		variants := make([]*responsestore.Stored, 3)
		for i := range variants {
			variants[i] = sized(n / 2)
		}
		must(t, s.Put(ctx, variants[0]))
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i < len(variants) {
					if err := s.Put(ctx, variants[i]); err != nil {
						t.Errorf("Put: %v", err)
					}
					return
				}
				got, err := s.Get(ctx, large.ID, large.Owner)
				if err != nil {
					t.Errorf("Get while others write: %v", err)
					return
				}
				for _, v := range variants {
					if bytes.Equal(got.Response, v.Response) && bytes.Equal(got.Input, v.Input) {
						return
					}
				}
				t.Errorf("Get while others write read none of the responses written whole")
			}()
		}
		wg.Wait()
	})

	t.Run("concurrent puts", func(t *testing.T) {
		s, _ := start(t)
		const n = 12
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(2)
			put := func(st *responsestore.Stored) {
				defer wg.Done()
				if err := s.Put(ctx, st); err != nil {
					t.Errorf("Put %s: %v", st.ID, err) // not Fatal: this is not the test's goroutine
				}
			}
			go put(stored(fmt.Sprint("resp_", i), "app", fmt.Sprint("own ", i)))
			go put(stored("resp_shared", "app", fmt.Sprint("shared ", i)))
		}
		wg.Wait()
		for i := range n {
			got, err := s.Get(ctx, fmt.Sprint("resp_", i), "app")
			must(t, err)
			same(t, got, stored(fmt.Sprint("resp_", i), "app", fmt.Sprint("own ", i)))
		}
		// One of the writers of the shared id won, whole: its input and response together.
		got, err := s.Get(ctx, "resp_shared", "app")
		must(t, err)
		won := -1
		for i := range n {
			if bytes.Equal(got.Response, response("resp_shared", fmt.Sprint("shared ", i))) {
				won = i
			}
		}
		if won < 0 {
			t.Fatalf("the shared response is none of those written: %.200s", got.Response)
		}
		same(t, got, stored("resp_shared", "app", fmt.Sprint("shared ", won)))
	})

	t.Run("concurrent deletes: one succeeds", func(t *testing.T) {
		s, _ := start(t)
		must(t, s.Put(ctx, stored("resp_1", "app", "x")))
		const n = 6
		var mu sync.Mutex
		var deleted, missing int
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Delete(ctx, "resp_1", "app")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					deleted++
				case errors.Is(err, responsestore.ErrNotFound):
					missing++
				default:
					t.Errorf("Delete: %v", err)
				}
			}()
		}
		wg.Wait()
		if deleted != 1 || missing != n-1 {
			t.Fatalf("%d deletes succeeded and %d found nothing; want 1 and %d", deleted, missing, n-1)
		}
	})

	t.Run("large responses", func(t *testing.T) {
		s, _ := start(t)
		if opt.Limit == 0 {
			big := stored("resp_big", "app", "")
			big.Response = response("resp_big", incompressible(8<<20))
			must(t, s.Put(ctx, big))
			got, err := s.Get(ctx, "resp_big", "app")
			must(t, err)
			same(t, got, big)
			return
		}
		// Text compresses: a conversation four times the limit is stored.
		text := stored("resp_text", "app", "")
		text.Input = []byte(strings.Repeat(`{"type":"message","role":"user","content":"Refactor the parser so that errors carry their line."},`, 4*opt.Limit/80))
		must(t, s.Put(ctx, text))
		got, err := s.Get(ctx, "resp_text", "app")
		must(t, err)
		same(t, got, text)

		// What does not compress is stored up to the limit, and refused beyond it, leaving
		// the response stored before under the same id as it was.
		margin := max(16<<10, opt.Limit/50)
		under := sized(opt.Limit - margin)
		must(t, s.Put(ctx, under))
		got, err = s.Get(ctx, under.ID, under.Owner)
		must(t, err)
		same(t, got, under)
		over := sized(opt.Limit + margin)
		if err := s.Put(ctx, over); !errors.Is(err, responsestore.ErrTooLarge) {
			t.Fatalf("Put of a body of about %d bytes compressed, over the limit of %d: err = %v, want ErrTooLarge", opt.Limit+margin, opt.Limit, err)
		}
		got, err = s.Get(ctx, under.ID, under.Owner)
		must(t, err)
		same(t, got, under)
	})
}

// sized returns a response whose compressed body is about n bytes (within a fraction of a
// percent). Base64 of random bytes compresses by one ratio whatever its length, so one
// sample measures it: compressing the whole body again and again to home in on n cost
// minutes under the race detector, for nothing.
func sized(n int) *responsestore.Stored {
	s := stored("resp_sized", "app", "")
	const sample = 256 << 10
	body, _ := record.Pack(s.Input, response(s.ID, incompressible(sample)))
	s.Response = response(s.ID, incompressible(int(int64(n)*sample/int64(len(body)))))
	return s
}

// incompressible is n bytes of text that gzip shrinks little: base64 of random bytes.
func incompressible(n int) string {
	b := make([]byte, n*3/4+3)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

func same(t *testing.T, got, want *responsestore.Stored) {
	t.Helper()
	if got.ID != want.ID || got.Owner != want.Owner || got.Model != want.Model || !got.Created.Equal(want.Created) || !got.Expires.Equal(want.Expires) {
		t.Fatalf("stored response mismatch:\n got  %s %q %s %v %v\n want %s %q %s %v %v",
			got.ID, got.Owner, got.Model, got.Created, got.Expires, want.ID, want.Owner, want.Model, want.Created, want.Expires)
	}
	if !bytes.Equal(got.Input, want.Input) || !bytes.Equal(got.Response, want.Response) {
		t.Fatalf("stored response %s: input or response changed:\n got  %.300q / %.300q\n want %.300q / %.300q", want.ID, got.Input, got.Response, want.Input, want.Response)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Unreachable checks that each call on a store that cannot answer returns an error that is
// not ErrNotFound (the door must not answer 404 for an outage, nor take a failed Put for a
// stored response), and returns at all: a call still running after a minute is a hang.
func Unreachable(t *testing.T, s responsestore.Store) {
	t.Helper()
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Put":    func() error { return s.Put(ctx, stored("resp_1", "app", "x")) },
		"Get":    func() error { _, err := s.Get(ctx, "resp_1", "app"); return err },
		"Delete": func() error { return s.Delete(ctx, "resp_1", "app") },
	} {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			if err == nil || errors.Is(err, responsestore.ErrNotFound) || errors.Is(err, responsestore.ErrTooLarge) {
				t.Errorf("%s on an unreachable store: err = %v, want a store failure", name, err)
			} else {
				t.Logf("%s: %v", name, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s on an unreachable store has not returned after a minute", name)
		}
	}
}

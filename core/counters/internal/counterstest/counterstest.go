// Package counterstest is the conformance suite every counters.Store passes (counterstest.go),
// and every counters.History (history.go): memory, file,
// DynamoDB (against moto_server) and Firestore (against its emulator).
package counterstest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
)

// Options describe what a store promises beyond the contract.
type Options struct {
	// Atomic stores check and charge in one step, so concurrent takes never admit past a
	// limit. A store that reads and then writes (Firestore's sharded counters) may admit one
	// more for each take racing it; the suite holds it to that bound.
	Atomic bool
}

var t0 = time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)

func reqs(scope string, max int64) counters.Amount {
	return counters.Amount{Counter: counters.Counter{Scope: scope, Kind: counters.Requests}, N: 1, Max: max - 1, Limited: max > 0}
}

func amount(scope string, k counters.Kind, n, max int64, limited bool) counters.Amount {
	return counters.Amount{Counter: counters.Counter{Scope: scope, Kind: k}, N: n, Max: max, Limited: limited}
}

// Run checks that stores keep the Store contract. open returns a new, empty store (or one on
// which the keys used are fresh) for each subtest.
func Run(t *testing.T, open func(t *testing.T) counters.Store, opt Options) {
	ctx := context.Background()
	w0 := counters.At(t0)

	t.Run("an unknown key reads as zero", func(t *testing.T) {
		s := open(t)
		c, err := s.Read(ctx, "nobody", w0)
		must(t, err)
		if len(nonzero(c.Values)) != 0 || c.Windows != w0 {
			t.Fatalf("Read of an unknown key = %+v", c)
		}
	})

	t.Run("takes until the limit, then refuses without charging", func(t *testing.T) {
		s := open(t)
		for i := 1; i <= 3; i++ {
			c, ok, err := s.Take(ctx, "app", w0, []counters.Amount{reqs("", 3)})
			must(t, err)
			if !ok || c.Value("", counters.Requests) != int64(i) {
				t.Fatalf("take %d: admitted %v with %d requests counted, want admitted with %d", i, ok, c.Value("", counters.Requests), i)
			}
		}
		c, ok, err := s.Take(ctx, "app", w0, []counters.Amount{reqs("", 3)})
		must(t, err)
		if ok || c.Value("", counters.Requests) != 3 {
			t.Fatalf("take past the limit: admitted %v with %d counted, want refused at 3", ok, c.Value("", counters.Requests))
		}
		got := read(t, s, "app", w0)
		if got.Value("", counters.Requests) != 3 {
			t.Fatalf("after a refusal the store holds %d requests, want 3", got.Value("", counters.Requests))
		}
	})

	t.Run("a charge is all or nothing", func(t *testing.T) {
		s := open(t)
		take := []counters.Amount{
			reqs("", 100),
			amount("", counters.Tokens, 600, 1000-600, true),
			amount("", counters.SpendDay, 5_000, 0, false),
			amount("gpt-*", counters.Requests, 1, 100, true),
		}
		_, ok, err := s.Take(ctx, "app", w0, take)
		must(t, err)
		if !ok {
			t.Fatal("the first charge was refused")
		}
		// The tokens no longer fit: nothing of the second charge may stick.
		c, ok, err := s.Take(ctx, "app", w0, take)
		must(t, err)
		if ok {
			t.Fatal("a charge past the token limit was admitted")
		}
		if c.Value("", counters.Tokens) != 600 {
			t.Fatalf("the refusal reports %d tokens, want the 600 counted", c.Value("", counters.Tokens))
		}
		got := read(t, s, "app", w0)
		want := map[counters.Counter]int64{
			{Kind: counters.Requests}: 1, {Kind: counters.Tokens}: 600, {Kind: counters.SpendDay}: 5_000,
			{Scope: "gpt-*", Kind: counters.Requests}: 1,
		}
		sameCounts(t, got.Values, want)
	})

	t.Run("unlimited amounts and scopes count apart", func(t *testing.T) {
		s := open(t)
		for range 2 {
			_, ok, err := s.Take(ctx, "app", w0, []counters.Amount{
				reqs("", 0), reqs("claude-*", 2),
				amount("", counters.SpendMonth, 7, 0, false), amount("claude-*", counters.SpendMonth, 7, 0, false),
			})
			must(t, err)
			if !ok {
				t.Fatal("refused under every limit")
			}
		}
		_, ok, err := s.Take(ctx, "app", w0, []counters.Amount{reqs("", 0), reqs("claude-*", 2)})
		must(t, err)
		if ok {
			t.Fatal("the scope's limit of 2 admitted a third")
		}
		_, ok, err = s.Take(ctx, "other", w0, []counters.Amount{reqs("", 0), reqs("claude-*", 2)})
		must(t, err)
		if !ok {
			t.Fatal("another key was refused by this key's counts")
		}
		sameCounts(t, read(t, s, "app", w0).Values, map[counters.Counter]int64{
			{Kind: counters.Requests}: 2, {Scope: "claude-*", Kind: counters.Requests}: 2,
			{Kind: counters.SpendMonth}: 14, {Scope: "claude-*", Kind: counters.SpendMonth}: 14,
		})
	})

	t.Run("a new minute starts from zero while the day goes on", func(t *testing.T) {
		s := open(t)
		charge := func(w counters.Windows) (counters.Counts, bool) {
			c, ok, err := s.Take(ctx, "app", w, []counters.Amount{reqs("", 1), amount("", counters.SpendDay, 10, 15, true)})
			must(t, err)
			return c, ok
		}
		if _, ok := charge(w0); !ok {
			t.Fatal("first charge refused")
		}
		if _, ok := charge(w0); ok {
			t.Fatal("a second request in the minute was admitted past its limit of 1")
		}
		next := counters.At(t0.Add(time.Minute))
		c, ok := charge(next)
		if !ok || c.Windows != next || c.Value("", counters.Requests) != 1 || c.Value("", counters.SpendDay) != 20 {
			t.Fatalf("next minute: admitted %v, counts %+v; want admitted with 1 request and 20 spent in the day", ok, c)
		}
		// The day's 20 is past 15: the next minute's request is refused by the budget.
		if c, ok := charge(counters.At(t0.Add(2 * time.Minute))); ok || c.Value("", counters.SpendDay) != 20 {
			t.Fatalf("a request past the day's limit: admitted %v, counts %+v", ok, c)
		}
		tomorrow := counters.At(t0.Add(24 * time.Hour))
		if c, ok := charge(tomorrow); !ok || c.Value("", counters.SpendDay) != 10 {
			t.Fatalf("next day: admitted %v, counts %+v; want a fresh day", ok, c)
		}
	})

	t.Run("windows only move forward: a clock behind charges the newer window", func(t *testing.T) {
		s := open(t)
		ahead := counters.At(t0.Add(40 * time.Second)) // the next minute
		behind := w0
		if _, ok, err := s.Take(ctx, "app", ahead, []counters.Amount{reqs("", 2)}); err != nil || !ok {
			t.Fatalf("take ahead: %v %v", ok, err)
		}
		c, ok, err := s.Take(ctx, "app", behind, []counters.Amount{reqs("", 2)})
		must(t, err)
		if !ok || c.Windows.Minute != ahead.Minute || c.Value("", counters.Requests) != 2 {
			t.Fatalf("take from behind: admitted %v in minute %d with %d; want admitted into minute %d, count 2",
				ok, c.Windows.Minute, c.Value("", counters.Requests), ahead.Minute)
		}
		// The window the instance behind lives in was not reopened: the limit holds.
		if _, ok, err := s.Take(ctx, "app", behind, []counters.Amount{reqs("", 2)}); err != nil || ok {
			t.Fatalf("a third take from behind: admitted %v (%v); the minute's limit is 2", ok, err)
		}
		if got := read(t, s, "app", behind); got.Windows.Minute != ahead.Minute || got.Value("", counters.Requests) != 2 {
			t.Fatalf("Read from behind = %+v, want the newer minute's 2", got)
		}
	})

	t.Run("add settles a reservation and never reaches a newer window", func(t *testing.T) {
		s := open(t)
		tok := func(n, max int64) counters.Amount { return amount("", counters.Tokens, n, max, max > 0) }
		if _, ok, err := s.Take(ctx, "app", w0, []counters.Amount{tok(1000, 1500-1000)}); err != nil || !ok {
			t.Fatalf("reserve: %v %v", ok, err)
		}
		// 1000 reserved, 120 used: give back 880.
		must(t, s.Add(ctx, "app", w0, []counters.Amount{tok(-880, 0), amount("", counters.SpendDay, 42, 0, false)}))
		got := read(t, s, "app", w0)
		if got.Value("", counters.Tokens) != 120 || got.Value("", counters.SpendDay) != 42 {
			t.Fatalf("after settling: %+v, want 120 tokens and 42 spent", got)
		}
		if _, ok, err := s.Take(ctx, "app", w0, []counters.Amount{tok(1000, 1500-1000)}); err != nil || !ok {
			t.Fatalf("a reservation that fits after the give-back was refused: %v", err)
		}
		next := counters.At(t0.Add(time.Minute))
		if _, ok, err := s.Take(ctx, "app", next, []counters.Amount{tok(10, 0)}); err != nil || !ok {
			t.Fatalf("next minute: %v %v", ok, err)
		}
		// A settlement of the minute that has passed must not touch the new one.
		must(t, s.Add(ctx, "app", w0, []counters.Amount{tok(-500, 0)}))
		if got := read(t, s, "app", next); got.Value("", counters.Tokens) != 10 {
			t.Fatalf("a late settlement reached the new minute: %+v", got)
		}
	})

	t.Run("concurrent takes stop at the limit", func(t *testing.T) {
		s := open(t)
		const racers, limit = 12, 5
		var admitted atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, ok, err := s.Take(ctx, "hot", w0, []counters.Amount{reqs("", limit), amount("", counters.Tokens, 3, 0, false)})
				if err != nil {
					t.Errorf("Take: %v", err)
				}
				if ok {
					admitted.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		n := admitted.Load()
		bound := int64(limit)
		if !opt.Atomic {
			bound += racers - 1 // each racer may have read before the others wrote
		}
		if n < limit || n > bound {
			t.Fatalf("%d of %d concurrent takes admitted under a limit of %d; want %d to %d", n, racers, limit, limit, bound)
		}
		// Every admitted take was charged once, and no refused one at all.
		if got := read(t, s, "hot", w0); got.Value("", counters.Requests) != n || got.Value("", counters.Tokens) != 3*n {
			t.Fatalf("counts after the race: %+v, want %d requests and %d tokens", got.Values, n, 3*n)
		}
	})
}

func read(t *testing.T, s counters.Store, key string, w counters.Windows) counters.Counts {
	t.Helper()
	c, err := s.Read(context.Background(), key, w)
	must(t, err)
	return c
}

func nonzero(m map[counters.Counter]int64) map[counters.Counter]int64 {
	out := map[counters.Counter]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func sameCounts(t *testing.T, got, want map[counters.Counter]int64) {
	t.Helper()
	got = nonzero(got)
	if len(got) != len(want) {
		t.Fatalf("counts = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("counts = %v, want %v", got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

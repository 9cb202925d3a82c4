package firestorecounters_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/counters/internal/counterstest"
	"github.com/fngate/fngate/internal/emulator"
)

// TestStoreAgainstEmulator runs the counters contract on the gcloud Firestore emulator, one
// collection prefix per subtest, with one shard and with several, and then what the shards
// hold.
func TestStoreAgainstEmulator(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := firestore.NewClient(ctx, "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var n atomic.Int64
	run := time.Now().UnixNano()
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			counterstest.Run(t, func(t *testing.T) counters.Store {
				return firestorecounters.New(client, fmt.Sprintf("t%d_%d_", run, n.Add(1)), shards)
			}, counterstest.Options{Atomic: false})
		})
	}
	t.Run("passed windows are deleted", func(t *testing.T) { passedWindowsAreDeleted(t, client) })
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("history, %d shards", shards), func(t *testing.T) {
			counterstest.RunHistory(t, func(t *testing.T) counters.History {
				return firestorecounters.New(client, fmt.Sprintf("h%d_%d_", run, n.Add(1)), shards)
			})
		})
	}
	t.Run("history documents", func(t *testing.T) { historyDocuments(t, client) })
}

// historyDocuments: a key's day is its shard's document in the usage collection, with the
// escaped models, the key, the day and the TTL field.
func historyDocuments(t *testing.T, client *firestore.Client) {
	ctx := context.Background()
	prefix := fmt.Sprintf("hd%d_", time.Now().UnixNano())
	s := firestorecounters.New(client, prefix, 1)
	at := time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)
	for _, m := range []string{"openai/gpt-4.1", "__x__", "openai/gpt-4.1"} {
		if err := s.AddUsage(ctx, "app/x", at, m, counters.Usage{Requests: 1, InputTokens: 2, OutputTokens: 3, CostNanoUSD: 4}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := client.Collection(prefix + firestorecounters.UsageCollection).Doc("app%2Fx#2026-11-29#0").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Key     string                      `firestore:"key"`
		Day     string                      `firestore:"day"`
		M       map[string]map[string]int64 `firestore:"m"`
		Expires time.Time                   `firestore:"expires"`
	}
	if err := snap.DataTo(&d); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{
		"openai%2Fgpt-4.1": {"r": 2, "i": 4, "o": 6, "c": 8},
		"%5F%5Fx%5F%5F":    {"r": 1, "i": 2, "o": 3, "c": 4},
	}
	wantExpires := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).AddDate(0, 0, counters.HistoryDays)
	if fmt.Sprint(d.M) != fmt.Sprint(want) || d.Key != "app/x" || d.Day != "2026-11-29" || !d.Expires.Equal(wantExpires) {
		t.Fatalf("usage document = %+v; want models %v, key app/x, day 2026-11-29, expires %v", d, want, wantExpires)
	}
	// The counters' collection holds nothing of it.
	if docs, err := client.Collection(prefix + firestorecounters.Collection).Documents(ctx).GetAll(); err != nil || len(docs) != 0 {
		t.Fatalf("counters collection after usage: %d documents (%v)", len(docs), err)
	}
}

// passedWindowsAreDeleted: a shard keeps only the fields of current windows once it has been
// written in a new one, and carries the TTL field of its month.
func passedWindowsAreDeleted(t *testing.T, client *firestore.Client) {
	ctx := context.Background()
	prefix := fmt.Sprintf("ttl%d_", time.Now().UnixNano())
	s := firestorecounters.New(client, prefix, 1)
	t0 := time.Date(2026, 11, 29, 12, 0, 30, 0, time.UTC)
	charge := []counters.Amount{
		{Counter: counters.Counter{Kind: counters.Requests}, N: 1},
		{Counter: counters.Counter{Kind: counters.SpendDay, Scope: "gpt.*"}, N: 5},
	}
	for _, at := range []time.Time{t0, t0.Add(time.Minute), t0.Add(2 * time.Minute)} {
		if _, ok, err := s.Take(ctx, "app/x", counters.At(at), charge); err != nil || !ok {
			t.Fatalf("take at %v: %v %v", at, ok, err)
		}
	}
	snap, err := client.Collection(prefix + firestorecounters.Collection).Doc("app%2Fx#0").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		C       map[string]int64 `firestore:"c"`
		Expires time.Time        `firestore:"expires"`
		Key     string           `firestore:"key"`
	}
	if err := snap.DataTo(&d); err != nil {
		t.Fatal(err)
	}
	last := counters.At(t0.Add(2 * time.Minute))
	want := map[string]int64{
		counters.Field(counters.Counter{Kind: counters.Requests}, last):                 1,
		counters.Field(counters.Counter{Kind: counters.SpendDay, Scope: "gpt.*"}, last): 15,
	}
	if fmt.Sprint(d.C) != fmt.Sprint(want) || d.Key != "app/x" || !d.Expires.Equal(last.Expires()) {
		t.Fatalf("shard = %+v; want fields %v, key app/x, expires %v", d, want, last.Expires())
	}
}

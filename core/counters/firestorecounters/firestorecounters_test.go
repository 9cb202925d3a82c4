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

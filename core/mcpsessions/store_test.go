package mcpsessions_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/core/mcpsessions/internal/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) mcpsessions.Store {
		m := mcpsessions.NewMemory()
		m.Now = now
		return m
	})
}

// Past its bound the memory store drops expired sessions first, and only when none had
// expired the one expiring soonest; replacing a session at the bound drops nothing.
func TestMemoryEviction(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	m := mcpsessions.NewMemory()
	m.Now = func() time.Time { return now }
	m.SetLimit(3)
	put := func(id string, ttl time.Duration) {
		t.Helper()
		if err := m.Put(ctx, mcpsessions.Session{ID: id, Owner: "key_app", Expires: now.Add(ttl)}); err != nil {
			t.Fatal(err)
		}
	}
	has := func() []string {
		var ids []string
		for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
			_, err := m.Get(ctx, id)
			switch {
			case err == nil:
				ids = append(ids, id)
			case !errors.Is(err, mcpsessions.ErrNotFound):
				t.Fatal(err)
			}
		}
		return ids
	}
	put("a", 3*time.Hour)
	put("b", time.Hour) // soonest
	put("c", 2*time.Hour)
	put("a", 4*time.Hour) // a replace at the bound
	if got := fmt.Sprint(has()); got != "[a b c]" {
		t.Fatalf("after a replace at the bound the store holds %s, want [a b c]", got)
	}
	put("d", 5*time.Hour)
	if got := fmt.Sprint(has()); got != "[a c d]" {
		t.Fatalf("past the bound the store holds %s, want [a c d]: b expired soonest", got)
	}
	// Once c has expired, the next put drops c, not a (the soonest live one).
	now = now.Add(2 * time.Hour)
	put("e", time.Minute)
	if got := fmt.Sprint(has()); got != "[a d e]" {
		t.Fatalf("with c expired the store holds %s, want [a d e]", got)
	}
	// Several expired at once all go, and the live ones stay, though the bound needed one.
	now = now.Add(2 * time.Hour) // a (4h) and e expired; d (5h) live
	put("f", time.Hour)
	if got := fmt.Sprint(has()); got != "[d f]" {
		t.Fatalf("with a and e expired the store holds %s, want [d f]", got)
	}
}

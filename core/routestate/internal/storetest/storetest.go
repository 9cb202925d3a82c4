// Package storetest is the conformance suite every routestate.Store implementation passes:
// memory, file, DynamoDB (against moto_server) and Firestore (against its emulator), the
// emulators started by internal/emulator.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
)

// Run checks that a store keeps the Store contract. open returns a new, empty store for each
// subtest.
func Run(t *testing.T, open func(t *testing.T) routestate.Store) {
	ctx := context.Background()
	// Firestore keeps microseconds; whole milliseconds survive every backend unchanged.
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const route = "bedrock-us/us.anthropic.claude-sonnet-4-5-v1:0"

	t.Run("absent route reads as active", func(t *testing.T) {
		s := open(t)
		got, err := s.Get(ctx, route)
		must(t, err)
		if got.Route != route || got.Status != routestate.Active || got.Version != 0 {
			t.Fatalf("Get of an absent route = %+v, want active at version 0", got)
		}
		list, err := s.List(ctx)
		must(t, err)
		if len(list) != 0 {
			t.Fatalf("List of an empty store = %+v", list)
		}
	})

	t.Run("put creates then updates by version", func(t *testing.T) {
		s := open(t)
		cool := routestate.State{Route: route, Status: routestate.Cooling, Until: t0.Add(5 * time.Minute),
			Reason: "rate_limited", EventID: "eb:1", ActionID: "a1", Since: t0, UpdatedAt: t0}
		stored, err := s.Put(ctx, cool, nil)
		must(t, err)
		if stored.Version != 1 {
			t.Fatalf("first Put stored version %d, want 1", stored.Version)
		}
		got, err := s.Get(ctx, route)
		must(t, err)
		sameState(t, got, stored)

		if _, err := s.Put(ctx, cool, nil); !errors.Is(err, routestate.ErrConflict) {
			t.Fatalf("Put naming version 0 over version 1: err = %v, want ErrConflict", err)
		}
		next := stored
		next.Status, next.Until, next.Reason, next.ChatOnly = routestate.Active, time.Time{}, "", true
		stored2, err := s.Put(ctx, next, nil)
		must(t, err)
		if stored2.Version != 2 {
			t.Fatalf("second Put stored version %d, want 2", stored2.Version)
		}
		got, err = s.Get(ctx, route)
		must(t, err)
		sameState(t, got, stored2)
		if !got.Until.IsZero() {
			t.Fatalf("cleared Until came back as %v", got.Until)
		}
	})

	t.Run("concurrent puts on one version: exactly one wins", func(t *testing.T) {
		s := open(t)
		const n = 6
		var wins, conflicts int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Put(ctx, routestate.State{Route: route, Status: routestate.Disabled, Reason: fmt.Sprint(i), UpdatedAt: t0}, nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, routestate.ErrConflict):
					conflicts++
				default:
					t.Errorf("Put: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 || conflicts != n-1 {
			t.Fatalf("wins = %d, conflicts = %d; want 1 and %d", wins, conflicts, n-1)
		}
	})

	t.Run("list returns every route", func(t *testing.T) {
		s := open(t)
		routes := []string{route, "claude/claude-sonnet-4-5", "mock/error:429"}
		for _, r := range routes {
			_, err := s.Put(ctx, routestate.State{Route: r, Status: routestate.Disabled, Reason: "credentials", UpdatedAt: t0}, nil)
			must(t, err)
		}
		list, err := s.List(ctx)
		must(t, err)
		seen := map[string]bool{}
		for _, st := range list {
			if st.Status != routestate.Disabled || st.Version != 1 {
				t.Errorf("listed %+v", st)
			}
			seen[st.Route] = true
		}
		for _, r := range routes {
			if !seen[r] {
				t.Errorf("List is missing %s (got %+v)", r, list)
			}
		}
		if len(list) != len(routes) {
			t.Errorf("List returned %d records, want %d", len(list), len(routes))
		}
	})

	t.Run("claim once, concurrently, expiry and release", func(t *testing.T) {
		s := open(t)
		c := routestate.Claim{ID: "eb:4f1b-dup", At: t0, Expires: t0.Add(time.Hour)}
		const n = 6
		var won int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.Claim(ctx, c)
				if err != nil {
					t.Errorf("Claim: %v", err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d of %d concurrent claims won, want 1", won, n)
		}
		later := routestate.Claim{ID: c.ID, At: t0.Add(2 * time.Hour), Expires: t0.Add(3 * time.Hour)}
		ok, err := s.Claim(ctx, later)
		must(t, err)
		if !ok {
			t.Fatal("a claim past its expiry could not be taken over")
		}
		again := routestate.Claim{ID: c.ID, At: t0.Add(2*time.Hour + time.Minute), Expires: t0.Add(3 * time.Hour)}
		if ok, err := s.Claim(ctx, again); err != nil || ok {
			t.Fatalf("claim of a live id = %v, %v; want false", ok, err)
		}
		must(t, s.Release(ctx, c.ID))
		if ok, err := s.Claim(ctx, again); err != nil || !ok {
			t.Fatalf("claim after release = %v, %v; want true", ok, err)
		}
	})

	t.Run("window is versioned", func(t *testing.T) {
		s := open(t)
		w, err := s.Window(ctx, route)
		must(t, err)
		if w.Route != route || w.Version != 0 || len(w.Errors) != 0 {
			t.Fatalf("empty window = %+v", w)
		}
		w.Errors = []time.Time{t0, t0.Add(time.Second)}
		w1, err := s.PutWindow(ctx, w)
		must(t, err)
		if w1.Version != 1 {
			t.Fatalf("PutWindow stored version %d, want 1", w1.Version)
		}
		if _, err := s.PutWindow(ctx, w); !errors.Is(err, routestate.ErrConflict) {
			t.Fatalf("stale PutWindow: err = %v, want ErrConflict", err)
		}
		got, err := s.Window(ctx, route)
		must(t, err)
		if got.Version != 1 || len(got.Errors) != 2 || !got.Errors[0].Equal(t0) || !got.Errors[1].Equal(t0.Add(time.Second)) {
			t.Fatalf("Window = %+v", got)
		}
		got.Errors = nil
		w2, err := s.PutWindow(ctx, got)
		must(t, err)
		got, err = s.Window(ctx, route)
		must(t, err)
		if got.Version != w2.Version || len(got.Errors) != 0 {
			t.Fatalf("cleared window = %+v", got)
		}
	})

	t.Run("snapshot is written with the put, atomically", func(t *testing.T) {
		s := open(t)
		before, err := s.Get(ctx, route)
		must(t, err)
		next := routestate.State{Route: route, Status: routestate.Disabled, Reason: "credentials", EventID: "eb:1",
			ActionID: "20261129T120000Z-aaaaaaaaaa", Since: t0, UpdatedAt: t0}
		snap := &routestate.Snapshot{ActionID: next.ActionID, Route: route, Action: "disable", EventID: "eb:1",
			Why: "auth error", At: t0, Before: before}
		stored, err := s.Put(ctx, next, snap)
		must(t, err)
		got, err := s.Snapshot(ctx, next.ActionID)
		must(t, err)
		if got.Action != "disable" || got.Route != route || got.Why != "auth error" || !got.At.Equal(t0) {
			t.Fatalf("Snapshot = %+v", got)
		}
		sameState(t, got.Before, before)
		sameState(t, got.After, stored)

		// A second action reusing the id must not change the route.
		dup := stored
		dup.Status = routestate.Active
		if _, err := s.Put(ctx, dup, &routestate.Snapshot{ActionID: next.ActionID, Route: route, Action: "enable", At: t0}); !errors.Is(err, routestate.ErrConflict) {
			t.Fatalf("Put with a duplicate snapshot id: err = %v, want ErrConflict", err)
		}
		cur, err := s.Get(ctx, route)
		must(t, err)
		sameState(t, cur, stored)

		if _, err := s.Snapshot(ctx, "20000101T000000Z-missing"); !errors.Is(err, routestate.ErrNotFound) {
			t.Fatalf("Snapshot of an unknown id: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("snapshots list newest first", func(t *testing.T) {
		s := open(t)
		cur, err := s.Get(ctx, route)
		must(t, err)
		var ids []string
		for i := range 3 {
			at := t0.Add(time.Duration(i) * time.Minute)
			next := cur
			next.Status, next.UpdatedAt = routestate.Disabled, at
			if i%2 == 1 {
				next.Status = routestate.Active
			}
			id := routestate.NewActionID(at, fmt.Sprint(i))
			cur, err = s.Put(ctx, next, &routestate.Snapshot{ActionID: id, Route: route, Action: "x", At: at, Before: cur})
			must(t, err)
			ids = append(ids, id)
		}
		got, err := s.Snapshots(ctx, 2)
		must(t, err)
		if len(got) != 2 || got[0].ActionID != ids[2] || got[1].ActionID != ids[1] {
			t.Fatalf("Snapshots(2) = %v, want %s then %s", actionIDs(got), ids[2], ids[1])
		}
	})

	t.Run("restore undoes an action and refuses a stale one", func(t *testing.T) {
		s := open(t)
		before, err := s.Get(ctx, route)
		must(t, err)
		next := before
		next.Status, next.Until, next.Reason, next.UpdatedAt = routestate.Cooling, t0.Add(time.Minute), "overloaded", t0
		id := routestate.NewActionID(t0, "cool")
		_, err = s.Put(ctx, next, &routestate.Snapshot{ActionID: id, Route: route, Action: "cool", At: t0, Before: before})
		must(t, err)

		undo, err := routestate.Restore(ctx, s, id, t0.Add(time.Second), false)
		must(t, err)
		got, err := s.Get(ctx, route)
		must(t, err)
		if got.Status != routestate.Active || !got.Until.IsZero() || got.Reason != "" || got.ActionID != undo.ActionID {
			t.Fatalf("after restore: %+v", got)
		}
		if _, err := routestate.Restore(ctx, s, id, t0.Add(2*time.Second), false); !errors.Is(err, routestate.ErrChanged) {
			t.Fatalf("restoring an action the route moved past: err = %v, want ErrChanged", err)
		}
		// The rollback is itself an action and can be undone.
		if _, err := routestate.Restore(ctx, s, undo.ActionID, t0.Add(3*time.Second), false); err != nil {
			t.Fatalf("undo of the rollback: %v", err)
		}
		got, err = s.Get(ctx, route)
		must(t, err)
		if got.Status != routestate.Cooling || got.Reason != "overloaded" {
			t.Fatalf("after undoing the rollback: %+v", got)
		}
	})

	t.Run("incidents are versioned and listed", func(t *testing.T) {
		s := open(t)
		const id = "arn:aws:health:us-east-1::event/BEDROCK/AWS_BEDROCK_OPERATIONAL_ISSUE/AWS_BEDROCK_OPERATIONAL_ISSUE_1A2B3C"
		got, err := s.Incident(ctx, id)
		must(t, err)
		if got.ID != id || got.Version != 0 {
			t.Fatalf("Incident of an absent id = %+v, want version 0", got)
		}
		open1 := routestate.Incident{ID: id, Cloud: "aws", Services: []string{"BEDROCK"}, Regions: []string{"us-east-1"},
			Open: true, Title: "Increased error rates", Link: "https://health.aws.amazon.com/health/home#/account/event-log?eventID=" + id,
			Start: t0, Updated: t0, EventID: "eb:1"}
		stored, err := s.PutIncident(ctx, open1)
		must(t, err)
		if stored.Version != 1 {
			t.Fatalf("first PutIncident stored version %d", stored.Version)
		}
		if _, err := s.PutIncident(ctx, open1); !errors.Is(err, routestate.ErrConflict) {
			t.Fatalf("PutIncident naming version 0 over version 1: err = %v, want ErrConflict", err)
		}
		closed := stored
		closed.Open, closed.Updated = false, t0.Add(time.Hour)
		stored, err = s.PutIncident(ctx, closed)
		must(t, err)
		other := routestate.Incident{ID: "projects/1/locations/global/events/e1", Cloud: "gcp", Services: []string{"Vertex Gemini API"},
			Regions: []string{"us-central1", "global"}, Open: true, Updated: t0}
		_, err = s.PutIncident(ctx, other)
		must(t, err)
		all, err := s.Incidents(ctx)
		must(t, err)
		if len(all) != 2 || all[0].ID != id || all[1].ID != other.ID {
			t.Fatalf("Incidents = %+v, want both, sorted by id", all)
		}
		back := all[0]
		if back.Open || back.Version != 2 || !back.Updated.Equal(t0.Add(time.Hour)) || !back.Start.Equal(t0) ||
			back.Title != open1.Title || back.Link != open1.Link || fmt.Sprint(back.Services, back.Regions) != "[BEDROCK] [us-east-1]" {
			t.Fatalf("read back %+v, want %+v", back, stored)
		}
	})
}

func sameState(t *testing.T, got, want routestate.State) {
	t.Helper()
	if got.Route != want.Route || got.Status != want.Status || !got.Until.Equal(want.Until) || got.Reason != want.Reason ||
		got.ChatOnly != want.ChatOnly || got.EventID != want.EventID || got.ActionID != want.ActionID ||
		!got.Since.Equal(want.Since) || got.Version != want.Version || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Fatalf("state mismatch:\n got  %+v\n want %+v", got, want)
	}
}

func actionIDs(ss []routestate.Snapshot) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ActionID
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

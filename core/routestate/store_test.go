package routestate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/internal/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) routestate.Store { return routestate.NewMemory() })
}

func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) routestate.Store {
		f, err := routestate.OpenFile(filepath.Join(t.TempDir(), "state", "routestate.json"))
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}

// Two File values on one path stand for two processes (the gateway's `make run` and
// fngate-remediate): only the file lock serializes them.
func TestFileStoreSeparateWritersShareOneLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routestate.json")
	a, err := routestate.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := routestate.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	const ids = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]int{}
	for _, s := range []*routestate.File{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				id := fmt.Sprint("cwl:", i)
				ok, err := s.Claim(ctx, routestate.Claim{ID: id, At: now, Expires: now.Add(time.Hour)})
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					won[id]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for i := range ids {
		if id := fmt.Sprint("cwl:", i); won[id] != 1 {
			t.Errorf("%s was claimed %d times, want once", id, won[id])
		}
	}
}

// Readers take no lock; the temp-file-and-rename write must never show them a partial file.
func TestFileStoreReadersNeverSeeAPartialFile(t *testing.T) {
	f, err := routestate.OpenFile(filepath.Join(t.TempDir(), "routestate.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		st, _ := f.Get(ctx, "mock/error:429")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			st.Reason = fmt.Sprintf("reason %d %s", i, string(make([]byte, i%512)))
			var err error
			if st, err = f.Put(ctx, st, nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	deadline := time.Now().Add(300 * time.Millisecond)
	reads := 0
	for time.Now().Before(deadline) {
		if _, err := f.List(ctx); err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		reads++
	}
	close(stop)
	wg.Wait()
	st, err := f.Get(ctx, "mock/error:429")
	if err != nil || st.Version < 2 {
		t.Fatalf("after the writer: %+v, %v (the writer made no progress)", st, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(f.Path()))
	for _, e := range entries {
		if e.Name() != "routestate.json" && e.Name() != "routestate.json.lock" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestFileStoreExpiredClaimsArePruned(t *testing.T) {
	f, err := routestate.OpenFile(filepath.Join(t.TempDir(), "routestate.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	claim := func(id string, at time.Time) {
		t.Helper()
		if ok, err := f.Claim(ctx, routestate.Claim{ID: id, At: at, Expires: at.Add(time.Hour)}); !ok || err != nil {
			t.Fatalf("claim %s: %v, %v", id, ok, err)
		}
	}
	claim("eb:old", t0)
	claim("eb:recent", t0.Add(30*time.Minute))
	claim("eb:new", t0.Add(61*time.Minute))
	b, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"eb:old"`) || !strings.Contains(string(b), `"eb:recent"`) || !strings.Contains(string(b), `"eb:new"`) {
		t.Fatalf("want only the unexpired claims kept, file:\n%s", b)
	}
}

func TestFileStoreReportsACorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "routestate.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := routestate.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.List(context.Background()); err == nil {
		t.Fatal("List of a corrupt file succeeded")
	}
	if _, err := f.Put(context.Background(), routestate.State{Route: "a/b", Status: routestate.Disabled}, nil); err == nil || errors.Is(err, routestate.ErrConflict) {
		t.Fatalf("Put over a corrupt file: err = %v, want a read error", err)
	}
}

package responsestore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/internal/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsestore.Store {
		m := responsestore.NewMemory()
		m.Now = now
		return m
	}, storetest.Options{})
}

func TestFile(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsestore.Store {
		f, err := responsestore.OpenFile(filepath.Join(t.TempDir(), "responses"))
		if err != nil {
			t.Fatal(err)
		}
		f.Now = now
		return f
	}, storetest.Options{})
}

// Two stores on one directory are two processes: what one writes the other reads, and the
// files are the owner's alone.
func TestFileIsSharedAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "responses")
	a, err := responsestore.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := responsestore.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	want := &responsestore.Stored{ID: "resp_1", Owner: "app", Created: now, Expires: now.Add(time.Hour),
		Input: []byte(`[{"role":"user","content":"hi"}]`), Response: []byte(`{"id":"resp_1"}`)}
	if err := a.Put(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "resp_1", "app")
	if err != nil || !bytes.Equal(got.Response, want.Response) {
		t.Fatalf("the second store read %+v, %v", got, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v, %v; want one file", entries, err)
	}
	info, err := entries[0].Info()
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("a stored response is readable by others: mode %v", perm)
	}
	if dirInfo, err := os.Stat(dir); err != nil || dirInfo.Mode().Perm()&0o077 != 0 {
		t.Errorf("the directory is open to others: %v, %v", dirInfo.Mode(), err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if !strings.Contains(string(text), "\n"+string(want.Input)+"\n"+string(want.Response)+"\n") {
		t.Errorf("the file does not show the input and response as given:\n%s", text)
	}
}

// Expired files are removed by a later Put, so a long-running make run does not keep them.
func TestFileSweepsExpired(t *testing.T) {
	dir := t.TempDir()
	f, err := responsestore.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Now = func() time.Time { return now }
	ctx := context.Background()
	for _, id := range []string{"resp_old", "resp_keep"} {
		exp := now.Add(time.Minute)
		if id == "resp_keep" {
			exp = now.Add(time.Hour)
		}
		if err := f.Put(ctx, &responsestore.Stored{ID: id, Owner: "app", Created: now, Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Minute)
	if err := f.Put(ctx, &responsestore.Stored{ID: "resp_new", Owner: "app", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("after the sweep the directory holds %d files, want 2 (resp_keep, resp_new)", len(entries))
	}
	if _, err := f.Get(ctx, "resp_keep", "app"); err != nil {
		t.Errorf("the sweep removed a live response: %v", err)
	}
}

func TestFileHonoursCancellation(t *testing.T) {
	f, err := responsestore.OpenFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Get(ctx, "resp_1", "app"); err == nil || err == responsestore.ErrNotFound {
		t.Errorf("Get with a cancelled context: %v", err)
	}
}

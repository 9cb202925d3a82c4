package responsecache_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/responsecache"
)

func key(b byte) string {
	var id responsecache.Identity
	id.Partition[0], id.Digest[0] = b, b
	return id.Key()
}

// Two stores on one directory are two servers: what one writes the other reads, the files
// are the owner's alone, and one shows its entry as a header line and the body as given.
func TestFileIsSharedAndPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	a, err := responsecache.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := responsecache.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	want := &responsecache.Entry{Key: key(1), Model: "m", Created: now, Expires: now.Add(time.Hour), Body: []byte(`{"v":1,"whole":{}}`)}
	if err := a.Put(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, want.Key)
	if err != nil || !bytes.Equal(got.Body, want.Body) {
		t.Fatalf("the second store read %+v, %v", got, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != want.Key+".entry" {
		t.Fatalf("directory holds %v, %v; want one file named for the key", entries, err)
	}
	info, err := entries[0].Info()
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("an entry is readable by others: mode %v", perm)
	}
	if dirInfo, err := os.Stat(dir); err != nil || dirInfo.Mode().Perm()&0o077 != 0 {
		t.Errorf("the directory is open to others: %v, %v", dirInfo.Mode(), err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	head, body, _ := strings.Cut(string(text), "\n")
	if !strings.HasPrefix(head, `{"key":"`+want.Key+`","model":"m",`) || body != string(want.Body)+"\n" {
		t.Errorf("the file does not show the header and the body as given:\n%s", text)
	}
}

// Expired files are removed by a later Put, so a long-running make run does not keep them,
// and live ones stay.
func TestFileSweepsExpired(t *testing.T) {
	dir := t.TempDir()
	f, err := responsecache.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Now = func() time.Time { return now }
	ctx := context.Background()
	put := func(k string, ttl time.Duration) {
		t.Helper()
		if err := f.Put(ctx, &responsecache.Entry{Key: k, Created: now, Expires: now.Add(ttl), Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	put(key(1), time.Minute)
	put(key(2), time.Hour)
	// Not a file of the store's: left alone.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	put(key(3), time.Hour)
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{key(2) + ".entry", key(3) + ".entry", "notes.txt"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("after the sweep the directory holds %v, want %v", names, want)
	}
}

// A file cut short or damaged is a failure, not an entry and not a miss: the gateway logs
// it and serves the request as a miss.
func TestFileDamaged(t *testing.T) {
	dir := t.TempDir()
	f, err := responsecache.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	e := &responsecache.Entry{Key: key(1), Created: now, Expires: now.Add(time.Hour), Body: []byte("the body")}
	if err := f.Put(ctx, e); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, e.Key+".entry")
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"truncated":  whole[:len(whole)-3],
		"longer":     append(bytes.TrimSuffix(whole, []byte("\n")), "and more\n"...),
		"no header":  []byte("the body"),
		"not json":   []byte("{\n"),
		"empty file": nil,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Get(ctx, e.Key); err == nil || err == responsecache.ErrNotFound {
			t.Errorf("%s: Get = %+v, %v; want a failure", name, got, err)
		}
	}
}

package keystore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/internal/storetest"
)

func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) keystore.Store {
		s, err := keystore.OpenFile(filepath.Join(t.TempDir(), "keys", "keys.json"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, storetest.Options{RewritesAll: true})
}

func fileKey(name string) (*keystore.Key, *keystore.Entry) {
	_, h := keystore.NewSecret()
	now := time.Now().UTC()
	k := &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: name, Hash: h}, Created: now, Updated: now, Version: 1}
	return k, &keystore.Entry{ID: keystore.NewEntryID(), Time: now, Action: "key.create", Target: k.ID}
}

// TestFileStoreIsShared: stores on one path (servers on one machine) see each other's
// changes, racing changes all land, and a store opened afresh (a restart) finds them all.
func TestFileStoreIsShared(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.json")
	var stores []*keystore.File
	for range 3 {
		s, err := keystore.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	const each = 20
	var wg sync.WaitGroup
	errs := make(chan error, len(stores)*each)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				k, e := fileKey(fmt.Sprintf("s%d-%d", i, j))
				if err := s.Create(ctx, k, e); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	restarted, err := keystore.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(stores, restarted) {
		page, err := s.List(ctx, keystore.Query{Limit: keystore.MaxPage})
		if err != nil || len(page.Keys) != len(stores)*each {
			t.Fatalf("a store on the file lists %d keys (%v), want %d", len(page.Keys), err, len(stores)*each)
		}
		audit, err := s.Audit(ctx, keystore.AuditQuery{Limit: keystore.MaxPage})
		if err != nil || len(audit.Entries) != len(stores)*each {
			t.Fatalf("a store on the file has %d audit entries (%v), want %d", len(audit.Entries), err, len(stores)*each)
		}
	}
	// A change through one store is read by another at once.
	k := page0(t, stores[0])
	d := k.Clone()
	d.Version, d.Deleted, d.Updated = 2, true, time.Now().UTC()
	if err := stores[1].Update(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[2].ByHash(ctx, k.Hash); err != keystore.ErrNotFound {
		t.Fatalf("another store's ByHash of the key just deleted: %v, want ErrNotFound", err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode is %v (%v), want 0600: it holds the keys' hashes", info.Mode().Perm(), err)
	}
}

func page0(t *testing.T, s keystore.Store) *keystore.Key {
	t.Helper()
	page, err := s.List(context.Background(), keystore.Query{Limit: 1})
	if err != nil || len(page.Keys) != 1 {
		t.Fatalf("List: %v, %v", page, err)
	}
	return page.Keys[0]
}

// TestFileStoreRefusesWhatItCannotRead: a file that is not a key store's, or past the size
// bound, is an error to every call, and a change leaves it as it was.
func TestFileStoreRefusesWhatItCannotRead(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		write func(path string) error
		want  string
	}{
		{"not JSON", func(p string) error { return os.WriteFile(p, []byte("keys: []\n"), 0o600) }, "not a key store's file"},
		{"a key without its hash", func(p string) error {
			return os.WriteFile(p, []byte(`{"keys":[{"ID":"key_x","Name":"a","Hash":"zz"}]}`), 0o600)
		}, "hash"},
		{"past the bound", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(keystore.MaxFileSize + 1)
		}, "past the file store's bound"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "keys.json")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(path)
			s, err := keystore.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, h := keystore.NewSecret()
			if _, err := s.ByHash(ctx, h); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ByHash: %v, want an error saying %q", err, tt.want)
			}
			k, e := fileKey("a")
			if err := s.Create(ctx, k, e); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Create: %v, want an error saying %q", err, tt.want)
			}
			after, _ := os.Stat(path)
			if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
				t.Error("a refused change rewrote the file")
			}
		})
	}
}

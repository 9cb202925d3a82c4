package responsecache_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/internal/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsecache.Store {
		m := responsecache.NewMemory()
		m.Now = now
		return m
	}, storetest.Options{Limit: responsecache.MaxEntryBytes})
}

func TestFile(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) responsecache.Store {
		f, err := responsecache.OpenFile(filepath.Join(t.TempDir(), "cache"))
		if err != nil {
			t.Fatal(err)
		}
		f.Now = now
		return f
	}, storetest.Options{Limit: responsecache.MaxEntryBytes})
}

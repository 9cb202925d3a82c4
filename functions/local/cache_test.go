package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/internal/awstest"
)

// TestCacheStoreFromConfig: the local server opens the store response_cache names (memory
// when it names none) once a model or a key caches, and nothing when none does.
func TestCacheStoreFromConfig(t *testing.T) {
	// A client that reached for a cloud service would find a closed port, never the real one.
	awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL=http://127.0.0.1:1")
	t.Setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:1")
	dir := filepath.Join(t.TempDir(), "cached")
	const (
		cached   = "connections: {mock: {kind: mock}}\nmodels: {m: {cache: {ttl: 1h}, routes: [{connection: mock, model: echo}]}}\n"
		uncached = "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
		byKey    = "keys: [{name: app, value: k-1, cache: {ttl: 1m}}]\n" + uncached
	)
	for _, tc := range []struct {
		yaml, want, err string
	}{
		{uncached, "off", ""},
		{"response_cache: {store: file, path: " + dir + "-unused}\n" + uncached, "off", ""},
		{"response_cache: {store: dynamodb}\n" + uncached, "off", ""},
		{cached, "memory", ""},
		{byKey, "memory", ""},
		{"response_cache: {store: memory}\n" + cached, "memory", ""},
		{"response_cache: {store: file, path: " + dir + "}\n" + cached, "file " + dir, ""},
		{"response_cache: {store: file}\n" + cached, "file " + config.DefaultCacheDir, ""},
		{"response_cache: {store: dynamodb, table: stack-cache}\n" + cached, "dynamodb table stack-cache", ""},
		{"response_cache: {store: firestore, project: p}\n" + cached, "firestore collection fngate_cache of database (default)", ""},
		{"response_cache:\n  store: dynamodb\n" + cached, "", "line 2: response_cache.store: response_cache: store dynamodb needs a table (response_cache.table)"},
	} {
		if strings.Contains(tc.yaml, "{store: file}") {
			t.Chdir(t.TempDir()) // the default directory is relative
		}
		cfg, err := config.Parse(context.Background(), []byte(tc.yaml), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, what, closeStore, err := cacheStore(context.Background(), cfg)
		defer closeStore()
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err = %v\nwant %s", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want || (s == nil) != (what == "off") {
			t.Errorf("%q: opened %v %q, %v; want %q", tc.yaml, s, what, err, tc.want)
			continue
		}
		if _, local := s.(*responsecache.File); local || what == "memory" {
			now := time.Now()
			var id responsecache.Identity
			if err := s.Put(context.Background(), &responsecache.Entry{Key: id.Key(), Created: now, Expires: now.Add(time.Hour), Body: []byte("x")}); err != nil {
				t.Errorf("%q: Put: %v", tc.yaml, err)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the file store wrote %d files to %s, want 1", len(entries), dir)
	}
	if _, err := os.Stat(dir + "-unused"); err == nil {
		t.Error("a file store was opened for a config that caches nothing")
	}
}

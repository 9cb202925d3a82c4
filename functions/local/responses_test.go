package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
)

func TestResponseStoreFromConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kept")
	const models = "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
	for _, tc := range []struct {
		yaml, want, err string
	}{
		{"", "memory", ""},
		{"responses: {store: memory}", "memory", ""},
		{"responses: {store: none}", "none", ""},
		{"responses: {store: file, path: " + dir + "}", "file " + dir, ""},
		{"responses:\n  store: dynamodb\n", "", "line 2: responses.store: responses: store dynamodb needs a table (responses.table)"},
	} {
		cfg, err := config.Parse(context.Background(), []byte(tc.yaml+"\n"+models), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, what, closeStore, err := responseStore(context.Background(), cfg)
		defer closeStore()
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err = %v\nwant %s", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want {
			t.Errorf("%q: opened %q, %v; want %q", tc.yaml, what, err, tc.want)
			continue
		}
		if (s == nil) != (tc.want == "none") {
			t.Errorf("%q: store %v", tc.yaml, s)
		}
		if s == nil {
			continue
		}
		now := time.Now()
		if err := s.Put(context.Background(), &responsestore.Stored{ID: "resp_1", Owner: "app", Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Errorf("%q: Put: %v", tc.yaml, err)
		}
		if strings.HasPrefix(tc.want, "file") {
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the file store wrote %d files to %s", len(entries), dir)
			}
		}
	}
}

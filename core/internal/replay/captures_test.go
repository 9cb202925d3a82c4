package replay

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// recording is one capture and its sidecar (<name>.meta.json).
type recording struct {
	ID       string            `json:"id"`
	Provider string            `json:"provider"`
	File     string            `json:"file"`
	Format   string            `json:"format"`
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers"`

	path string // of the capture
	body []byte
}

// stream reports whether the recording is a streamed answer. An error body answers either
// kind of request.
func (r *recording) stream() bool {
	for _, s := range []string{"-sse", "-chunks", "-eventstream"} {
		if strings.HasSuffix(r.Format, s) {
			return true
		}
	}
	return false
}

// wire is the provider wire that serves the recording: the format's prefix, or for an error
// body the provider's.
func (r *recording) wire() string {
	if r.Format != "http-error" {
		w, _, _ := strings.Cut(r.Format, "-")
		return w
	}
	switch r.Provider {
	case "anthropic", "bedrock":
		return r.Provider
	}
	return "openai"
}

// chunkLines returns the events of a .chunks.txt capture, one JSON document a line.
func (r *recording) chunkLines() [][]byte {
	var out [][]byte
	for _, l := range strings.Split(string(r.body), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, []byte(l))
		}
	}
	return out
}

// capturesDir finds ../shared/captures beside the module root, skipping the test when the
// clone has none.
func capturesDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	captures := filepath.Join(dir, "..", "shared", "captures")
	if _, err := os.Stat(filepath.Join(captures, "README.md")); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no recorded provider traffic at %s: the recordings are kept beside the repository, not in it (../shared/captures/README.md); these tests replay them when present", captures)
	}
	return captures
}

// loadRecordings reads every sidecar and its capture, leaving out agent-clients/ (client
// requests, not provider answers). A capture without a sidecar fails the test.
func loadRecordings(t *testing.T) map[string]*recording {
	t.Helper()
	root := capturesDir(t)
	recs := map[string]*recording{}
	described := map[string]bool{}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.IsDir() && rel == "agent-clients":
			return filepath.SkipDir
		case d.IsDir() || rel == "README.md":
			return nil
		case !strings.HasSuffix(path, ".meta.json"):
			files = append(files, path)
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rec := &recording{}
		if err := json.Unmarshal(raw, rec); err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		rec.path = filepath.Join(filepath.Dir(path), rec.File)
		if rec.body, err = os.ReadFile(rec.path); err != nil {
			t.Errorf("%s names a capture that cannot be read: %v", rel, err)
			return nil
		}
		if recs[rec.ID] != nil {
			t.Errorf("%s: id %s is used twice", rel, rec.ID)
		}
		recs[rec.ID] = rec
		described[rec.path] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, f := range files {
		if !described[f] {
			t.Errorf("%s has no sidecar (.meta.json): it would never be replayed", f)
		}
	}
	return recs
}

// TestEveryRecordingHasARow: a new recording without an expectation fails here, and so does
// a row whose recording is gone, so nothing is skipped without anyone noticing.
func TestEveryRecordingHasARow(t *testing.T) {
	recs := loadRecordings(t)
	for id := range recs {
		if _, ok := rowsByID()[id]; !ok {
			t.Errorf("recording %s has no row in rows_test.go: add its expected result", id)
		}
	}
	for id := range rowsByID() {
		if recs[id] == nil {
			t.Errorf("row %s has no recording in ../shared/captures", id)
		}
	}
}

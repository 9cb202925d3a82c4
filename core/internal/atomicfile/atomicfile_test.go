package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestWriteReplacesTheFileWhole: the file holds the new data with the permissions asked,
// and no temporary file is left beside it, after a first write and after a replacement.
func TestWriteReplacesTheFileWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.json")
	for _, tt := range []struct {
		data string
		perm os.FileMode
	}{{"{\"a\":1}\n", 0o644}, {"{\"a\":2}\n", 0o600}} {
		if err := Write(path, []byte(tt.data), tt.perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != tt.data {
			t.Fatalf("the file holds %q (%v), want %q", got, err, tt.data)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != tt.perm {
			t.Errorf("the file's mode is %v, want %v", fi.Mode().Perm(), tt.perm)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("the directory holds %d entries, want the file alone", len(entries))
		}
	}
}

// TestWriteFailureKeepsTheOldFile: a write that cannot finish (here the rename, onto a
// directory) leaves the old file as it was and no temporary file.
func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o644); err == nil {
		t.Fatal("Write renamed a file over a directory that is not empty")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the old one alone", len(entries))
	}
}

// Package golden compares what a test produced with a reviewed file under testdata, and
// rewrites the files from the current output when the test binary runs with -update:
//
//	go test ./core/providers/anthropic/ -run Golden -update
//
// It owns the -update flag, so a test package that imports it must not define its own.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from the current output")

// Check compares got with the file at path, or writes got to it under -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// CheckIndented is Check with JSON output indented first, so the files read well and diffs
// point at a field; other output is compared as it is.
func CheckIndented(t testing.TB, path string, got []byte) {
	t.Helper()
	if json.Valid(got) {
		got = Indent(t, got)
	}
	Check(t, path, got)
}

// Indent returns the JSON b indented by two spaces, with a final newline. b must be JSON.
func Indent(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// Cases lists the inputs of one golden table, testdata/<dir>/*<ext> less the golden files
// (any name holding ".golden"), as names without ext, sorted. A table without cases fails the
// test.
func Cases(t testing.TB, dir, ext string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		if name := filepath.Base(p); !strings.Contains(name, ".golden") {
			names = append(names, strings.TrimSuffix(name, ext))
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no cases in testdata/%s", dir)
	}
	return names
}

// Read returns the file testdata/<name>, failing the test when it cannot be read.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package vertex

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from the current translation")

// cases lists the inputs of one golden table: testdata/<dir>/*<ext>, by name.
func cases(t *testing.T, dir, ext string) []string {
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

// checkGolden compares got with the golden file, or rewrites it under -update. JSON is
// indented first so the files read well and diffs point at a field.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if json.Valid(got) {
		var buf bytes.Buffer
		if err := json.Indent(&buf, got, "", "  "); err != nil {
			t.Fatal(err)
		}
		buf.WriteByte('\n')
		got = buf.Bytes()
	}
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
		t.Errorf("%s differs from the translation.\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// protoJSON renders a message in the REST API's JSON spelling (camelCase), stably: protojson
// varies its spacing on purpose, which the indentation in checkGolden removes.
func protoJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// counter mints predictable tool call ids for golden files.
func counter() func() string {
	n := 0
	return func() string {
		n++
		return "call_" + strconv.Itoa(n)
	}
}

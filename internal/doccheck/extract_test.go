package doccheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	md := "# Title\n\n## Part\n\n<!-- snippet: skip (needs an AWS account) -->\n```sh\nsam deploy\n```\n\n" +
		"<!-- snippet: expect \"Hello\" expect \"say \\\"hi\\\"\" -->\n```Go title\npackage main\n```\n\n```\ntree\n```\n\n~~~yaml\na: 1\n~~~\n"
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Extract(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Snippet{
		{File: path, Line: 6, Lang: "sh", Body: "sam deploy\n", Heading: "Part", Skip: "needs an AWS account"},
		{File: path, Line: 11, Lang: "go", Body: "package main\n", Heading: "Part", Expect: []string{"Hello", `say "hi"`}},
		{File: path, Line: 15, Lang: "", Body: "tree\n", Heading: "Part"},
		{File: path, Line: 19, Lang: "yaml", Body: "a: 1\n", Heading: "Part"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// A marker that does not parse, or that is not followed by its fence, is an error: a typo
// must not leave a snippet unchecked.
func TestExtractRejectsBadMarkers(t *testing.T) {
	for name, md := range map[string]string{
		"unknown verb":   "<!-- snippet: skipp (x) -->\n```sh\nls\n```\n",
		"skip no reason": "<!-- snippet: skip -->\n```sh\nls\n```\n",
		"not before":     "<!-- snippet: skip (x) -->\ntext\n```sh\nls\n```\n",
		"unclosed":       "```sh\nls\n",
	} {
		path := filepath.Join(t.TempDir(), "doc.md")
		if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Extract(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want an error naming the place", name, err)
		}
	}
}

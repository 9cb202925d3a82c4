package docfields

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRowCoversWholeFieldsOnly: a row names a field by a code span that is the field or
// continues it with a path or a value, never by a longer name that merely starts with it.
func TestRowCoversWholeFieldsOnly(t *testing.T) {
	for _, tc := range []struct {
		cell, name string
		fold, want bool
	}{
		{"`top_p`", "top_p", false, true},
		{"`presence_penalty`, `frequency_penalty`", "frequency_penalty", false, true},
		{"`stream_options.include_usage`", "stream_options", false, true},
		{"`response_format: json_object`", "response_format", false, true},
		{"`messages[].name`", "messages", false, true},
		{"`stream`", "stream_options", false, false},
		{"`stream_options`", "stream", false, false},
		{"`top_logprobs`", "top", false, false},
		{"top_p without a code span", "top_p", false, false},
		{"`anthropic-version`", "Anthropic-Version", true, true},
		{"`anthropic-version`", "Anthropic-Version", false, false},
	} {
		if got := (Row{Cells: []string{tc.cell, "✓"}}).Covers(tc.name, tc.fold); got != tc.want {
			t.Errorf("%q covers %q (fold %v): %v, want %v", tc.cell, tc.name, tc.fold, got, tc.want)
		}
	}
}

// TestCellsSplitAsGitHubDoes: a pipe inside a code span or escaped does not end a cell.
func TestCellsSplitAsGitHubDoes(t *testing.T) {
	for line, want := range map[string][]string{
		"| a | b |":             {"a", "b"},
		"| `x | y` | b |":       {"`x | y`", "b"},
		`| one of < \| > | b |`: {"one of < | >", "b"},
		"| a | b | `c` ✓ (1) |": {"a", "b", "`c` ✓ (1)"},
		"|a|b":                  {"a", "b"},
	} {
		if got := cells(line); !slices.Equal(got, want) {
			t.Errorf("cells(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestAnchorsAreGitHubs: links between the pages use GitHub's heading ids.
func TestAnchorsAreGitHubs(t *testing.T) {
	seen := map[string]int{}
	for text, want := range map[string]string{
		"Request fields":                   "request-fields",
		"The config, and how to change it": "the-config-and-how-to-change-it",
		"AWS: SAM":                         "aws-sam",
		"`logging.format: text`":           "loggingformat-text",
		"See [the mock](mock.md)":          "see-the-mock",
	} {
		if got := anchor(text, seen); got != want {
			t.Errorf("anchor(%q) = %q, want %q", text, got, want)
		}
	}
	if a, b := anchor("Notes", seen), anchor("Notes", seen); a != "notes" || b != "notes-1" {
		t.Errorf("a repeated heading: %q then %q, want notes then notes-1", a, b)
	}
}

// TestReadPageSectionsAndFences: a table belongs to the headings above it, and a table in a
// fenced block is no table.
func TestReadPageSectionsAndFences(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.md")
	page := "# Door\n\n## Request fields\n\n| Field | OpenAI |\n|---|---|\n| `model` | ✓ |\n\n" +
		"### Nested\n\n| Part | OpenAI |\n|---|---|\n| `text` | ✓ |\n\n## Other\n\n```\n| not | a table |\n|---|---|\n```\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPage(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tables) != 2 {
		t.Fatalf("%d tables, want 2 (the fenced one is not a table)", len(p.Tables))
	}
	if !p.Tables[1].Under("Request fields") || !p.Tables[1].Under("Nested") || p.Tables[0].Under("Nested") {
		t.Errorf("sections: %q and %q", p.Tables[0].Headings, p.Tables[1].Headings)
	}
	for _, a := range []string{"door", "request-fields", "nested", "other"} {
		if !p.Anchors[a] {
			t.Errorf("no anchor %q in %v", a, p.Anchors)
		}
	}
}

// TestSourceReadsTheDecoder: each kind of source finds its names in Go code.
func TestSourceReadsTheDecoder(t *testing.T) {
	dir := t.TempDir()
	src := `package p

type req struct {
	Model string ` + "`json:\"model\"`" + `
	Skip  string ` + "`json:\"-\"`" + `
	Opt   *int   ` + "`json:\"opt,omitempty\"`" + `
}

var list = []string{"a", "b"}
var set = map[string]bool{"c": true}

type d struct{}

func (x *d) member(key string, h map[string]string) {
	switch key {
	case "one", "two":
	case "":
	}
	switch other := key; other {
	case "not this":
	}
	_ = get(h, "Header-One")
}

func get(map[string]string, string) string { return "" }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Source
		want []string
	}{
		{Source{File: "p.go", Struct: "req"}, []string{"model", "opt"}},
		{Source{File: "p.go", Var: "list"}, []string{"a", "b"}},
		{Source{File: "p.go", Var: "set"}, []string{"c"}},
		{Source{File: "p.go", Func: "d.member", Switch: "key"}, []string{"one", "two"}},
		{Source{File: "p.go", Func: "d.member", Calls: []string{"get"}}, nil},
	} {
		got, err := tc.s.Names(dir)
		if tc.want == nil {
			// get's first argument is h, not a literal: nothing found is an error.
			if err == nil {
				t.Errorf("%s: %q, want an error for no names", tc.s, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.s, got, err, tc.want)
		}
	}
	if _, err := (Source{File: "p.go", Func: "member", Switch: "key"}).Names(dir); err == nil {
		t.Error("a method named without its receiver matched")
	}
}

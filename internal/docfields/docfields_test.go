package docfields

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the module, two levels up from this package.
var root = func() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}()

// backends are the columns of the chat, Messages and Responses pages' tables, in order: the
// connection kinds, with Bedrock and Vertex AI split by the API a route uses.
var backends = []string{"OpenAI", "OpenRouter", "vLLM, SGLang", "Ollama", "openai-compatible", "Anthropic",
	"Bedrock Claude (InvokeModel)", "Bedrock Converse", "Vertex Gemini", "Vertex Claude", "Vertex partner", "mock"}

// embeddingRoutes are the embeddings page's columns: the routes whose embeddings differ.
var embeddingRoutes = []string{"OpenAI", "vLLM, SGLang", "Ollama, openai-compatible, OpenRouter", "Bedrock Titan",
	"Bedrock Cohere", "Vertex text-embedding", "Vertex gemini-embedding", "mock"}

// facet is one set of names a door accepts and the section of its page whose tables must
// have a row for each.
type facet struct {
	page, section string
	columns       []string
	fold          bool // names compared without case (headers)
	from          []Source
}

// facets are what each door's decoder accepts: the top-level fields of every profile, and
// the nested names the decoders dispatch on explicitly.
var facets = []facet{
	{page: "docs/chat.md", section: "Request fields", columns: backends, from: []Source{
		{File: "core/openai/chat.go", Struct: "ChatRequest"},      // strict
		{File: "core/openai/extended.go", Struct: "extendedChat"}, // extended
	}},
	{page: "docs/chat.md", section: "Message fields", columns: backends, from: []Source{
		{File: "core/openai/chat.go", Struct: "Message"},
		{File: "core/openai/extended.go", Struct: "extendedMessage"},
	}},
	{page: "docs/chat.md", section: "Content parts", columns: backends, from: []Source{
		{File: "core/openai/extended.go", Func: "contentPart.part", Switch: "c.Type"},
	}},
	{page: "docs/chat.md", section: "Completions request fields", columns: backends, from: []Source{
		{File: "core/openai/completions.go", Struct: "CompletionRequest"},
		{File: "core/openai/extended.go", Struct: "extendedCompletion"},
	}},
	{page: "docs/messages.md", section: "Request fields", columns: backends, from: []Source{
		{File: "core/messages/decode.go", Func: "decoder.member", Switch: "key"},
		{File: "core/messages/decode.go", Var: "anthropicOnly"},
	}},
	{page: "docs/messages.md", section: "Headers", columns: backends, fold: true, from: []Source{
		{File: "core/messages/decode.go", Func: "decodeHeaders", Calls: []string{"h.Get", "h.Values"}},
	}},
	{page: "docs/messages.md", section: "Content blocks", columns: backends, from: []Source{
		{File: "core/messages/decode.go", Var: "blockTypes"},
	}},
	{page: "docs/messages.md", section: "Tool choice", columns: backends, from: []Source{
		{File: "core/messages/decode.go", Func: "decoder.toolChoice", Switch: "typ"},
	}},
	{page: "docs/responses.md", section: "Request fields", columns: backends, from: []Source{
		{File: "core/responses/decode.go", Func: "decoder.member", Switch: "key"},
		{File: "core/responses/decode.go", Var: "nativeOnly"},
	}},
	{page: "docs/responses.md", section: "Input items", columns: backends, from: []Source{
		{File: "core/responses/items.go", Func: "decoder.item", Switch: "typ"},
	}},
	{page: "docs/responses.md", section: "Message content", columns: backends, from: []Source{
		{File: "core/responses/items.go", Func: "decoder.contentPart", Switch: "typ"},
	}},
	{page: "docs/responses.md", section: "Tools", columns: backends, from: []Source{
		{File: "core/responses/tools.go", Var: "hostedTools"},
	}},
	{page: "docs/responses.md", section: "Function tools", columns: backends, from: []Source{
		{File: "core/responses/tools.go", Var: "functionKeys"},
		{File: "core/responses/tools.go", Func: "decoder.function", Switch: "key"},
	}},
	{page: "docs/responses.md", section: "Include values", columns: backends, from: []Source{
		{File: "core/responses/tools.go", Var: "includable"},
	}},
	{page: "docs/embeddings.md", section: "Request fields", columns: embeddingRoutes, from: []Source{
		{File: "core/openai/embeddings.go", Var: "embeddingFields"},
	}},
	// POST /v1/responses/compact: passed through on openai routes, compacted by the gateway on
	// every other.
	{page: "docs/compaction.md", section: "The request", columns: []string{"`openai` routes", "every other route"}, from: []Source{
		{File: "core/responses/compact.go", Var: "compactFields"},
	}},
}

// TestEveryAcceptedFieldHasItsRow fails naming each field a door's decoder accepts that has no
// row in its page's table, and each such table whose columns are not the door's backends.
func TestEveryAcceptedFieldHasItsRow(t *testing.T) {
	pages := map[string]*Page{}
	for _, f := range facets {
		t.Run(f.page+"#"+f.section, func(t *testing.T) {
			p := pages[f.page]
			if p == nil {
				var err error
				if p, err = ReadPage(filepath.Join(root, f.page)); err != nil {
					t.Fatal(err)
				}
				pages[f.page] = p
			}
			var tables []Table
			for _, tb := range p.Tables {
				if tb.Under(f.section) {
					tables = append(tables, tb)
				}
			}
			if len(tables) == 0 {
				t.Fatalf("%s has no table under a heading %q", f.page, f.section)
			}
			for _, tb := range tables {
				if n := len(tb.Header); n < len(f.columns) || !slices.Equal(tb.Header[n-len(f.columns):], f.columns) {
					t.Errorf("%s:%d: the table's columns end %q, want one per backend: %q", f.page, tb.Line, tb.Header, f.columns)
				}
				for _, r := range tb.Rows {
					if len(r.Cells) != len(tb.Header) {
						t.Errorf("%s:%d: %d cells under a header of %d", f.page, r.Line, len(r.Cells), len(tb.Header))
					}
				}
			}
			for _, src := range f.from {
				names, err := src.Names(root)
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range names {
					if !covered(tables, name, f.fold) {
						t.Errorf("%s, %q: no row for %q, which %s accepts", f.page, f.section, name, src)
					}
				}
			}
		})
	}
}

func covered(tables []Table, name string, fold bool) bool {
	for _, tb := range tables {
		for _, r := range tb.Rows {
			if r.Covers(name, fold) {
				return true
			}
		}
	}
	return false
}

// TestLinksLand fails naming each relative link of README.md and docs/*.md whose file does
// not exist, or whose #anchor is no heading of that file.
func TestLinksLand(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	pages := map[string]*Page{}
	read := func(path string) *Page {
		if p, ok := pages[path]; ok {
			return p
		}
		p, err := ReadPage(path)
		if err != nil {
			p = nil
		}
		pages[path] = p
		return p
	}
	for _, f := range files {
		p := read(f)
		if p == nil {
			t.Fatalf("cannot read %s", f)
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range p.Links {
			if strings.Contains(l.Target, "://") || strings.HasPrefix(l.Target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(l.Target, "#")
			target := f
			if file != "" {
				target = filepath.Join(filepath.Dir(f), filepath.FromSlash(file))
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s:%d: %s: no such file", rel, l.Line, l.Target)
				continue
			}
			if frag == "" {
				continue
			}
			tp := read(target)
			if tp == nil || !tp.Anchors[frag] {
				t.Errorf("%s:%d: %s: no heading with the anchor #%s", rel, l.Line, l.Target, frag)
			}
		}
	}
}

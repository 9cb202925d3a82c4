// Package doccheck keeps the snippets in README.md and docs/*.md true: its test compiles and
// runs every Go snippet, runs every shell snippet against a local server (or, when the snippet
// starts one itself, as the self-repair walkthrough does, on an address of its own), parses
// and runs the Python ones with a stand-in for the openai package, reads YAML as fngate
// config (every field it names must exist) and parses JSON, TOML and HCL. A snippet that
// cannot run offline says so just above its fence, with the reason:
//
//	<!-- snippet: skip (needs the SAM CLI and an AWS account) -->
//
// and a snippet may name output it must print:
//
//	<!-- snippet: expect "Hello, gateway" -->
//
// Fences without a language (diagrams, directory trees) are not snippets.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Snippet is one fenced block of a Markdown file.
type Snippet struct {
	File string
	Line int    // of the opening fence
	Lang string // the fence's info string, first word, lower case
	Body string
	// Heading is the nearest heading above, without its #s.
	Heading string
	// Skip is the reason given by a skip marker; empty means the snippet is checked.
	Skip string
	// Expect lists what the snippet's output must contain.
	Expect []string
}

// Name is file:line:lang, for test names and messages.
func (s Snippet) Name() string { return fmt.Sprintf("%s:%d:%s", s.File, s.Line, s.Lang) }

var (
	fence    = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([^`\\s]*)")
	marker   = regexp.MustCompile(`^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$`)
	skipRe   = regexp.MustCompile(`^skip\s*\((.+)\)$`)
	expectRe = regexp.MustCompile(`expect\s+"((?:[^"\\]|\\.)*)"`)
)

// Extract reads the fenced blocks of a Markdown file. A marker that does not parse is an
// error, so a typo cannot silently skip a snippet.
func Extract(path string) ([]Snippet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Snippet
	var cur *Snippet
	var closing, heading string
	var pending *Snippet // what the marker above the next fence said
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur != nil {
			if strings.HasPrefix(strings.TrimSpace(line), closing) && strings.Trim(strings.TrimSpace(line), closing[:1]) == "" {
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.Body += line + "\n"
			continue
		}
		if m := fence.FindStringSubmatch(line); m != nil {
			cur = &Snippet{File: path, Line: n, Lang: strings.ToLower(m[2]), Heading: heading}
			if pending != nil {
				cur.Skip, cur.Expect = pending.Skip, pending.Expect
				pending = nil
			}
			closing = m[1]
			continue
		}
		if m := marker.FindStringSubmatch(line); m != nil {
			p, err := parseMarker(m[1])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			pending = &p
			continue
		}
		if strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
		if pending != nil && strings.TrimSpace(line) != "" {
			return nil, fmt.Errorf("%s:%d: a snippet marker must be followed by its fence", path, n-1)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the fence is never closed", path, cur.Line)
	}
	return out, sc.Err()
}

func parseMarker(s string) (Snippet, error) {
	var p Snippet
	if m := skipRe.FindStringSubmatch(s); m != nil {
		p.Skip = strings.TrimSpace(m[1])
		return p, nil
	}
	rest := expectRe.ReplaceAllStringFunc(s, func(e string) string {
		p.Expect = append(p.Expect, strings.ReplaceAll(expectRe.FindStringSubmatch(e)[1], `\"`, `"`))
		return ""
	})
	if strings.TrimSpace(rest) != "" || len(p.Expect) == 0 {
		return p, fmt.Errorf("snippet marker %q: want skip (reason) or expect \"text\"", s)
	}
	return p, nil
}

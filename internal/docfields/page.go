package docfields

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Page is what the checks read of one Markdown file: its tables, its headings' anchors and
// its links. Fenced code blocks are skipped.
type Page struct {
	Path    string
	Tables  []Table
	Anchors map[string]bool
	Links   []Link
}

// Table is one pipe table: its header, its rows as cells, and the headings it sits under
// (outermost first).
type Table struct {
	Line     int
	Headings []string
	Header   []string
	Rows     []Row
}

// Row is a table row's cells.
type Row struct {
	Line  int
	Cells []string
}

// Link is a Markdown link's target as written.
type Link struct {
	Line   int
	Target string
}

var (
	fenceLine = regexp.MustCompile("^\\s*(```|~~~)")
	heading   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	delimiter = regexp.MustCompile(`^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$`)
	link      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	linkText  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	codeSpan  = regexp.MustCompile("`([^`]+)`")
)

// ReadPage reads path.
func ReadPage(path string) (*Page, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &Page{Path: path, Anchors: map[string]bool{}}
	var stack []string // headings by level: stack[i] is the level i+1 heading in force
	seen := map[string]int{}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	inFence := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fenceLine.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			level := len(m[1])
			if len(stack) > level-1 {
				stack = stack[:level-1]
			}
			for len(stack) < level-1 {
				stack = append(stack, "")
			}
			stack = append(stack, m[2])
			p.Anchors[anchor(m[2], seen)] = true
			continue
		}
		p.links(i+1, line)
		if strings.HasPrefix(strings.TrimSpace(line), "|") && i+1 < len(lines) && delimiter.MatchString(strings.TrimSpace(lines[i+1])) {
			t := Table{Line: i + 1, Headings: nonEmpty(stack), Header: cells(line)}
			i += 2
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				p.links(i+1, lines[i])
				t.Rows = append(t.Rows, Row{Line: i + 1, Cells: cells(lines[i])})
			}
			i--
			p.Tables = append(p.Tables, t)
		}
	}
	return p, nil
}

// links records the links of a line; a code span's text is not a link.
func (p *Page) links(n int, line string) {
	for _, l := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
		p.Links = append(p.Links, Link{Line: n, Target: l[1]})
	}
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// cells splits a table line at its pipes: not at an escaped one (\|) nor at one inside a
// code span, as GitHub reads tables.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	var out []string
	var cur strings.Builder
	inCode := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			cur.WriteByte(c)
		case c == '|' && !inCode:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}

// Under reports whether the table sits under a heading named section, at any level.
func (t *Table) Under(section string) bool {
	for _, h := range t.Headings {
		if h == section {
			return true
		}
	}
	return false
}

// Covers reports whether a row's first cell names name: one of its code spans is name, or
// starts with name and then a space, a dot, a colon, a bracket or an equals sign
// (`stream_options.include_usage` covers stream_options, `image`, `source.type: url` covers
// image). fold compares without case (headers).
func (r Row) Covers(name string, fold bool) bool {
	if len(r.Cells) == 0 {
		return false
	}
	for _, m := range codeSpan.FindAllStringSubmatch(r.Cells[0], -1) {
		span := m[1]
		if fold {
			span, name = strings.ToLower(span), strings.ToLower(name)
		}
		if span == name || strings.HasPrefix(span, name) && strings.ContainsRune(" .:[=", rune(span[len(name)])) {
			return true
		}
	}
	return false
}

// anchor is the id GitHub gives a heading: its text without markup, lower case, punctuation
// dropped, spaces as hyphens; a repeated one gets -1, -2, ...
func anchor(text string, seen map[string]int) string {
	text = linkText.ReplaceAllString(text, "$1") // [text](target) reads as its text
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	a := b.String()
	if n := seen[a]; n > 0 {
		seen[a] = n + 1
		return a + "-" + strconv.Itoa(n)
	}
	seen[a] = 1
	return a
}

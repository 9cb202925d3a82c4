package local

import (
	"slices"
	"strings"
)

// The built-in kinds, in config.LocalPII's order.
const (
	kindEmail = iota
	kindPhone
	kindCard
	kindIBAN
	kindAPIKey
	numBuiltins
)

var (
	builtinNames        = [numBuiltins]string{"email", "phone", "card", "iban", "api_key"}
	builtinPlaceholders = [numBuiltins]string{"[EMAIL]", "[PHONE]", "[CARD]", "[IBAN]", "[API_KEY]"}
)

func builtinKind(name string) (int, bool) {
	i := slices.Index(builtinNames[:], name)
	return i, i >= 0
}

// kindSet is a set of built-in kinds.
type kindSet uint8

func (k kindSet) has(kind int) bool { return k&(1<<kind) != 0 }

// span is an entity found at s[start:end].
type span struct {
	start, end int
	kind       uint8
}

// Mask returns text with every recognized entity replaced, and the kinds found; exported for
// the benchmark and fuzzing.
func (c *Checker) Mask(text string) (masked string, kinds []string) {
	// Most texts hold nothing: the candidates live in a buffer on the stack until there are
	// more of them than it holds.
	var buf [16]span
	spans := c.builtinSpans(text, buf[:0])
	for _, p := range c.patterns {
		spans = patternSpans(text, p, spans)
	}
	if len(spans) == 0 {
		return text, nil
	}
	spans = resolve(spans)
	return c.replace(text, spans), c.kindNames(spans)
}

// builtinSpans appends the built-ins' candidates in text to spans.
func (c *Checker) builtinSpans(text string, spans []span) []span {
	if c.builtins.has(kindEmail) {
		spans = emails(text, spans)
	}
	if c.builtins&^(1<<kindEmail) != 0 {
		spans = c.scan(text, spans)
	}
	return spans
}

// patternSpans appends the matches of an operator's pattern, leaving out empty ones (\b
// passes the config's check that a pattern does not match "", and matches nothing worth
// replacing) and those touching a placeholder, which must never be masked again.
func patternSpans(text string, p pattern, spans []span) []span {
	if !p.mayMatch(text) {
		return spans
	}
	for _, m := range p.re.FindAllStringIndex(text, -1) {
		if m[0] == m[1] || touchesPlaceholder(text, m[0], m[1]) {
			continue
		}
		spans = append(spans, span{start: m[0], end: m[1], kind: p.kind})
	}
	return spans
}

// touchesPlaceholder reports whether s[start:end] overlaps a placeholder.
func touchesPlaceholder(s string, start, end int) bool {
	// A placeholder overlapping the span has its '[' before end and its ']' after start.
	from := max(0, start-maxPlaceholder)
	for k := from; k < end; k++ {
		if s[k] == '[' && placeholderStartsAt(s, k) {
			close := k + strings.IndexByte(s[k:], ']')
			if close >= start {
				return true
			}
		}
	}
	return false
}

// resolve orders spans left to right and drops overlaps: of spans starting together the
// longest wins, and a span overlapping one already taken is dropped.
func resolve(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return b.end - a.end
		}
		return int(a.kind) - int(b.kind)
	})
	kept := spans[:0]
	end := 0
	for _, s := range spans {
		if s.start < end {
			continue
		}
		kept = append(kept, s)
		end = s.end
	}
	return kept
}

func (c *Checker) replace(text string, spans []span) string {
	var b strings.Builder
	b.Grow(len(text) + 16*len(spans))
	at := 0
	for _, s := range spans {
		b.WriteString(text[at:s.start])
		b.WriteString(c.placeholders[s.kind])
		at = s.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// kindNames are the sorted unique names of the spans' kinds.
func (c *Checker) kindNames(spans []span) []string {
	names := make([]string, 0, 2)
	for _, s := range spans {
		if n := c.names[s.kind]; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

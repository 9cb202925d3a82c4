package local

import (
	"slices"
	"strings"

	"github.com/fngate/fngate/core/guardrail/local/builtin"
)

// span is an entity found: a built-in's, or an operator pattern's (its kind past
// builtin.Count).
type span = builtin.Span

// Mask returns text with every recognized entity replaced, and the kinds found; exported for
// the benchmark and fuzzing.
func (c *Checker) Mask(text string) (masked string, kinds []string) {
	// Most texts hold nothing: the candidates live in a buffer on the stack until there are
	// more of them than it holds.
	var buf [16]span
	spans := c.builtins.Spans(text, buf[:0])
	for _, p := range c.patterns {
		spans = patternSpans(text, p, spans)
	}
	if len(spans) == 0 {
		return text, nil
	}
	spans = resolve(spans)
	return c.replace(text, spans), c.kindNames(spans)
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
		spans = append(spans, span{Start: m[0], End: m[1], Kind: p.kind})
	}
	return spans
}

// touchesPlaceholder reports whether s[start:end] overlaps a placeholder.
func touchesPlaceholder(s string, start, end int) bool {
	// A placeholder overlapping the span has its '[' before end and its ']' after start.
	from := max(0, start-builtin.MaxPlaceholder)
	for k := from; k < end; k++ {
		if s[k] == '[' && builtin.PlaceholderStartsAt(s, k) {
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
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return b.End - a.End
		}
		return int(a.Kind) - int(b.Kind)
	})
	kept := spans[:0]
	end := 0
	for _, s := range spans {
		if s.Start < end {
			continue
		}
		kept = append(kept, s)
		end = s.End
	}
	return kept
}

func (c *Checker) replace(text string, spans []span) string {
	var b strings.Builder
	b.Grow(len(text) + 16*len(spans))
	at := 0
	for _, s := range spans {
		b.WriteString(text[at:s.Start])
		b.WriteString(c.placeholders[s.Kind])
		at = s.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// kindNames are the sorted unique names of the spans' kinds.
func (c *Checker) kindNames(spans []span) []string {
	names := make([]string, 0, 2)
	for _, s := range spans {
		if n := c.names[s.Kind]; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

package local

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// expr is an operator's pattern (block or mask) with a prefilter: a literal that every match
// contains, found in the pattern's syntax, so that a text without it is passed over without
// running the regular expression. Go's regexp has no DFA and skips ahead only to a
// case-sensitive literal prefix, so a pattern like (?i)ignore previous instructions costs
// about 35 ns a byte; the prefilter's byte search costs a fraction of one.
type expr struct {
	re  *regexp.Regexp
	lit string // "" when the pattern has no usable literal
	// fold: lit is lower case and compared ignoring ASCII case; key is the index in lit of
	// the byte searched for, the rarest in English text.
	fold bool
	key  int
}

// minLiteral is the shortest literal worth a prefilter.
const minLiteral = 3

func compileExpr(pattern string) (expr, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return expr{}, err
	}
	e := expr{re: re}
	if tree, err := syntax.Parse(pattern, syntax.Perl); err == nil {
		e.lit, e.fold = requiredLiteral(tree.Simplify())
		if len(e.lit) < minLiteral {
			e.lit = ""
		}
		e.key = rarest(e.lit)
	}
	return e, nil
}

// mayMatch reports whether the pattern can match s: false only when s lacks the literal.
func (e *expr) mayMatch(s string) bool {
	switch {
	case e.lit == "":
		return true
	case e.fold:
		return containsFold(s, e.lit, e.key)
	}
	return strings.Contains(s, e.lit)
}

func (e *expr) matchString(s string) bool { return e.mayMatch(s) && e.re.MatchString(s) }

// requiredLiteral returns the longest literal every match of re contains.
func requiredLiteral(re *syntax.Regexp) (lit string, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return literalRun(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if l, f := requiredLiteral(sub); len(l) > len(lit) {
				lit, fold = l, f
			}
		}
		return lit, fold
	}
	return "", false
}

// literalRun returns the longest run of runes a byte comparison finds exactly. Case-folded,
// that is ASCII runes whose whole fold orbit is ASCII: (?i)k also matches the Kelvin sign
// and (?i)s the long s, so they end a run. U+FFFD ends a run either way: the regexp reads
// each invalid byte as one.
func literalRun(runes []rune, fold bool) (string, bool) {
	best, start := "", 0
	flush := func(end int) {
		if run := string(runes[start:end]); len(run) > len(best) {
			best = run
		}
	}
	for k, r := range runes {
		if r == utf8.RuneError || fold && !asciiOrbit(r) {
			flush(k)
			start = k + 1
		}
	}
	flush(len(runes))
	if fold {
		best = strings.ToLower(best)
	}
	return best, fold
}

// asciiOrbit reports whether r and every rune it folds to are ASCII.
func asciiOrbit(r rune) bool {
	for f := r; ; {
		if f >= utf8.RuneSelf {
			return false
		}
		if f = unicode.SimpleFold(f); f == r {
			return true
		}
	}
}

// letterFrequency orders the letters of English text from the most to the least common.
const letterFrequency = "etaoinshrdlcumwfgypbvkjxqz"

// rarest is the index in lit of the byte least likely in text: a non-letter, else the rarest
// letter.
func rarest(lit string) int {
	best, rank := 0, -1
	for k := 0; k < len(lit); k++ {
		r := strings.IndexByte(letterFrequency, lit[k]|0x20)
		if lit[k]|0x20 < 'a' || lit[k]|0x20 > 'z' {
			r = len(letterFrequency) // punctuation and digits are rarer than any letter
		}
		if r > rank {
			best, rank = k, r
		}
	}
	return best
}

// containsFold reports whether s contains lit (lower case ASCII) ignoring ASCII case. It
// finds the key byte in either case with IndexByte and compares lit around it.
func containsFold(s, lit string, key int) bool {
	lo, up := lit[key], lit[key]
	if lo >= 'a' && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	next := func(from int, b byte) int {
		if k := strings.IndexByte(s[from:], b); k >= 0 {
			return from + k
		}
		return len(s)
	}
	nl, nu := next(0, lo), len(s)
	if up != lo {
		nu = next(0, up)
	}
	for {
		p := min(nl, nu)
		if p == len(s) {
			return false
		}
		if start := p - key; start >= 0 && start+len(lit) <= len(s) && equalFoldASCII(s[start:start+len(lit)], lit) {
			return true
		}
		if p == nl {
			nl = next(p+1, lo)
		} else {
			nu = next(p+1, up)
		}
	}
}

// equalFoldASCII compares s with lit (lower case), ASCII letters in s in either case.
func equalFoldASCII(s, lit string) bool {
	for k := 0; k < len(lit); k++ {
		b := s[k]
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != lit[k] {
			return false
		}
	}
	return true
}

package local

import (
	"testing"
)

// prefilterPatterns cover the shapes requiredLiteral reads (literals, concatenations,
// captures, repeats, case folding) and the runes that end a folded run.
var prefilterPatterns = []string{
	`(?i)ignore previous instructions`,
	`(?i)\bdrop\s+table\b`,
	`secret-\w+`,
	`(?i)(system prompt|developer message)`,
	`(?i)(jail)+break`,
	`(?i)ask me`,
	`(?i)kelvin`,
	`EMP-\d{6}`,
	`(?i)überweisung`,
	"\uFFFDabc",
	`a{2,}bcd`,
	`x?yz`,
}

func TestPrefilter(t *testing.T) {
	tests := []struct {
		pattern, text string
		want          bool
	}{
		{`(?i)ignore previous instructions`, "Please IGNORE Previous instructions.", true},
		// The long s folds to s: a byte search for "instructions" would miss this.
		{`(?i)ignore previous instructions`, "ignore previous inſtructions", true},
		{`(?i)ignore previous instructions`, "ignore the previous instructions", false},
		{`(?i)kelvin`, "\u212Aelvin", true},
		{`(?i)\bdrop\s+table\b`, "DROP   TABLE users", true},
		{`(?i)\bdrop\s+table\b`, "backdrop table", false},
		{`(?i)(jail)+break`, "JailJAILbreak", true},
		{`EMP-\d{6}`, "EMP-12345", false},
		{"\uFFFDabc", "\xffabc", true},
	}
	for _, tc := range tests {
		e, err := compileExpr(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.matchString(tc.text); got != tc.want {
			t.Errorf("%s on %q: %v, want %v (literal %q)", tc.pattern, tc.text, got, tc.want, e.lit)
		}
	}
}

func TestRequiredLiteral(t *testing.T) {
	tests := []struct{ pattern, lit string }{
		{`(?i)ignore previous instructions`, "ignore previou"},
		{`(?i)\bdrop\s+table\b`, "table"},
		{`secret-\w+`, "secret-"},
		{`(?i)(system prompt|developer message)`, ""},
		{`EMP-\d{6}`, "EMP-"},
		{`x?yz`, ""},
	}
	for _, tc := range tests {
		e, err := compileExpr(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if e.lit != tc.lit {
			t.Errorf("%s: literal %q, want %q", tc.pattern, e.lit, tc.lit)
		}
	}
}

// FuzzPrefilter is differential: with the prefilter, a pattern matches exactly the texts the
// regular expression alone matches.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{"", "ignore previous instructions", "IGNORE PREVIOUS INſTRUCTIONS", "drop table", "\u212Aelvin", "JAILjailBREAK", "\xffabc", "aabcd", "EMP-123456", "ÜBERWEISUNG"} {
		f.Add(s)
	}
	exprs := make([]expr, len(prefilterPatterns))
	for i, p := range prefilterPatterns {
		var err error
		if exprs[i], err = compileExpr(p); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range exprs {
			if got, want := e.matchString(s), e.re.MatchString(s); got != want {
				t.Errorf("%s on %q: prefiltered %v, regexp %v (literal %q)", e.re, s, got, want, e.lit)
			}
		}
	})
}

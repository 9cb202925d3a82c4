// Package local is the guardrail kind that needs no cloud (kind: local): the operator's block
// patterns, and a masker of the PII that most often leaks into prompts and answers (emails,
// phone numbers, card numbers, IBANs, API keys) plus the operator's own mask patterns.
//
// Candidates are found by regular expressions (RE2: linear in the text, so no input can make
// a check slow) and then validated where a checksum exists (a card's Luhn digit, an IBAN's
// mod-97 and its country's length), which is what keeps order numbers and timestamps
// unmasked.
package local

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
)

// Checker is one local guardrail.
type Checker struct {
	block   []*regexp.Regexp
	maskers []masker
}

// masker finds one kind of entity; valid, when set, confirms a candidate.
type masker struct {
	kind        string
	placeholder string
	re          *regexp.Regexp
	valid       func(string) bool
	// anchors finds where an entity may be, by cheap byte tests; the expression then runs
	// only on the lines around them. Nil runs it on the whole text (operator patterns).
	anchors func(text string, at []int) []int
}

var builtins = map[string]masker{
	"email": {kind: "email", placeholder: "[EMAIL]", anchors: byteAnchors('@'),
		re: regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9._%+-]{0,63}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.[a-z]{2,24}\b`)},
	"card": {kind: "card", placeholder: "[CARD]", anchors: digitAnchors,
		re: regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`), valid: luhn},
	"iban": {kind: "iban", placeholder: "[IBAN]", anchors: digitAnchors,
		re: regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b`), valid: iban},
	"phone": {kind: "phone", placeholder: "[PHONE]", anchors: digitAnchors,
		re:    regexp.MustCompile(`(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\b\d{3}[.-]\d{3}[.-]\d{4})\b`),
		valid: phone},
	"api_key": {kind: "api_key", placeholder: "[API_KEY]", anchors: prefixAnchors("sk-", "sk_live_", "rk_live_", "AKIA", "ASIA", "gh", "github_pat_", "glpat-", "xox", "AIza", "eyJ"),
		re: regexp.MustCompile(`\b(?:sk-(?:ant-|proj-|fngate-)?[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|glpat-[A-Za-z0-9_-]{20,}|xox[abpors]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|(?:sk|rk)_live_[A-Za-z0-9]{24,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})`)},
}

// New compiles g, a validated local guardrail.
func New(g *config.Guardrail) (*Checker, error) {
	c := &Checker{}
	for _, p := range g.Block {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		c.block = append(c.block, re)
	}
	// Keys before cards and phones: a key's digits must not be taken for a number.
	for _, kind := range []string{"api_key", "email", "iban", "card", "phone"} {
		if slices.Contains(g.Mask, kind) {
			c.maskers = append(c.maskers, builtins[kind])
		}
	}
	names := make([]string, 0, len(g.MaskPatterns))
	for n := range g.MaskPatterns {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		re, err := regexp.Compile(g.MaskPatterns[n])
		if err != nil {
			return nil, err
		}
		c.maskers = append(c.maskers, masker{kind: n, placeholder: "[" + strings.ToUpper(n) + "]", re: re})
	}
	return c, nil
}

// Check blocks a text a block pattern matches, else masks what the maskers find.
func (c *Checker) Check(_ context.Context, _ guardrail.Source, texts []string) (guardrail.Verdict, error) {
	for i, re := range c.block {
		for _, t := range texts {
			if re.MatchString(t) {
				return guardrail.Verdict{Action: guardrail.Block, Categories: []string{"block[" + itoa(i) + "]"}}, nil
			}
		}
	}
	var masked []string
	var kinds []string
	for i, t := range texts {
		m, found := c.Mask(t)
		if len(found) == 0 {
			continue
		}
		if masked == nil {
			masked = slices.Clone(texts)
		}
		masked[i] = m
		for _, k := range found {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	if masked == nil {
		return guardrail.Verdict{Action: guardrail.Pass}, nil
	}
	sort.Strings(kinds)
	return guardrail.Verdict{Action: guardrail.Mask, Masked: masked, Categories: kinds}, nil
}

// Mask returns text with every recognized entity replaced by its placeholder, and the kinds
// found. Placeholders match no masker, so masking again changes nothing.
func (c *Checker) Mask(text string) (string, []string) {
	var kinds []string
	var at []int
	for _, m := range c.maskers {
		var hit bool
		if m.anchors == nil {
			text, hit = m.replace(text)
		} else {
			at = m.anchors(text, at[:0])
			if len(at) == 0 {
				continue
			}
			text, hit = m.replaceNear(text, at)
		}
		if hit {
			kinds = append(kinds, m.kind)
		}
	}
	return text, kinds
}

func (m *masker) replace(text string) (string, bool) {
	if !m.re.MatchString(text) {
		return text, false
	}
	hit := false
	text = m.re.ReplaceAllStringFunc(text, func(s string) string {
		if m.valid != nil && !m.valid(s) {
			return s
		}
		hit = true
		return m.placeholder
	})
	return text, hit
}

// maxReach bounds how far from an anchor a line is searched: no entity is longer.
const maxReach = 512

// replaceNear replaces on the lines around each anchor (at most maxReach either side): a
// long history with one email costs one line's search, not the whole text's.
func (m *masker) replaceNear(text string, at []int) (string, bool) {
	var b strings.Builder
	hit, last, end := false, 0, 0
	for _, p := range at {
		if p < end {
			continue
		}
		start := max(last, p-maxReach)
		if i := strings.LastIndexByte(text[start:p], '\n'); i >= 0 {
			start += i + 1
		}
		end = min(len(text), p+maxReach)
		if i := strings.IndexByte(text[p:end], '\n'); i >= 0 {
			end = p + i
		}
		seg, h := m.replace(text[start:end])
		if !h {
			continue
		}
		if !hit {
			b.Grow(len(text))
		}
		hit = true
		b.WriteString(text[last:start])
		b.WriteString(seg)
		last = end
	}
	if !hit {
		return text, false
	}
	b.WriteString(text[last:])
	return b.String(), true
}

func byteAnchors(c byte) func(string, []int) []int {
	return func(text string, at []int) []int {
		for i := 0; ; {
			j := strings.IndexByte(text[i:], c)
			if j < 0 {
				return at
			}
			at = append(at, i+j)
			i += j + 1
		}
	}
}

func prefixAnchors(prefixes ...string) func(string, []int) []int {
	return func(text string, at []int) []int {
		for _, p := range prefixes {
			for i := 0; ; {
				j := strings.Index(text[i:], p)
				if j < 0 {
					break
				}
				at = append(at, i+j)
				i += j + len(p)
			}
		}
		slices.Sort(at)
		return at
	}
}

// digitAnchors are the starts of digit runs with at least ten digits among the next 48
// characters: what a card, an IBAN's digits or a phone number needs.
func digitAnchors(text string, at []int) []int {
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' || i > 0 && text[i-1] >= '0' && text[i-1] <= '9' {
			continue
		}
		n := 0
		for j := i; j < len(text) && j < i+48; j++ {
			if text[j] >= '0' && text[j] <= '9' {
				n++
			}
		}
		if n >= 10 {
			at = append(at, i)
		}
	}
	return at
}

func digits(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			out = append(out, s[i]-'0')
		}
	}
	return out
}

// luhn is the check digit of card numbers (ISO/IEC 7812). A run of one repeated digit passes
// it (0000 0000 0000 0000) but is no card.
func luhn(s string) bool {
	d := digits(s)
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	same := true
	sum := 0
	for i := range d {
		same = same && d[i] == d[0]
		v := int(d[len(d)-1-i])
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return !same && sum%10 == 0
}

// ibanLengths are the IBAN lengths of the ISO 13616 registry's countries (SWIFT's IBAN
// registry).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
	"MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
	"RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// iban checks an IBAN's country length and its mod-97 check digits (ISO 13616).
func iban(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if n, ok := ibanLengths[s[:2]]; !ok || n != len(s) {
		return false
	}
	r := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			r = (r*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return r == 1
}

// phone keeps numbers with the digits of a phone number (7 to 15, E.164's most) that are not
// dates or card numbers.
func phone(s string) bool {
	d := digits(s)
	return len(d) >= 10 && len(d) <= 15 && !luhnCardLength(s)
}

func luhnCardLength(s string) bool { d := digits(s); return len(d) >= 13 && luhn(s) }

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

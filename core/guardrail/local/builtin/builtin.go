// Package builtin is the local guardrail's built-in recognizers (emails, phone numbers, card
// numbers, IBANs, API keys) and the rules of the names and placeholders beside them. It is a
// leaf (the standard library only), so core/config checks a local guardrail at load with
// the very code that masks, and local.New has nothing left to refuse.
//
//	builtin.go   the kinds, Set.Spans, and the rules of pattern names config and local share
//	scan.go      the scanner: one pass that finds candidates by cheap byte tests
//	bytes.go     byte classes and the word boundaries every recognizer shares
//	card.go      card numbers (Luhn, brand prefixes)
//	iban.go      IBANs (the registry's lengths, mod 97)
//	email.go     email addresses
//	phone.go     phone numbers (E.164 with +, NANP national formats)
//	apikey.go    API keys, tokens and PEM private keys
package builtin

import (
	"fmt"
	"slices"
	"strings"
)

// The built-in kinds, in Names' order.
const (
	Email = iota
	Phone
	Card
	IBAN
	APIKey
	Count
)

var (
	// Names are the built-ins as mask: names them.
	Names = [Count]string{"email", "phone", "card", "iban", "api_key"}
	// Placeholders replace what each built-in finds.
	Placeholders = [Count]string{"[EMAIL]", "[PHONE]", "[CARD]", "[IBAN]", "[API_KEY]"}
)

// Kind is the built-in named name.
func Kind(name string) (int, bool) {
	i := slices.Index(Names[:], name)
	return i, i >= 0
}

// Set is a set of built-in kinds.
type Set uint8

// Has reports whether kind is in the set.
func (k Set) Has(kind int) bool { return k&(1<<kind) != 0 }

// SetOf is the set of the built-ins named; ok false names the first unknown one.
func SetOf(names []string) (s Set, unknown string) {
	for _, n := range names {
		k, ok := Kind(n)
		if !ok {
			return 0, n
		}
		s |= 1 << k
	}
	return s, ""
}

// Span is an entity found at s[Start:End], of kind Kind (a built-in's, or past Count one
// that the caller numbers).
type Span struct {
	Start, End int
	Kind       uint8
}

// Spans appends the candidates in text of the set's built-ins to spans.
func (k Set) Spans(text string, spans []Span) []Span {
	if k.Has(Email) {
		spans = emails(text, spans)
	}
	if k&^(1<<Email) != 0 {
		spans = k.scan(text, spans)
	}
	return spans
}

// MaxPatterns bounds a guardrail's mask_patterns: kind indexes are a uint8 beside the
// built-ins.
const MaxPatterns = 200

// validName reports whether n may name a mask pattern, [a-z][a-z0-9_]{0,31}: its placeholder
// is it upper-cased in brackets, which the masker recognizes as a placeholder
// ([A-Z][A-Z0-9_]*]) and bytes.go bounds in length. (No regular expression: this package is
// initialized on every cold start that loads a config.)
func validName(n string) bool {
	if n == "" || len(n) > 32 || n[0]-'a' >= 26 {
		return false
	}
	for i := 1; i < len(n); i++ {
		if b := n[i]; b-'a' >= 26 && b-'0' >= 10 && b != '_' {
			return false
		}
	}
	return true
}

// Placeholder is what replaces a match of the mask pattern named name.
func Placeholder(name string) string { return "[" + strings.ToUpper(name) + "]" }

// CheckPatterns checks the names of a guardrail's mask patterns beside the built-ins it
// masks (mask, already known to be built-ins): at most MaxPatterns, and each one CheckName
// allows. The error names the first that is refused.
func CheckPatterns(mask []string, names []string) error {
	if len(names) > MaxPatterns {
		return fmt.Errorf("at most %d mask_patterns, got %d", MaxPatterns, len(names))
	}
	set, _ := SetOf(mask)
	for _, n := range names {
		if err := set.CheckName(n); err != nil {
			return fmt.Errorf("mask_patterns.%s: %w", n, err)
		}
	}
	return nil
}

// CheckName checks the name of a mask pattern beside the set's built-ins: a valid name, not a
// built-in's, and not one whose placeholder a built-in would mask again (a pattern named
// akia0123456789abcdef beside api_key: [AKIA0123456789ABCDEF] is an AWS key id's shape, and
// masking must be idempotent).
func (k Set) CheckName(name string) error {
	if !validName(name) || slices.Contains(Names[:], name) {
		return fmt.Errorf("a pattern name is a lower-case letter, then lower-case letters, digits and '_' (at most 32), and not one of the built-in %s", strings.Join(Names[:], ", "))
	}
	p := Placeholder(name)
	if found := k.Spans(p, nil); len(found) > 0 {
		return fmt.Errorf("its placeholder %s would itself be masked as %s; rename the pattern", p, Names[found[0].Kind])
	}
	return nil
}

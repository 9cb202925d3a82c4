// Package local is the guardrail kind that needs no cloud (kind: local): the operator's block
// patterns, and a masker for the PII and secrets that most often leak into prompts and
// answers (emails, phone numbers, card numbers, IBANs, API keys) plus the operator's own
// mask patterns.
//
//	local.go      Checker: New compiles a config.Guardrail, Check gives a verdict
//	mask.go       Mask: candidates found, overlaps resolved, placeholders written
//	scan.go       the scanner: one pass that finds candidates by cheap byte tests
//	bytes.go      byte classes and the word boundaries every recognizer shares
//	card.go       card numbers (Luhn, brand prefixes)
//	iban.go       IBANs (the registry's lengths, mod 97)
//	email.go      email addresses
//	phone.go      phone numbers (E.164 with +, NANP national formats)
//	apikey.go     API keys, tokens and PEM private keys
//	prefilter.go  operator patterns, passed over when a text lacks their literal
//
// The built-ins are hand-written recognizers rather than regular expressions: this runs on
// every request's text (histories of 100+ KB), and a scanner that looks only at word starts
// and a few trigger bytes costs a fraction of running five regular expressions over it, with
// no allocation when nothing matches. Operator patterns (mask_patterns, block) are RE2,
// run only on texts that hold the literal every match needs.
package local

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
)

// Checker is a compiled local guardrail. It holds no mutable state, so it is safe for
// concurrent use.
type Checker struct {
	block    []expr
	builtins kindSet
	patterns []pattern
	// names are the kind names by kind index: the built-ins, then the operator's patterns.
	names []string
	// placeholders are the replacement texts by kind index: "[EMAIL]", "[EMPLOYEE_ID]".
	placeholders []string
}

// pattern is one of the operator's mask patterns.
type pattern struct {
	expr
	kind uint8
}

var _ guardrail.Checker = (*Checker)(nil)

// New compiles g (a validated config.Guardrail of kind local).
func New(g *config.Guardrail) (*Checker, error) {
	if g == nil {
		return nil, fmt.Errorf("local guardrail: no configuration")
	}
	c := &Checker{
		names:        slices.Clone(builtinNames[:]),
		placeholders: slices.Clone(builtinPlaceholders[:]),
	}
	for _, name := range g.Mask {
		k, ok := builtinKind(name)
		if !ok {
			return nil, fmt.Errorf("local guardrail %s: mask: unknown kind %q (known: %s)", g.Name, name, strings.Join(builtinNames[:], ", "))
		}
		c.builtins |= 1 << k
	}
	// Sorted, so that kind indexes (and so the order of equal-length overlaps) do not depend
	// on map order.
	names := make([]string, 0, len(g.MaskPatterns))
	for name := range g.MaskPatterns {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) > maxPatterns {
		return nil, fmt.Errorf("local guardrail %s: at most %d mask_patterns, got %d", g.Name, maxPatterns, len(names))
	}
	for _, name := range names {
		e, err := compileExpr(g.MaskPatterns[name])
		if err != nil {
			return nil, fmt.Errorf("local guardrail %s: mask_patterns.%s: %w", g.Name, name, err)
		}
		c.patterns = append(c.patterns, pattern{expr: e, kind: uint8(len(c.names))})
		c.names = append(c.names, name)
		c.placeholders = append(c.placeholders, "["+strings.ToUpper(name)+"]")
	}
	for i, pattern := range g.Block {
		e, err := compileExpr(pattern)
		if err != nil {
			return nil, fmt.Errorf("local guardrail %s: block[%d]: %w", g.Name, i, err)
		}
		c.block = append(c.block, e)
	}
	// Masking must be idempotent: a placeholder the built-ins would recognize
	// ([AKIA0123456789ABCDEF] from a pattern named akia0123456789abcdef) would be masked again.
	for _, p := range c.placeholders {
		if found := c.builtinSpans(p, nil); len(found) > 0 {
			return nil, fmt.Errorf("local guardrail %s: the placeholder %s would itself be masked as %s; rename the pattern", g.Name, p, c.names[found[0].kind])
		}
	}
	return c, nil
}

// maxPatterns keeps kind indexes in a uint8 beside the built-ins.
const maxPatterns = 200

// Check blocks when a block pattern matches any text, else masks what the masker recognizes.
// The work is bounded by the texts' length, so ctx is looked at between texts only.
func (c *Checker) Check(ctx context.Context, src guardrail.Source, texts []string) (guardrail.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return guardrail.Verdict{}, err
	}
	for i := range c.block {
		for _, t := range texts {
			if c.block[i].matchString(t) {
				return guardrail.Verdict{Action: guardrail.Block, Categories: []string{fmt.Sprintf("block[%d]", i)}}, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return guardrail.Verdict{}, err
		}
	}
	var masked, categories []string
	for i, t := range texts {
		m, kinds := c.Mask(t)
		if kinds != nil && masked == nil {
			masked = make([]string, len(texts))
			copy(masked, texts[:i])
		}
		if masked != nil {
			masked[i] = m
		}
		categories = append(categories, kinds...)
		if err := ctx.Err(); err != nil {
			return guardrail.Verdict{}, err
		}
	}
	if masked == nil {
		return guardrail.Verdict{Action: guardrail.Pass}, nil
	}
	slices.Sort(categories)
	return guardrail.Verdict{Action: guardrail.Mask, Masked: masked, Categories: slices.Compact(categories)}, nil
}

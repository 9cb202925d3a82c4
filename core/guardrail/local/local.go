// Package local is the guardrail kind that needs no cloud (kind: local): the operator's block
// patterns, and a masker for the PII and secrets that most often leak into prompts and
// answers (emails, phone numbers, card numbers, IBANs, API keys) plus the operator's own
// mask patterns.
//
//	local.go      Checker: New compiles a config.Guardrail, Check gives a verdict
//	mask.go       Mask: candidates found, overlaps resolved, placeholders written
//	prefilter.go  operator patterns, passed over when a text lacks their literal
//	builtin/      the built-in recognizers, and the rules of pattern names config checks
//	              with them at load (a leaf package, so config may import it)
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
	"github.com/fngate/fngate/core/guardrail/local/builtin"
)

// Checker is a compiled local guardrail. It holds no mutable state, so it is safe for
// concurrent use.
type Checker struct {
	block    []expr
	builtins builtin.Set
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
		names:        slices.Clone(builtin.Names[:]),
		placeholders: slices.Clone(builtin.Placeholders[:]),
	}
	builtins, unknown := builtin.SetOf(g.Mask)
	if unknown != "" {
		return nil, fmt.Errorf("local guardrail %s: mask: unknown kind %q (known: %s)", g.Name, unknown, strings.Join(builtin.Names[:], ", "))
	}
	c.builtins = builtins
	// Sorted, so that kind indexes (and so the order of equal-length overlaps) do not depend
	// on map order.
	names := make([]string, 0, len(g.MaskPatterns))
	for name := range g.MaskPatterns {
		names = append(names, name)
	}
	sort.Strings(names)
	// Config validation checked this already (the same rule); a Guardrail built by hand
	// is checked here.
	if err := builtin.CheckPatterns(g.Mask, names); err != nil {
		return nil, fmt.Errorf("local guardrail %s: %w", g.Name, err)
	}
	for _, name := range names {
		e, err := compileExpr(g.MaskPatterns[name])
		if err != nil {
			return nil, fmt.Errorf("local guardrail %s: mask_patterns.%s: %w", g.Name, name, err)
		}
		c.patterns = append(c.patterns, pattern{expr: e, kind: uint8(len(c.names))})
		c.names = append(c.names, name)
		c.placeholders = append(c.placeholders, builtin.Placeholder(name))
	}
	for i, pattern := range g.Block {
		e, err := compileExpr(pattern)
		if err != nil {
			return nil, fmt.Errorf("local guardrail %s: block[%d]: %w", g.Name, i, err)
		}
		c.block = append(c.block, e)
	}
	return c, nil
}

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

package config_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

const guardModels = `
connections:
  mock: {kind: mock}
models:
  m:
    routes:
      - {connection: mock, model: echo}
`

func parseGuard(yaml string) (*config.Config, error) {
	return config.Parse(context.Background(), []byte(guardModels+yaml), config.Options{Getenv: func(string) string { return "" }})
}

// manyPatterns is a local guardrail's mask_patterns with n of them.
func manyPatterns(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "p%d: 'x%dy', ", i, i)
	}
	return "{" + strings.TrimSuffix(b.String(), ", ") + "}"
}

// TestGuardrailConfigRefusals: what the config refuses at load, each with a message naming
// the setting; among them the local masker's own rules of pattern names (one rule, checked
// here and by local.New), which before were refused only when the gateway built the guardrail.
func TestGuardrailConfigRefusals(t *testing.T) {
	for _, tc := range []struct{ name, yaml, says string }{
		{"a placeholder a built-in masks again", "guardrails:\n  pii: {kind: local, mask: [api_key], mask_patterns: {akia0123456789abcdef: 'x+y'}}\n",
			"guardrails.pii.mask_patterns.akia0123456789abcdef: its placeholder [AKIA0123456789ABCDEF] would itself be masked as api_key"},
		{"a placeholder shaped as an IBAN", "guardrails:\n  pii: {kind: local, mask: [iban], mask_patterns: {de89370400440532013000: 'x+y'}}\n",
			"would itself be masked as iban"},
		{"more patterns than the masker numbers", "guardrails:\n  pii: {kind: local, mask_patterns: " + manyPatterns(201) + "}\n",
			"guardrails.pii.mask_patterns: at most 200 patterns, got 201"},
		{"a pattern named as a built-in", "guardrails:\n  pii: {kind: local, mask_patterns: {email: 'x+y'}}\n", "guardrails.pii.mask_patterns.email: a pattern name is"},
		{"a pattern name upper-cased", "guardrails:\n  pii: {kind: local, mask_patterns: {Employee: 'x+y'}}\n", "guardrails.pii.mask_patterns.Employee: a pattern name is"},
		{"a pattern name starting with a digit", "guardrails:\n  pii: {kind: local, mask_patterns: {1x: 'x+y'}}\n", "guardrails.pii.mask_patterns.1x: a pattern name is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseGuard(tc.yaml)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v\nwant an error saying %q", err, tc.says)
			}
		})
	}
}

// TestGuardrailConfigAccepted: shapes the config takes, defaults filled.
func TestGuardrailConfigAccepted(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		check      func(*config.Config) error
	}{
		{"a placeholder no built-in it masks recognizes", "guardrails:\n  pii: {kind: local, mask: [email], mask_patterns: {akia0123456789abcdef: 'x+y'}}\n", nil},
		{"200 patterns", "guardrails:\n  pii: {kind: local, mask_patterns: " + manyPatterns(200) + "}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseGuard(tc.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				if err := tc.check(cfg); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

package config_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// parseGuard parses yaml with a mock connection, and a model when yaml has none.
func parseGuard(yaml string) (*config.Config, error) {
	yaml = "connections:\n  mock: {kind: mock}\n" + yaml
	if !strings.Contains(yaml, "\nmodels:") {
		yaml += "models:\n  m: {routes: [{connection: mock, model: echo}]}\n"
	}
	return config.Parse(context.Background(), []byte(yaml), config.Options{Getenv: func(string) string { return "" }})
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
		{"an unknown kind", "guardrails:\n  g: {kind: azure}\n", "guardrails.g.kind must be local, bedrock or model-armor"},
		{"a local guardrail checking nothing", "guardrails:\n  g: {kind: local}\n", "guardrails.g: a local guardrail needs mask, mask_patterns or block"},
		{"an unknown built-in", "guardrails:\n  g: {kind: local, mask: [ssn]}\n", `guardrails.g.mask[0] must be one of email, phone, card, iban, api_key, got "ssn"`},
		{"a pattern matching everything", "guardrails:\n  g: {kind: local, block: ['x*']}\n", "matches the empty string"},
		{"another kind's setting", "guardrails:\n  g: {kind: local, block: [x], template: t}\n", "guardrails.g.template is not a setting of a local guardrail"},
		{"bedrock without id", "guardrails:\n  g: {kind: bedrock, version: '1'}\n", "guardrails.g.id is required"},
		{"bedrock without version", "guardrails:\n  g: {kind: bedrock, id: gr-1}\n", "guardrails.g.version is required"},
		{"model armor template not a full name", "guardrails:\n  g: {kind: model-armor, template: t}\n", "guardrails.g.template must be a template's full name"},
		{"model armor mask without deidentify_template", "guardrails:\n  g: {kind: model-armor, template: projects/p/locations/l/templates/t}\nmodels:\n  a: {guardrails: [{name: g, mode: mask}], routes: [{connection: mock, model: echo}]}\n",
			"models.a.guardrails[0].mode: Model Armor masks only through a Sensitive Data Protection de-identify template; set guardrails.g.deidentify_template"},
		{"mask on a local guardrail masking nothing", "guardrails:\n  g: {kind: local, block: [x]}\nmodels:\n  a: {guardrails: [{name: g, mode: mask}], routes: [{connection: mock, model: echo}]}\n",
			"models.a.guardrails[0].mode: guardrail g masks nothing"},
		{"on_error", "guardrails:\n  g: {kind: local, block: [x], on_error: maybe}\n", "guardrails.g.on_error must be open or closed"},
		{"timeout", "guardrails:\n  g: {kind: local, block: [x], timeout: 1h}\n", "guardrails.g.timeout must be between 0"},
		{"window", "guardrails:\n  g: {kind: local, block: [x], stream_window: 5}\n", "guardrails.g.stream_window must be between"},
		{"overlap not less than the window", "guardrails:\n  g: {kind: local, block: [x], stream_window: 200, stream_overlap: 200}\n", "guardrails.g.stream_overlap must be at least 0 and less than stream_window"},
		{"an unknown guardrail on a model", "guardrails:\n  g: {kind: local, block: [x]}\nmodels:\n  a: {guardrails: [{name: nope}], routes: [{connection: mock, model: echo}]}\n",
			`models.a.guardrails[0].name: no guardrail "nope" is defined (guardrails: g)`},
		{"an unknown guardrail on a key", "guardrails:\n  g: {kind: local, block: [x]}\nkeys:\n  - {name: k, value: sk-k, guardrails: [{name: nope}]}\n",
			`keys[0].guardrails[0].name: no guardrail "nope" is defined`},
		{"an unknown guardrail in key_defaults", "guardrails:\n  g: {kind: local, block: [x]}\nkeys:\n  - {name: k, value: sk-k}\nkey_defaults: {guardrails: [{name: nope}]}\n",
			`key_defaults.guardrails[0].name: no guardrail "nope" is defined`},
		{"a guardrail when none is defined", "models:\n  a: {guardrails: [{name: nope}], routes: [{connection: mock, model: echo}]}\n",
			`models.a.guardrails[0].name: no guardrail "nope" is defined (the config defines no guardrails)`},
		{"a bad on", "guardrails:\n  g: {kind: local, block: [x]}\nmodels:\n  a: {guardrails: [{name: g, on: sideways}], routes: [{connection: mock, model: echo}]}\n", "models.a.guardrails[0].on must be input, output or both"},
		{"a bad mode", "guardrails:\n  g: {kind: local, block: [x]}\nmodels:\n  a: {guardrails: [{name: g, mode: shout}], routes: [{connection: mock, model: echo}]}\n", "models.a.guardrails[0].mode must be block, mask or log"},
		{"an unknown setting of a use", "guardrails:\n  g: {kind: local, block: [x]}\nmodels:\n  a: {guardrails: [{name: g, window: 3}], routes: [{connection: mock, model: echo}]}\n", "models.a.guardrails[0].window is not a setting of a guardrail's use"},
		{"output on an embedding model", "guardrails:\n  g: {kind: local, block: [x]}\nmodels:\n  e: {kind: embedding, dimensions: 8, guardrails: [{name: g, on: both}], routes: [{connection: mock, model: embed}]}\n", "an embedding model has no text output to check"},
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
		{"the contract's three kinds, defaults filled", `
guardrails:
  pii: {kind: local, mask: [email, phone, card, iban, api_key], block: ["(?i)ignore previous instructions"]}
  bedrock-standard: {kind: bedrock, id: gr-123, version: "1", region: us-east-1, on_error: closed}
  armor: {kind: model-armor, template: projects/p/locations/us-central1/templates/t, deidentify_template: projects/p/locations/us-central1/deidentifyTemplates/d, on_error: open, timeout: 500ms, stream_window: 400, stream_overlap: 100}
keys:
  - {name: k, value: sk-k, guardrails: [{name: bedrock-standard, on: output, mode: log}]}
key_defaults: {guardrails: [{name: armor, on: input, mode: mask}]}
models:
  a: {guardrails: [{name: pii}], routes: [{connection: mock, model: echo}]}
  e: {kind: embedding, dimensions: 8, guardrails: [{name: pii, mode: mask}], routes: [{connection: mock, model: embed}]}
`, func(c *config.Config) error {
			pii, armor := c.Guardrails["pii"], c.Guardrails["armor"]
			w, o := armor.Window()
			switch {
			case c.Models["a"].Guardrails[0] != (config.GuardrailUse{Name: "pii", On: "both", Mode: "block"}):
				return fmt.Errorf("model use %+v: want on both, mode block", c.Models["a"].Guardrails[0])
			case c.Models["e"].Guardrails[0].On != "input":
				return fmt.Errorf("embedding use %+v: want on input", c.Models["e"].Guardrails[0])
			case c.Keys[0].Guardrails[0] != (config.GuardrailUse{Name: "bedrock-standard", On: "output", Mode: "log"}):
				return fmt.Errorf("key use %+v", c.Keys[0].Guardrails[0])
			case c.KeyDefaults.Guardrails[0] != (config.GuardrailUse{Name: "armor", On: "input", Mode: "mask"}):
				return fmt.Errorf("key_defaults use %+v", c.KeyDefaults.Guardrails[0])
			case pii.Open() || pii.TimeoutOrDefault() != config.DefaultGuardrailTimeout || pii.Name != "pii":
				return fmt.Errorf("pii: %+v", pii)
			case !armor.Open() || armor.TimeoutOrDefault().String() != "500ms" || w != 400 || o != 100:
				return fmt.Errorf("armor: open %v, timeout %v, window %d/%d", armor.Open(), armor.TimeoutOrDefault(), w, o)
			}
			return nil
		}},
		{"key_defaults apply to a key without guardrails, not to one with its own", `
guardrails:
  g: {kind: local, block: [x]}
  h: {kind: local, block: [y]}
keys:
  - {name: plain, value: sk-plain}
  - {name: own, value: sk-own, guardrails: [{name: h}]}
  - {name: none, value: sk-none, guardrails: []}
key_defaults: {guardrails: [{name: g, on: input}]}
models:
  a: {guardrails: [{name: h, on: output}], routes: [{connection: mock, model: echo}]}
`, func(c *config.Config) error {
			got := map[string]string{}
			for i := range c.Keys {
				var names []string
				for _, u := range c.GuardrailsOf(c.Models["a"], &c.Keys[i].KeyLimits) {
					names = append(names, u.Name+":"+u.On)
				}
				got[c.Keys[i].Name] = strings.Join(names, ",")
			}
			want := map[string]string{"plain": "h:output,g:input", "own": "h:output,h:both", "none": "h:output"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("uses %v, want %v", got, want)
			}
			return nil
		}},
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

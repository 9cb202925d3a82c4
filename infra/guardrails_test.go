package infra

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Guardrails (core/guardrail): kind: bedrock calls ApplyGuardrail from the gateway on AWS,
// kind: model-armor calls Model Armor from the gateway on Google Cloud. The templates only
// grant those calls; the config names the guardrails.

const applyGuardrail = "bedrock:ApplyGuardrail"

// Two guardrails, one of them with cross-Region inference and so its profile too.
var testGuardrailArns = []string{
	"arn:aws:bedrock:us-east-1:123456789012:guardrail/gr1abc2def3",
	"arn:aws:bedrock:eu-west-1:123456789012:guardrail/xyz9",
	"arn:aws:bedrock:us-east-2:123456789012:guardrail-profile/us.guardrail.v1:0",
}

// What both AWS templates must accept and refuse as a guardrail ARN: the shapes of the
// Bedrock API Reference (ApplyGuardrail's guardrailIdentifier, GuardrailCrossRegionDetails).
var (
	goodGuardrailArns = slices.Concat(testGuardrailArns, []string{"arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:guardrail/abc"})
	badGuardrailArns  = []string{
		"gr1abc2def3", // an id, as the config may name it, is not a resource
		"arn:aws:bedrock:us-east-1:123456789012:guardrail/*",
		"arn:aws:bedrock:us-east-1:123456789012:guardrail/gr1:1", // the version is not part of the ARN
		"arn:aws:bedrock:us-east-1:12345:guardrail/gr1",
		"arn:aws:bedrock:us-east-1:123456789012:foundation-model/anthropic.claude",
		"arn:aws:secretsmanager:us-east-1:123456789012:secret:openai",
	}
)

func anyList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func ctyStrings(s []string) cty.Value {
	if len(s) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vals := make([]cty.Value, len(s))
	for i, v := range s {
		vals[i] = cty.StringVal(v)
	}
	return cty.ListVal(vals)
}

// allTrue is Terraform's alltrue, for the validations that use it.
var allTrue = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
	Type:   function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		for it := args[0].ElementIterator(); it.Next(); {
			if _, v := it.Element(); !v.True() {
				return cty.False, nil
			}
		}
		return cty.True, nil
	},
})

// TestTemplateGuardrails: GuardrailArns grants the gateway ApplyGuardrail on exactly those
// ARNs, nothing when empty, and no other function ever.
func TestTemplateGuardrails(t *testing.T) {
	for _, tc := range []struct {
		name string
		arns []string
	}{
		{"none", nil},
		{"one", testGuardrailArns[:1]},
		{"several", testGuardrailArns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := map[string]any{}
			if tc.arns != nil {
				params["GuardrailArns"] = anyList(tc.arns)
			}
			v := samFor(t, params)
			if v.conds["HasGuardrails"] != (len(tc.arns) > 0) {
				t.Errorf("HasGuardrails = %v with %d ARNs", v.conds["HasGuardrails"], len(tc.arns))
			}
			var want []string
			for _, a := range tc.arns {
				want = append(want, applyGuardrail+" on "+a)
			}
			slices.Sort(want)
			var got []string
			for _, g := range functionGrants(t, v.res["GatewayFunction"]) {
				if strings.HasPrefix(g, "bedrock:") {
					got = append(got, g)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("gateway bedrock grants = %q, want exactly %q", got, want)
			}
			for name, res := range v.res {
				if name != "GatewayFunction" && strings.Contains(stringsOf(res), applyGuardrail) {
					t.Errorf("%s is granted %s; only the gateway applies guardrails", name, applyGuardrail)
				}
			}
		})
	}

	// The parameter's pattern refuses what would grant nothing (an id) or too much (a wildcard).
	p := at(rawTemplate(t), "Parameters", "GuardrailArns")
	if p == nil || at(p, "Type").Value != "CommaDelimitedList" || at(p, "Default") == nil || at(p, "Default").Value != "" {
		t.Fatalf("GuardrailArns must be a CommaDelimitedList defaulting to empty")
	}
	pattern, err := regexp.Compile(at(p, "AllowedPattern").Value)
	if err != nil {
		t.Fatalf("GuardrailArns AllowedPattern: %v", err)
	}
	if !pattern.MatchString("") {
		t.Errorf("GuardrailArns AllowedPattern refuses its own empty default")
	}
	for _, a := range goodGuardrailArns {
		if !pattern.MatchString(a) {
			t.Errorf("GuardrailArns AllowedPattern refuses %s", a)
		}
	}
	for _, a := range badGuardrailArns {
		if pattern.MatchString(a) {
			t.Errorf("GuardrailArns AllowedPattern accepts %s", a)
		}
	}
}

// TestTemplateGuardrailsCfnLint: cfn-lint checks the parameter's default against its pattern,
// so a bare id as the default fails it (the pattern is live, not decoration).
func TestTemplateGuardrailsCfnLint(t *testing.T) {
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not on PATH: skipping the template lint (pip install cfn-lint)")
	}
	b, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "  GuardrailArns:")
	j := strings.Index(s[i:], `Default: ""`)
	if i < 0 || j < 0 {
		t.Fatal("no GuardrailArns parameter with an empty default")
	}
	bad := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(bad, []byte(s[:i+j]+`Default: "gr1abc2def3"`+s[i+j+len(`Default: ""`):]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, bad).CombinedOutput(); err == nil {
		t.Errorf("cfn-lint accepted a guardrail id as GuardrailArns:\n%s", out)
	}
}

// TestTerraformAWSGuardrails: guardrail_arns grants the gateway role ApplyGuardrail on exactly
// those ARNs, no policy at all when empty, no other role ever, and validates the ARNs' shape.
func TestTerraformAWSGuardrails(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	if got := literal(t, m.find("variable", "guardrail_arns"), "default"); got.LengthInt() != 0 {
		t.Errorf("guardrail_arns defaults to %#v, want []", got)
	}
	for _, arns := range [][]string{nil, testGuardrailArns[:1], testGuardrailArns} {
		ctx := tfContext(t, m, map[string]cty.Value{"guardrail_arns": ctyStrings(arns)})
		var want []string
		for _, a := range arns {
			want = append(want, applyGuardrail+" on "+a)
		}
		slices.Sort(want)
		var got []string
		for _, g := range rolePolicies(t, ctx, m, "gateway") {
			if strings.HasPrefix(g, "bedrock:") {
				got = append(got, g)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d ARNs: gateway bedrock grants = %q, want exactly %q", len(arns), got, want)
		}
		if n := count(t, ctx, m.find("resource", "aws_iam_role_policy", "guardrails")); n != min(len(arns), 1) {
			t.Errorf("%d ARNs: %d guardrails policies, want %d", len(arns), n, min(len(arns), 1))
		}
		for _, role := range []string{"remediation", "control_plane", "sweep"} {
			for _, g := range rolePolicies(t, ctx, m, role) {
				if strings.HasPrefix(g, "bedrock:") {
					t.Errorf("the %s role has %s; only the gateway applies guardrails", role, g)
				}
			}
		}
	}
	if pol := m.find("resource", "aws_iam_role_policy", "guardrails"); !slices.Contains(refs(pol, "role"), "aws_iam_role.gateway") {
		t.Errorf("the guardrails policy must be the gateway role's, not %v", refs(pol, "role"))
	}
	if !slices.Contains(refs(m.find("resource", "aws_lambda_function", "gateway"), "depends_on"), "aws_iam_role_policy.guardrails") {
		t.Errorf("the gateway must depend on its guardrails policy, or its first guarded request may be denied")
	}
	checkListValidation(t, m, "guardrail_arns", goodGuardrailArns, badGuardrailArns)
}

// checkListValidation proves a list(string) variable's validation accepts each good value
// (and all of them together) and refuses a list holding any bad one.
func checkListValidation(t *testing.T, m *module, name string, good, bad []string) {
	t.Helper()
	vb := child(m.find("variable", name), "validation")
	if vb == nil {
		t.Fatalf("variable %s has no validation", name)
	}
	accepts := func(list []string) bool {
		ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{name: ctyStrings(list)})}, Functions: tfFunctions()}
		ok, diags := vb.Body.Attributes["condition"].Expr.Value(ctx)
		if diags.HasErrors() {
			t.Fatalf("%s validation: %s", name, diags.Error())
		}
		return ok.True()
	}
	if !accepts(nil) || !accepts(good) {
		t.Errorf("%s validation refuses the empty list or %q", name, good)
	}
	for _, b := range bad {
		if accepts([]string{good[0], b}) {
			t.Errorf("%s validation accepts %q", name, b)
		}
	}
}

// TestTerraformGCPGuardrails: model_armor enables the API and gives the gateway's service
// account exactly roles/modelarmor.user (sanitize) and roles/modelarmor.viewer (templates.get),
// nothing when off, and no other account either.
func TestTerraformGCPGuardrails(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	if got := literal(t, m.find("variable", "model_armor"), "default"); got.True() {
		t.Errorf("model_armor defaults to true")
	}
	svc := m.find("resource", "google_project_service", "model_armor")
	grants := map[string]string{"gateway_model_armor_user": "roles/modelarmor.user", "gateway_model_armor_viewer": "roles/modelarmor.viewer"}
	for _, on := range []bool{false, true} {
		ctx := tfContext(t, m, map[string]cty.Value{"model_armor": cty.BoolVal(on)})
		want := 0
		if on {
			want = 1
		}
		if count(t, ctx, svc) != want {
			t.Errorf("model_armor = %v: %d modelarmor.googleapis.com services, want %d", on, count(t, ctx, svc), want)
		}
		if on && (valString(t, ctx, svc, "service") != "modelarmor.googleapis.com" || valString(t, ctx, svc, "disable_on_destroy") != "false") {
			t.Errorf("model_armor = true must enable modelarmor.googleapis.com and never disable it on destroy (other workloads may use it)")
		}
		var roles []string
		for _, b := range m.all("resource") {
			if b.Labels[0] != "google_project_iam_member" || count(t, ctx, b) == 0 {
				continue
			}
			role := valString(t, ctx, b, "role")
			if !strings.HasPrefix(role, "roles/modelarmor.") {
				continue
			}
			if grants[b.Labels[1]] != role || valString(t, ctx, b, "member") != "google_service_account.gateway.member" || child(b, "condition") != nil {
				t.Errorf("%v grants %s to %s; only the gateway's service account gets the two Model Armor roles", b.Labels, role, valString(t, ctx, b, "member"))
			}
			roles = append(roles, role)
		}
		slices.Sort(roles)
		wantRoles := []string(nil)
		if on {
			wantRoles = []string{"roles/modelarmor.user", "roles/modelarmor.viewer"}
		}
		if !slices.Equal(roles, wantRoles) {
			t.Errorf("model_armor = %v: Model Armor roles %q, want %q", on, roles, wantRoles)
		}
	}
	deps := refs(m.find("resource", "google_cloudfunctions2_function", "gateway"), "depends_on")
	for _, d := range []string{"google_project_iam_member.gateway_model_armor_user", "google_project_iam_member.gateway_model_armor_viewer", "google_project_service.model_armor"} {
		if !slices.Contains(deps, d) {
			t.Errorf("the gateway must depend on %s, or its first guarded request may be refused", d)
		}
	}
}

// Package infra holds the deployment templates (the top-level template.yaml and the Terraform
// modules under terraform/) and the tests that check them offline: parsed with the libraries
// the tools themselves use, and linted where the linters are installed. Where terraform is
// installed, each module goes through `terraform init` against an empty provider mirror (it
// parses the configuration as a user's first command does, with no network); `terraform
// validate` needs the providers, so it runs only where FNGATE_TERRAFORM_MIRROR names a mirror
// that holds them.
package infra

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"

	"github.com/fngate/fngate/functions/gcf"
)

const templatePath = "../template.yaml"

// ---- SAM template ----

func TestTemplateFunctionURL(t *testing.T) {
	// goformation 7.14.9 predates InvokedViaFunctionUrl (October 2025) and rejects unknown
	// properties, so that one property is removed before parsing; TestTemplatePermissionsAndLogs
	// checks it on the raw YAML.
	root := rawTemplate(t)
	if at(root, "Resources", "GatewayUrlPublicInvokeFunction", "Properties") == nil {
		t.Fatal("no GatewayUrlPublicInvokeFunction")
	}
	dropInvokedViaFunctionURL(root)
	data, err := yaml.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range []string{"NONE", "AWS_IAM"} {
		tmpl, err := goformation.ParseYAMLWithOptions(data, &intrinsics.ProcessorOptions{
			ParameterOverrides: map[string]any{"UrlAuthType": auth}})
		if err != nil {
			t.Fatal(err)
		}
		fn, err := tmpl.GetServerlessFunctionWithName("GatewayFunction")
		if err != nil {
			t.Fatal(err)
		}
		u := fn.FunctionUrlConfig
		if u == nil || u.InvokeMode == nil || *u.InvokeMode != "RESPONSE_STREAM" {
			t.Fatalf("FunctionUrlConfig = %+v, want InvokeMode RESPONSE_STREAM", u)
		}
		if u.AuthType != auth {
			t.Errorf("AuthType = %q with UrlAuthType=%s; it must follow the parameter", u.AuthType, auth)
		}
		// The function must learn the URL's auth type from the same parameter, or it cannot
		// decide whether running without client keys is allowed.
		if got := fn.Environment.Variables["FNGATE_URL_AUTH_TYPE"]; got != auth {
			t.Errorf("FNGATE_URL_AUTH_TYPE = %q with UrlAuthType=%s", got, auth)
		}
		if fn.AWSCloudFormationMetadata["BuildMethod"] != "makefile" {
			t.Errorf("Metadata.BuildMethod = %v, want makefile (make build-GatewayFunction)", fn.AWSCloudFormationMetadata["BuildMethod"])
		}
		// goformation does not merge Globals: nil here means the Globals (checked below) apply.
		if fn.Runtime != nil || fn.Architectures != nil || fn.Handler != nil {
			t.Errorf("the function overrides Runtime/Architectures/Handler; keep them in Globals")
		}
		if _, ok := tmpl.Outputs["GatewayUrl"]; !ok {
			t.Fatal("no GatewayUrl output")
		}
	}
	// goformation resolves !GetAtt to nil, so the output's value is checked as written.
	if v := at(rawTemplate(t), "Outputs", "GatewayUrl", "Value"); v == nil || v.Tag != "!GetAtt" || v.Value != "GatewayFunctionUrl.FunctionUrl" {
		t.Errorf("GatewayUrl = %s, want !GetAtt GatewayFunctionUrl.FunctionUrl", scalar(v))
	}
}

// dropInvokedViaFunctionURL removes InvokedViaFunctionUrl from every Lambda permission, for
// goformation, which predates it.
func dropInvokedViaFunctionURL(root *yaml.Node) {
	res := at(root, "Resources")
	for i := 0; i+1 < len(res.Content); i += 2 {
		r := res.Content[i+1]
		if v := at(r, "Type"); v != nil && v.Value == "AWS::Lambda::Permission" {
			if props := at(r, "Properties"); props != nil {
				deleteKey(props, "InvokedViaFunctionUrl")
			}
		}
	}
}

// rawTemplate is the template as YAML nodes: CloudFormation short tags (!Ref, !If) survive,
// and Globals are checked as written.
func rawTemplate(t *testing.T) *yaml.Node {
	t.Helper()
	b, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// at walks mapping keys; it returns nil when a key is missing.
func at(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return "<missing>"
	}
	return n.Tag + " " + n.Value
}

// TestTemplateCollectorLayerIsOptional: without OtelCollectorLayerArn the function has no
// layer and no OTLP endpoint (so a bootstrap built without the exporter starts); with it, the
// layer is attached and the gateway's export points at the collector it runs on localhost.
func TestTemplateCollectorLayerIsOptional(t *testing.T) {
	const layer = "arn:aws:lambda:eu-west-1:184161586896:layer:opentelemetry-collector-arm64-0_19_0:1"
	for _, arn := range []string{"", layer} {
		v := samFor(t, map[string]any{"OtelCollectorLayerArn": arn, "OtelCollectorConfigUri": "/var/task/collector.yaml"})
		fn, err := v.tmpl.GetServerlessFunctionWithName("GatewayFunction")
		if err != nil {
			t.Fatal(err)
		}
		endpoint := fn.Environment.Variables["OTEL_EXPORTER_OTLP_ENDPOINT"] // AWS::NoValue reads as ""
		if arn == "" {
			if len(fn.Layers) != 0 || endpoint != "" || v.conds["HasCollectorLayer"] {
				t.Errorf("no layer asked for, yet Layers %v, endpoint %q", fn.Layers, endpoint)
			}
			continue
		}
		if !slices.Equal(fn.Layers, []string{layer}) || endpoint != "http://localhost:4318" ||
			fn.Environment.Variables["OPENTELEMETRY_COLLECTOR_CONFIG_URI"] != "/var/task/collector.yaml" {
			t.Errorf("with the layer: Layers %v, environment %v", fn.Layers, fn.Environment.Variables)
		}
	}
}

func TestTemplateGlobals(t *testing.T) {
	g := at(rawTemplate(t), "Globals", "Function")
	if v := at(g, "Runtime"); v == nil || v.Value != "provided.al2023" {
		t.Errorf("Globals.Function.Runtime = %s, want provided.al2023", scalar(v))
	}
	if v := at(g, "Handler"); v == nil || v.Value != "bootstrap" {
		t.Errorf("Globals.Function.Handler = %s, want bootstrap", scalar(v))
	}
	arch := at(g, "Architectures")
	if arch == nil || len(arch.Content) != 1 || arch.Content[0].Value != "arm64" {
		t.Errorf("Globals.Function.Architectures must be [arm64] (the Makefile builds GOARCH=arm64)")
	}
	var timeout int
	if v := at(g, "Timeout"); v == nil || v.Decode(&timeout) != nil || timeout < 60 || timeout > 900 {
		t.Errorf("Globals.Function.Timeout = %s, want 60..900 seconds", scalar(at(g, "Timeout")))
	}
}

func TestTemplatePermissionsAndLogs(t *testing.T) {
	root := rawTemplate(t)
	res := at(root, "Resources")

	cond := at(root, "Conditions", "PublicUrl")
	if cond == nil || cond.Tag != "!Equals" || len(cond.Content) != 2 || cond.Content[0].Value != "UrlAuthType" || cond.Content[1].Value != "NONE" {
		t.Fatalf("Conditions.PublicUrl must be !Equals [!Ref UrlAuthType, NONE]")
	}
	// Both statements a public URL needs since October 2025, only when the URL is public.
	for name, want := range map[string]map[string]string{
		"GatewayUrlPublicInvokeUrl":      {"Action": "lambda:InvokeFunctionUrl", "FunctionUrlAuthType": "NONE", "Principal": "*"},
		"GatewayUrlPublicInvokeFunction": {"Action": "lambda:InvokeFunction", "InvokedViaFunctionUrl": "true", "Principal": "*"},
	} {
		r := at(res, name)
		if v := at(r, "Type"); v == nil || v.Value != "AWS::Lambda::Permission" {
			t.Errorf("%s is missing or not an AWS::Lambda::Permission", name)
			continue
		}
		if v := at(r, "Condition"); v == nil || v.Value != "PublicUrl" {
			t.Errorf("%s.Condition = %s, want PublicUrl", name, scalar(v))
		}
		for k, w := range want {
			if v := at(r, "Properties", k); v == nil || v.Value != w {
				t.Errorf("%s.%s = %s, want %s", name, k, scalar(v), w)
			}
		}
	}

	// Least privilege: GetSecretValue on the listed secrets only, and only when some are
	// listed: the config's (SecretArns) and the MCP servers' (McpSecretArns, TestTemplateMCPSecrets).
	// (The self-repair statements are checked in TestTemplateSelfRepair.)
	policies := at(res, "GatewayFunction", "Properties", "Policies")
	if policies == nil {
		t.Fatal("GatewayFunction has no Policies")
	}
	var actions []string
	secretResources := map[string]string{} // condition => resource
	for _, p := range policies.Content {
		conditional := p.Tag == "!If" && len(p.Content) == 3
		doc := p
		if conditional {
			doc = p.Content[1]
		}
		for _, st := range at(doc, "Statement").Content {
			a := at(st, "Action").Value
			if !strings.HasPrefix(a, "secretsmanager:") && !strings.HasPrefix(a, "kms:") {
				continue
			}
			if !conditional || !slices.Contains([]string{"HasSecrets", "HasMcpSecrets", "HasKmsKey"}, p.Content[0].Value) {
				t.Errorf("%s must be granted under HasSecrets/HasMcpSecrets/HasKmsKey, so an empty parameter grants nothing", a)
				continue
			}
			actions = append(actions, a)
			if a == "secretsmanager:GetSecretValue" {
				secretResources[p.Content[0].Value] = scalar(at(st, "Resource"))
			}
		}
	}
	slices.Sort(actions)
	if !slices.Equal(actions, []string{"kms:Decrypt", "secretsmanager:GetSecretValue", "secretsmanager:GetSecretValue"}) {
		t.Errorf("policy actions = %v, want only secretsmanager:GetSecretValue (twice) and kms:Decrypt", actions)
	}
	if secretResources["HasSecrets"] != "!Ref SecretArns" || secretResources["HasMcpSecrets"] != "!Ref McpSecretArns" {
		t.Errorf("GetSecretValue resources = %v, want !Ref SecretArns under HasSecrets, !Ref McpSecretArns under HasMcpSecrets", secretResources)
	}

	if v := at(res, "GatewayLogGroup", "Properties", "RetentionInDays"); v == nil || v.Tag != "!Ref" || v.Value != "LogRetentionDays" {
		t.Errorf("GatewayLogGroup.RetentionInDays = %s, want !Ref LogRetentionDays", scalar(v))
	}
	// Lambda logs to /aws/lambda/<function name>: the group must carry exactly that name.
	fnName := at(res, "GatewayFunction", "Properties", "FunctionName")
	group := at(res, "GatewayLogGroup", "Properties", "LogGroupName")
	if fnName == nil || group == nil || group.Value != "/aws/lambda/"+fnName.Value {
		t.Errorf("GatewayLogGroup is named %s for the function named %s", scalar(group), scalar(fnName))
	}
	if v := at(res, "GatewayFunction", "DependsOn"); v == nil || v.Value != "GatewayLogGroup" {
		t.Errorf("GatewayFunction must depend on GatewayLogGroup, so Lambda never creates the group without retention")
	}
}

func TestTemplateCfnLint(t *testing.T) {
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not on PATH: skipping the template lint (pip install cfn-lint)")
	}
	if out, err := exec.Command(lint, templatePath).CombinedOutput(); err != nil {
		t.Fatalf("cfn-lint template.yaml: %v\n%s", err, out)
	}
	// The linter must actually look: a wrong InvokeMode fails it.
	b, _ := os.ReadFile(templatePath)
	bad := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), "InvokeMode: RESPONSE_STREAM", "InvokeMode: STREAMING", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, bad).CombinedOutput(); err == nil {
		t.Errorf("cfn-lint accepted InvokeMode STREAMING:\n%s", out)
	}
}

// TestMakefileBuildTarget checks the target `sam build` runs for BuildMethod makefile.
func TestMakefileBuildTarget(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not on PATH")
	}
	cmd := exec.Command(mk, "-n", "build-GatewayFunction", "ARTIFACTS_DIR=/sam/artifacts", "CONFIG=my.yaml")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build-GatewayFunction: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "-tags lambda.norpc", "-trimpath", "-s -w", "./functions/lambda",
		"/sam/artifacts/bootstrap", "my.yaml /sam/artifacts/fngate.yaml"} {
		if !strings.Contains(s, want) {
			t.Errorf("build-GatewayFunction lacks %q:\n%s", want, s)
		}
	}
}

// ---- Terraform ----

type module struct {
	blocks []*hclsyntax.Block
}

func parseModule(t *testing.T, dir string) *module {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in %s", dir)
	}
	p := hclparse.NewParser()
	m := &module{}
	for _, f := range files {
		file, diags := p.ParseHCLFile(f)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", f, diags.Error())
		}
		m.blocks = append(m.blocks, file.Body.(*hclsyntax.Body).Blocks...)
	}
	return m
}

func (m *module) find(typ string, labels ...string) *hclsyntax.Block {
	for _, b := range m.blocks {
		if b.Type == typ && slices.Equal(b.Labels, labels) {
			return b
		}
	}
	return nil
}

func (m *module) all(typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range m.blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

// child returns the first nested block of the given type.
func child(b *hclsyntax.Block, typ string) *hclsyntax.Block {
	if b == nil {
		return nil
	}
	for _, c := range b.Body.Blocks {
		if c.Type == typ {
			return c
		}
	}
	return nil
}

// literal evaluates an attribute that must be a constant.
func literal(t *testing.T, b *hclsyntax.Block, name string) cty.Value {
	t.Helper()
	if b == nil {
		t.Fatalf("block missing (looking for %s)", name)
	}
	a, ok := b.Body.Attributes[name]
	if !ok {
		t.Fatalf("%s %v has no %s", b.Type, b.Labels, name)
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("%s %v: %s is not a literal: %s", b.Type, b.Labels, name, diags.Error())
	}
	return v
}

// refs lists what an attribute refers to, as "var.x" or "aws_thing.name".
func refs(b *hclsyntax.Block, name string) []string {
	a, ok := b.Body.Attributes[name]
	if !ok {
		return nil
	}
	var out []string
	for _, tr := range a.Expr.Variables() {
		s := tr.RootName()
		if len(tr) > 1 {
			if at, ok := tr[1].(hcl.TraverseAttr); ok {
				s += "." + at.Name
			}
		}
		out = append(out, s)
	}
	return out
}

func TestTerraformAWS(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	fn := m.find("resource", "aws_lambda_function", "gateway")
	if v := literal(t, fn, "runtime"); v.AsString() != "provided.al2023" {
		t.Errorf("runtime = %s", v.AsString())
	}
	if v := literal(t, fn, "handler"); v.AsString() != "bootstrap" {
		t.Errorf("handler = %s", v.AsString())
	}
	if v := literal(t, fn, "architectures"); v.LengthInt() != 1 || v.Index(cty.NumberIntVal(0)).AsString() != "arm64" {
		t.Errorf("architectures = %#v, want [arm64]", v)
	}
	if !slices.Contains(refs(fn, "filename"), "var.package_zip") || !slices.Contains(refs(fn, "source_code_hash"), "var.package_zip") {
		t.Errorf("the function must deploy var.package_zip and hash it")
	}
	url := m.find("resource", "aws_lambda_function_url", "gateway")
	if v := literal(t, url, "invoke_mode"); v.AsString() != "RESPONSE_STREAM" {
		t.Errorf("invoke_mode = %s, want RESPONSE_STREAM", v.AsString())
	}
	if !slices.Contains(refs(url, "authorization_type"), "var.url_auth_type") {
		t.Errorf("authorization_type must be var.url_auth_type")
	}
	if !slices.Contains(refs(localsWith(t, m, "environment"), "environment"), "var.url_auth_type") {
		t.Errorf("the function's environment must carry var.url_auth_type (FNGATE_URL_AUTH_TYPE)")
	}
	pub := m.find("resource", "aws_lambda_permission", "public_invoke")
	if v := literal(t, pub, "invoked_via_function_url"); !v.True() {
		t.Errorf("public_invoke.invoked_via_function_url must be true")
	}
	if v := literal(t, pub, "action"); v.AsString() != "lambda:InvokeFunction" {
		t.Errorf("public_invoke.action = %s", v.AsString())
	}
	if v := literal(t, m.find("resource", "aws_lambda_permission", "public_url"), "function_url_auth_type"); v.AsString() != "NONE" {
		t.Errorf("public_url.function_url_auth_type = %s", v.AsString())
	}
	sec := m.find("data", "aws_iam_policy_document", "secrets")
	st := child(sec, "statement")
	if v := literal(t, st, "actions"); v.LengthInt() != 1 || v.Index(cty.NumberIntVal(0)).AsString() != "secretsmanager:GetSecretValue" {
		t.Errorf("the secrets statement must allow only GetSecretValue")
	}
	if !slices.Contains(refs(st, "resources"), "var.secret_arns") {
		t.Errorf("the secrets statement must be limited to var.secret_arns")
	}
	if !slices.Contains(refs(m.find("resource", "aws_cloudwatch_log_group", "gateway"), "retention_in_days"), "var.log_retention_days") {
		t.Errorf("the log group must take var.log_retention_days")
	}
	checkInterface(t, m)
}

func TestTerraformGCP(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	fn := m.find("resource", "google_cloudfunctions2_function", "gateway")
	build := child(fn, "build_config")
	if v := literal(t, build, "runtime"); v.AsString() != "go125" {
		t.Errorf("runtime = %s, want go125", v.AsString())
	}
	if v := literal(t, build, "entry_point"); v.AsString() != gcf.FunctionName {
		t.Errorf("entry_point = %s, want %s (functions/gcf registers it)", v.AsString(), gcf.FunctionName)
	}
	svc := child(fn, "service_config")
	for attr, ref := range map[string]string{
		"max_instance_request_concurrency": "var.max_instance_request_concurrency",
		"available_cpu":                    "var.available_cpu",
		"service_account_email":            "google_service_account.gateway",
	} {
		if !slices.Contains(refs(svc, attr), ref) {
			t.Errorf("service_config.%s must use %s, got %v", attr, ref, refs(svc, attr))
		}
	}
	conc := m.find("variable", "max_instance_request_concurrency")
	if v := literal(t, conc, "default"); v.AsBigFloat().Cmp(cty.NumberIntVal(1000).AsBigFloat()) > 0 {
		t.Errorf("the default concurrency exceeds gen2's 1000")
	}
	if child(conc, "validation") == nil {
		t.Errorf("max_instance_request_concurrency needs a validation (1..1000)")
	}
	if cpu := literal(t, m.find("variable", "available_cpu"), "default"); cpu.AsString() == "" || cpu.AsString() < "1" {
		t.Errorf("available_cpu defaults to %q; concurrency above 1 needs at least 1 vCPU", cpu.AsString())
	}
	var dyn []string
	for _, b := range svc.Body.Blocks {
		if b.Type == "dynamic" {
			dyn = append(dyn, b.Labels...)
		}
	}
	if !slices.Contains(dyn, "secret_volumes") || !slices.Contains(dyn, "secret_environment_variables") {
		t.Errorf("service_config must mount the config and secret env from Secret Manager, has %v", dyn)
	}
	inv := m.find("resource", "google_cloud_run_service_iam_member", "invoker")
	if v := literal(t, inv, "role"); v.AsString() != "roles/run.invoker" {
		t.Errorf("invoker role = %s", v.AsString())
	}
	if !slices.Contains(refs(child(child(build, "source"), "storage_source"), "object"), "google_storage_bucket_object.source") {
		t.Errorf("the build must use the uploaded source object")
	}
	checkInterface(t, m)
}

// checkInterface: typed, described variables and outputs, and the URL output.
func checkInterface(t *testing.T, m *module) {
	t.Helper()
	for _, v := range m.all("variable") {
		if _, ok := v.Body.Attributes["type"]; !ok {
			t.Errorf("variable %s has no type", v.Labels[0])
		}
		d, ok := v.Body.Attributes["description"]
		if !ok {
			t.Errorf("variable %s has no description", v.Labels[0])
		} else if _, diags := d.Expr.Value(nil); diags.HasErrors() {
			// terraform init refuses the whole module over it ("Variables not allowed").
			t.Errorf("variable %s: the description must be a literal (write $${ for a literal ${): %s", v.Labels[0], diags.Error())
		}
	}
	for _, o := range m.all("output") {
		if _, ok := o.Body.Attributes["description"]; !ok {
			t.Errorf("output %s has no description", o.Labels[0])
		}
	}
	if m.find("output", "gateway_url") == nil {
		t.Errorf("no gateway_url output")
	}
}

func TestTerraformFmt(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH: skipping terraform fmt -check")
	}
	cmd := exec.Command(tf, "fmt", "-check", "-recursive", "terraform")
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform fmt -check: %v\n%s", err, out)
	}
}

// TestTerraformInit runs `terraform init` on each module as a user's first command does, but
// against an empty provider mirror: init loads and checks the whole configuration before it
// looks for providers (a ${ENV} in a variable description fails there), and with a
// filesystem mirror as the only installation method it makes no network call. When
// FNGATE_TERRAFORM_MIRROR names a filesystem mirror holding the providers (as `terraform
// providers mirror DIR` writes one), init installs them from it and `terraform validate`
// runs too.
func TestTerraformInit(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH: skipping terraform init and validate")
	}
	mirror := os.Getenv("FNGATE_TERRAFORM_MIRROR")
	for _, dir := range []string{"terraform/aws", "terraform/gcp"} {
		t.Run(dir, func(t *testing.T) {
			r := terraformInit(t, tf, copyModule(t, dir, nil), mirror)
			if len(r.configErrors) > 0 {
				t.Fatalf("terraform init refuses the configuration of %s:\n%s", dir, strings.Join(r.configErrors, "\n"))
			}
			t.Run("validate", func(t *testing.T) {
				if !r.installed && mirror == "" {
					t.Skip("set FNGATE_TERRAFORM_MIRROR to a provider mirror (terraform providers mirror DIR) to run terraform validate")
				}
				if !r.installed {
					t.Skipf("the mirror %s lacks the providers, so terraform validate cannot run:\n%s", mirror, strings.Join(r.otherErrors, "\n"))
				}
				if out, err := r.run("validate", "-no-color"); err != nil {
					t.Fatalf("terraform validate %s: %v\n%s", dir, err, out)
				}
			})
		})
	}
	// The check must actually look: the bug it was written for fails it.
	bad := copyModule(t, "terraform/aws", func(name string, b []byte) []byte {
		if name != "variables.tf" {
			return b
		}
		return []byte(strings.Replace(string(b), "$${ENV}", "${ENV}", 1))
	})
	if r := terraformInit(t, tf, bad, ""); len(r.configErrors) == 0 {
		t.Errorf("terraform init accepted ${ENV} in a variable description")
	}
}

// copyModule copies a module's .tf files, passed through edit when it is not nil, to a
// temporary directory, so init writes its lock file there and never into the repository.
func copyModule(t *testing.T, dir string, edit func(name string, b []byte) []byte) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in %s", dir)
	}
	out := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(filepath.Base(f), b)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type initResult struct {
	run          func(args ...string) ([]byte, error) // runs terraform in the module, same environment
	installed    bool                                 // init succeeded: the providers came from the mirror
	configErrors []string                             // errors located in the configuration's files
	otherErrors  []string                             // the rest (providers not found)
}

// terraformInit runs terraform init -backend=false in module with a CLI configuration whose
// only provider source is mirror (an empty directory when ""), its data directory in a
// temporary one, and none of the caller's TF_* settings.
func terraformInit(t *testing.T, tf, module, mirror string) initResult {
	t.Helper()
	tmp := t.TempDir()
	if mirror == "" {
		mirror = filepath.Join(tmp, "empty-mirror")
		if err := os.Mkdir(mirror, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rc := filepath.Join(tmp, "terraform.rc")
	cli := fmt.Sprintf("disable_checkpoint = true\nprovider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)
	if err := os.WriteFile(rc, []byte(cli), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "CHECKPOINT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "TF_DATA_DIR="+filepath.Join(tmp, "data"), "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1")
	r := initResult{run: func(args ...string) ([]byte, error) {
		cmd := exec.Command(tf, append([]string{"-chdir=" + module}, args...)...)
		cmd.Env = env
		return cmd.CombinedOutput()
	}}
	out, err := r.run("init", "-backend=false", "-input=false", "-no-color", "-json")
	r.installed = err == nil
	sawVersion := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic *struct {
				Severity string `json:"severity"`
				Summary  string `json:"summary"`
				Detail   string `json:"detail"`
				Range    *struct {
					Filename string `json:"filename"`
					Start    struct {
						Line int `json:"line"`
					} `json:"start"`
				} `json:"range"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil {
			continue
		}
		sawVersion = sawVersion || msg.Type == "version"
		d := msg.Diagnostic
		switch {
		case d == nil || d.Severity != "error":
		case d.Range != nil:
			r.configErrors = append(r.configErrors, fmt.Sprintf("%s:%d: %s: %s", d.Range.Filename, d.Range.Start.Line, d.Summary, d.Detail))
		case strings.Contains(d.Summary, "problems with the configuration"):
			// The heading over located errors; those carry the news.
		default:
			r.otherErrors = append(r.otherErrors, d.Summary+": "+d.Detail)
		}
	}
	if !sawVersion {
		t.Skipf("terraform init -json printed no JSON (terraform before 1.9?): skipping\n%s", out)
	}
	if err != nil && len(r.configErrors) == 0 && len(r.otherErrors) == 0 {
		t.Fatalf("terraform init failed without a diagnostic: %v\n%s", err, out)
	}
	return r
}

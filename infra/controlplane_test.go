package infra

import (
	"archive/zip"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters/firestorecounters"
)

// The key store and the control plane (docs/deploy.md, "Key store and control plane"), checked against the contracts
// the stores and the function mains keep: the key store's schema and IAM (the package docs of
// core/keystore/dynamostore and firestorestore), the usage history's TTL (core/counters), and
// the environment the mains read, taken from their source where it is on this branch.

// The key store's DynamoDB schema (core/keystore/dynamostore: its CreateTable makes the same).
var (
	keysAttributes = []string{"chg_b:S", "chg_t:S", "pk:S", "sk:S", "target:S"}
	keysIndexes    = map[string][2]string{"changes": {"chg_b", "chg_t"}, "audit_target": {"target", "sk"}}
)

// What each role may do to the key store, the counters and route state. The gateway only
// reads keys: a look-up by hash and the changes index.
var (
	samKeysReadGrants = []string{"dynamodb:GetItem on GetAtt:KeysTable.Arn", "dynamodb:Query on GetAtt:KeysTable.Arn",
		"dynamodb:Query on GetAtt:KeysTable.Arn/index/*"}
	tfKeysReadGrants = []string{"dynamodb:GetItem on aws_dynamodb_table.keys.arn", "dynamodb:Query on aws_dynamodb_table.keys.arn",
		"dynamodb:Query on aws_dynamodb_table.keys.arn/index/*"}
	samControlPlaneUsageGrants = []string{"dynamodb:BatchGetItem on GetAtt:CountersTable.Arn", "dynamodb:GetItem on GetAtt:CountersTable.Arn"}
	// The control plane: a change is one TransactWriteItems, authorized item by item.
	keysWriteActions = []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem",
		"dynamodb:Query", "dynamodb:UpdateItem"}
	routeStateActions = []string{"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"}
)

// controlPlaneGrants is the control plane's every grant (no secrets configured), with the
// template's or module's names for the key store, counters and route-state tables.
func controlPlaneGrants(keys, routeState string, usage []string) []string {
	var out []string
	for _, a := range keysWriteActions {
		out = append(out, a+" on "+keys)
	}
	out = append(out, "dynamodb:Query on "+keys+"/index/*")
	out = append(out, usage...)
	for _, a := range routeStateActions {
		out = append(out, a+" on "+routeState)
	}
	sort.Strings(out)
	return out
}

// translatedControlPlaneRole is the control plane's role as the SAM translator writes it.
func translatedControlPlaneRole(basic string) []string {
	var out []string
	for _, a := range keysWriteActions {
		out = append(out, "Allow "+a+" on GetAtt:KeysTable.Arn")
	}
	out = append(out, "Allow dynamodb:Query on Sub:${KeysTable.Arn}/index/*",
		"Allow dynamodb:BatchGetItem on GetAtt:CountersTable.Arn", "Allow dynamodb:GetItem on GetAtt:CountersTable.Arn")
	for _, a := range routeStateActions {
		out = append(out, "Allow "+a+" on GetAtt:RouteStateTable.Arn")
	}
	return append(out, "HasSecrets Allow secretsmanager:GetSecretValue on Ref:SecretArns",
		"HasControlPlaneSecrets Allow secretsmanager:GetSecretValue on Ref:ControlPlaneSecretArns",
		"HasKmsKey Allow kms:Decrypt on Ref:SecretsKmsKeyArn", basic)
}

// Writes to a DynamoDB table, by any name: the gateway must have none on the key store.
var dynamoWrites = regexp.MustCompile(`^dynamodb:(\*|Put|Update|Delete|BatchWrite|TransactWrite|ConditionCheck|PartiQL(Insert|Update|Delete)|Create|Restore|Import)`)

func checkNoKeyWrites(t *testing.T, who string, grants []string, table string) {
	t.Helper()
	for _, g := range grants {
		action, resource, _ := strings.Cut(g, " on ")
		if strings.Contains(resource, table) || resource == "*" {
			if dynamoWrites.MatchString(action) {
				t.Errorf("%s may write the key store: %s; only the control plane issues and revokes keys", who, g)
			}
		}
	}
}

// ---- The environment the mains read ----

// envName is what an environment variable's name looks like in this repository.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

// sourceEnv lists the environment names the non-test Go files of dir name: string constants
// and the literal arguments of Getenv and LookupEnv calls. ok is false when dir is not on this
// branch (another helper's package not merged yet).
func sourceEnv(t *testing.T, dir string) (names []string, ok bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(files) == 0 {
		return nil, false
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		add := func(e ast.Expr) {
			if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && envName.MatchString(s) {
					seen[s] = true
				}
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GenDecl:
				if x.Tok == token.CONST {
					for _, spec := range x.Specs {
						for _, v := range spec.(*ast.ValueSpec).Values {
							add(v)
						}
					}
				}
			case *ast.CallExpr:
				var fn string
				switch f := x.Fun.(type) {
				case *ast.SelectorExpr:
					fn = f.Sel.Name
				case *ast.Ident:
					fn = f.Name
				}
				if (strings.EqualFold(fn, "getenv") || fn == "LookupEnv") && len(x.Args) == 1 {
					add(x.Args[0])
				}
			}
			return true
		})
	}
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, true
}

// The mains' environment by contract (CONTROLPLANE-ENV.md of issue 26), required whether or
// not their source is on this branch yet.
var (
	controlPlaneLambdaEnv = []string{"KEYS_TABLE", "COUNTERS_TABLE", "ROUTE_STATE_TABLE"}
	controlPlaneGCFEnv    = []string{"KEYS_PROJECT", "KEYS_DATABASE", "KEYS_COLLECTION", "COUNTERS_PROJECT", "COUNTERS_DATABASE",
		"COUNTERS_PREFIX", "ROUTE_STATE_PROJECT", "ROUTE_STATE_DATABASE", "ROUTE_STATE_PREFIX"}
)

// optionalEnv is what a main may read that a template sets only sometimes, or never: the
// config's two forms (set when given), the platform's own, the emulators' (tests).
func optionalEnv(name string) bool {
	switch name {
	case "FNGATE_CONFIG_YAML", "FNGATE_CONFIG", "FIRESTORE_EMULATOR_HOST", "GOOGLE_CLOUD_PROJECT", "PORT", "FUNCTION_TARGET", "K_SERVICE", "K_REVISION":
		return true
	}
	return strings.HasPrefix(name, "AWS_") || strings.HasPrefix(name, "_")
}

// checkMainEnv: every name the main reads (by contract, and found in its source) is set by the
// template, apart from the optional ones; set holds the names the template sets.
func checkMainEnv(t *testing.T, what, dir string, contract []string, set map[string]bool) {
	t.Helper()
	want := slices.Clone(contract)
	if found, ok := sourceEnv(t, dir); ok {
		want = append(want, found...)
	} else {
		t.Logf("%s is not on this branch: checking the contract's names only", dir)
	}
	for _, n := range want {
		if !set[n] && !optionalEnv(n) {
			t.Errorf("%s reads %s (%s), which the template does not set", what, n, dir)
		}
	}
}

// checkStoreEnvRead: where the gateway's main reads the key store's environment, it reads all
// of what the template sets for it: a name set but never read would send the store elsewhere
// (KEYS_DATABASE ignored: the keys sought in the (default) database).
func checkStoreEnvRead(t *testing.T, what, dir, prefix string, set map[string]bool) {
	t.Helper()
	found, ok := sourceEnv(t, dir)
	if !ok {
		t.Fatalf("no Go source in %s", dir)
	}
	var read []string
	for _, n := range found {
		if strings.HasPrefix(n, prefix) {
			read = append(read, n)
		}
	}
	if len(read) == 0 {
		t.Logf("%s reads no %s* variable in %s yet (that store's wiring is not on this branch)", what, prefix, dir)
		return
	}
	for n := range set {
		if strings.HasPrefix(n, prefix) && !slices.Contains(read, n) {
			t.Errorf("the template sets %s for %s, which reads only %v (%s)", n, what, read, dir)
		}
	}
	for _, n := range read {
		if !set[n] {
			t.Errorf("%s reads %s (%s), which the template does not set", what, n, dir)
		}
	}
}

func keysOf[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// ---- SAM ----

// TestTemplateKeyStore: the key store, with or without the control plane; the gateway serves
// its keys with a public URL, reading them only. Behind AWS_IAM the SigV4 signature takes the
// Authorization header, so no gateway key can arrive (the gateway refuses keys in config
// there too): the gateway is then given neither the table nor access to it.
func TestTemplateKeyStore(t *testing.T) {
	for _, c := range []struct{ deploy, auth string }{{"true", "NONE"}, {"false", "NONE"}, {"true", "AWS_IAM"}, {"false", "AWS_IAM"}} {
		t.Run("DeployControlPlane="+c.deploy+",UrlAuthType="+c.auth, func(t *testing.T) {
			v := samFor(t, map[string]any{"DeployControlPlane": c.deploy, "UrlAuthType": c.auth})
			tbl, err := v.tmpl.GetDynamoDBTableWithName("KeysTable")
			if err != nil {
				t.Fatalf("the key store stays without the control plane: %v", err)
			}
			if tbl.BillingMode == nil || *tbl.BillingMode != "PAY_PER_REQUEST" {
				t.Errorf("KeysTable BillingMode = %v, want PAY_PER_REQUEST", tbl.BillingMode)
			}
			keys := map[string]string{}
			for _, k := range tbl.KeySchema {
				keys[k.KeyType] = k.AttributeName
			}
			if len(keys) != 2 || keys["HASH"] != "pk" || keys["RANGE"] != "sk" {
				t.Errorf("KeysTable keys = %v, the store uses pk (hash) and sk (range)", keys)
			}
			var attrs []string
			for _, a := range tbl.AttributeDefinitions {
				attrs = append(attrs, a.AttributeName+":"+a.AttributeType)
			}
			sort.Strings(attrs)
			if !slices.Equal(attrs, keysAttributes) {
				t.Errorf("KeysTable attributes = %v, want %v", attrs, keysAttributes)
			}
			gotIdx := map[string][2]string{}
			for _, g := range tbl.GlobalSecondaryIndexes {
				var k [2]string
				for _, ks := range g.KeySchema {
					k[map[string]int{"HASH": 0, "RANGE": 1}[ks.KeyType]] = ks.AttributeName
				}
				gotIdx[g.IndexName] = k
				if g.Projection == nil || g.Projection.ProjectionType == nil || *g.Projection.ProjectionType != "ALL" {
					t.Errorf("index %s projects %+v, want ALL", g.IndexName, g.Projection)
				}
			}
			if fmt.Sprint(gotIdx) != fmt.Sprint(keysIndexes) {
				t.Errorf("KeysTable indexes = %v, want %v", gotIdx, keysIndexes)
			}
			if p := tbl.PointInTimeRecoverySpecification; p == nil || p.PointInTimeRecoveryEnabled == nil || !*p.PointInTimeRecoveryEnabled {
				t.Errorf("KeysTable has no point-in-time recovery: it holds the keys and the audit log")
			}
			if s := tbl.SSESpecification; s == nil || !s.SSEEnabled {
				t.Errorf("KeysTable SSESpecification = %+v, want SSEEnabled", s)
			}
			if tbl.TimeToLiveSpecification != nil {
				t.Errorf("KeysTable has a TTL: tombstones and audit entries are kept for good")
			}
			raw := at(rawTemplate(t), "Resources", "KeysTable")
			for _, p := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
				if got := at(raw, p); got == nil || got.Value != "Retain" {
					t.Errorf("KeysTable %s = %s, want Retain (deleting it revokes every stored key)", p, scalar(got))
				}
			}

			gw := v.res["GatewayFunction"]
			public := c.auth == "NONE"
			wantEnv, wantGrants := any("Ref:KeysTable"), samKeysReadGrants
			if !public {
				wantEnv, wantGrants = nil, nil
			}
			if got := dig(gw, "Properties", "Environment", "Variables", "KEYS_TABLE"); got != wantEnv {
				t.Errorf("gateway KEYS_TABLE = %v, want %v", got, wantEnv)
			}
			var onKeys []string
			for _, g := range functionGrants(t, gw) {
				if strings.Contains(g, "KeysTable") {
					onKeys = append(onKeys, g)
				}
			}
			if !slices.Equal(onKeys, wantGrants) {
				t.Errorf("gateway grants on the key store = %q, want exactly %q", onKeys, wantGrants)
			}
			checkNoKeyWrites(t, "the gateway", functionGrants(t, gw), "KeysTable")
			if public {
				checkStoreEnvRead(t, "the gateway", "../functions/lambda", "KEYS_", keysOf(dig(gw, "Properties", "Environment", "Variables").(map[string]any)))
			}
			if strings.Contains(stringsOf(v.res["RemediationFunction"]), "KeysTable") {
				t.Errorf("the remediation function is given the key store")
			}
			if v.out["KeysTableName"] == nil {
				t.Errorf("no KeysTableName output")
			}
		})
	}
}

var samControlPlaneResources = []string{"ControlPlaneLogGroup", "ControlPlaneFunction", "ControlPlaneUrl", "ControlPlaneUrlPublicInvokeUrl",
	"ControlPlaneUrlPublicInvokeFunction"}

func TestTemplateControlPlane(t *testing.T) {
	v := samFor(t, nil)
	for _, name := range samControlPlaneResources {
		if v.res[name] == nil {
			t.Errorf("%s is missing with DeployControlPlane at its default", name)
		}
	}
	fn, err := v.tmpl.GetServerlessFunctionWithName("ControlPlaneFunction")
	if err != nil {
		t.Fatal(err)
	}
	if fn.AWSCloudFormationMetadata["BuildMethod"] != "makefile" {
		t.Errorf("ControlPlaneFunction BuildMethod = %v, want makefile (make build-ControlPlaneFunction)", fn.AWSCloudFormationMetadata["BuildMethod"])
	}
	if fn.Runtime != nil || fn.Architectures != nil || fn.Handler != nil {
		t.Errorf("ControlPlaneFunction overrides Runtime/Architectures/Handler; keep provided.al2023 arm64 in Globals")
	}
	if fn.Timeout == nil || *fn.Timeout > 60 {
		t.Errorf("ControlPlaneFunction Timeout = %v; an admin call is a few store calls, not a 15-minute stream", fn.Timeout)
	}
	if fn.FunctionUrlConfig != nil {
		t.Errorf("ControlPlaneFunction has a FunctionUrlConfig: the URL and its permissions are spelled out (ControlPlaneUrl)")
	}
	if g, f := dig(v.res, "ControlPlaneLogGroup", "Properties", "LogGroupName"), dig(v.res, "ControlPlaneFunction", "Properties", "FunctionName"); g != "/aws/lambda/"+fmt.Sprint(f) {
		t.Errorf("ControlPlaneLogGroup %v is not the log group of function %v", g, f)
	}
	if d := at(rawTemplate(t), "Resources", "ControlPlaneFunction", "DependsOn"); d == nil || d.Value != "ControlPlaneLogGroup" {
		t.Errorf("ControlPlaneFunction must depend on ControlPlaneLogGroup, so Lambda never creates the group without retention")
	}

	env := fn.Environment.Variables
	for k, want := range map[string]string{"KEYS_TABLE": "Ref:KeysTable", "COUNTERS_TABLE": "Ref:CountersTable", "ROUTE_STATE_TABLE": "Ref:RouteStateTable"} {
		if env[k] != want {
			t.Errorf("control plane %s = %q, want %s", k, env[k], want)
		}
	}
	if _, ok := env["FNGATE_URL_AUTH_TYPE"]; ok {
		t.Errorf("the control plane is given FNGATE_URL_AUTH_TYPE; it authenticates every call itself")
	}
	checkMainEnv(t, "the control plane", "../functions/controlplane/lambda", controlPlaneLambdaEnv, keysOf(env))
	// The config reaches it as it reaches the gateway.
	withConfig := samFor(t, map[string]any{"ConfigYaml": "models: {}", "ConfigPath": "conf/fngate.yaml"})
	gwEnv := dig(withConfig.res, "GatewayFunction", "Properties", "Environment", "Variables")
	cpEnv := dig(withConfig.res, "ControlPlaneFunction", "Properties", "Environment", "Variables")
	for _, k := range []string{"FNGATE_CONFIG_YAML", "FNGATE_CONFIG"} {
		if dig(cpEnv, k) == nil || dig(cpEnv, k) != dig(gwEnv, k) {
			t.Errorf("control plane %s = %v, the gateway's is %v", k, dig(cpEnv, k), dig(gwEnv, k))
		}
	}

	want := controlPlaneGrants("GetAtt:KeysTable.Arn", "GetAtt:RouteStateTable.Arn", samControlPlaneUsageGrants)
	if got := functionGrants(t, v.res["ControlPlaneFunction"]); !slices.Equal(got, want) {
		t.Errorf("control plane grants (no secrets) =\n %q\nwant %q", got, want)
	}
	// Its secrets are its own: the gateway never reads them.
	const adminSecret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:fngate-admin-AbCdEf"
	withSecrets := samFor(t, map[string]any{"ControlPlaneSecretArns": []any{adminSecret}, "SecretArns": []any{"arn:aws:secretsmanager:eu-west-1:123456789012:secret:openai-AbCdEf"}})
	cpGrants := functionGrants(t, withSecrets.res["ControlPlaneFunction"])
	for _, s := range []string{adminSecret, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:openai-AbCdEf"} {
		if !slices.Contains(cpGrants, "secretsmanager:GetSecretValue on "+s) {
			t.Errorf("the control plane cannot read %s: %q", s, cpGrants)
		}
	}
	if g := functionGrants(t, withSecrets.res["GatewayFunction"]); slices.Contains(g, "secretsmanager:GetSecretValue on "+adminSecret) {
		t.Errorf("the gateway may read the control plane's secret")
	}

	url := dig(v.res, "ControlPlaneUrl", "Properties")
	if dig(url, "AuthType") != "NONE" || dig(url, "TargetFunctionArn") != "Ref:ControlPlaneFunction" || dig(url, "InvokeMode") != nil {
		t.Errorf("ControlPlaneUrl = %v, want AuthType NONE on the control plane, buffered", url)
	}
	raw := rawTemplate(t)
	for name, want := range map[string]map[string]string{
		"ControlPlaneUrlPublicInvokeUrl":      {"Action": "lambda:InvokeFunctionUrl", "FunctionUrlAuthType": "NONE", "Principal": "*"},
		"ControlPlaneUrlPublicInvokeFunction": {"Action": "lambda:InvokeFunction", "InvokedViaFunctionUrl": "true", "Principal": "*"},
	} {
		for k, w := range want {
			if got := at(raw, "Resources", name, "Properties", k); got == nil || got.Value != w {
				t.Errorf("%s.%s = %s, want %s", name, k, scalar(got), w)
			}
		}
		if got := at(raw, "Resources", name, "Properties", "FunctionName"); got == nil || got.Tag != "!Ref" || got.Value != "ControlPlaneFunction" {
			t.Errorf("%s is on %s, want !Ref ControlPlaneFunction", name, scalar(got))
		}
	}
	if o := at(raw, "Outputs", "ControlPlaneUrl", "Value"); o == nil || o.Tag != "!GetAtt" || o.Value != "ControlPlaneUrl.FunctionUrl" {
		t.Errorf("ControlPlaneUrl output = %s, want !GetAtt ControlPlaneUrl.FunctionUrl", scalar(o))
	}
	if v.out["ControlPlaneUrl"] == nil {
		t.Errorf("no ControlPlaneUrl output")
	}

	// The admin API is never reachable on the gateway's URL: no gateway wiring names it.
	if s := stringsOf(v.res["GatewayFunction"]); strings.Contains(s, "ControlPlane") {
		t.Errorf("the gateway function refers to the control plane: %s", s)
	}

	t.Run("left out", func(t *testing.T) {
		off := samFor(t, map[string]any{"DeployControlPlane": "false"})
		for name, r := range off.res {
			if strings.HasPrefix(name, "ControlPlane") || strings.Contains(stringsOf(r), "ControlPlane") {
				t.Errorf("%s remains with DeployControlPlane=false", name)
			}
		}
		for name := range off.out {
			if strings.HasPrefix(name, "ControlPlane") {
				t.Errorf("output %s remains with DeployControlPlane=false", name)
			}
		}
		if off.conds["HasControlPlaneSecrets"] {
			t.Errorf("HasControlPlaneSecrets holds without the control plane")
		}
	})
}

// TestMakefileControlPlaneTargets checks the target `sam build` runs for ControlPlaneFunction
// and the Cloud Functions upload's, and, where functions/controlplane/lambda is on this
// branch, that `make package-controlplane` gives a reproducible zip with bootstrap at its root.
func TestMakefileControlPlaneTargets(t *testing.T) {
	out := makeDryRun(t, "build-ControlPlaneFunction", "ARTIFACTS_DIR=/sam/artifacts", "CONFIG=/src/fngate.yaml")
	for _, want := range []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "-tags lambda.norpc", "grpcnotrace", "-trimpath", "-s -w",
		"./functions/controlplane/lambda", "/sam/artifacts/bootstrap", "cp /src/fngate.yaml /sam/artifacts/fngate.yaml"} {
		if !strings.Contains(out, want) {
			t.Errorf("build-ControlPlaneFunction lacks %q:\n%s", want, out)
		}
	}
	// The gateway's build is untouched: its bootstrap carries none of the control plane.
	if gw := makeDryRun(t, "build-GatewayFunction", "ARTIFACTS_DIR=/sam/artifacts"); strings.Contains(gw, "controlplane") {
		t.Errorf("build-GatewayFunction builds the control plane:\n%s", gw)
	}
	if gcf := makeDryRun(t, "package-gcf-controlplane"); !strings.Contains(gcf, "gcfsource -function controlplane") {
		t.Errorf("package-gcf-controlplane does not build the control plane's upload:\n%s", gcf)
	}
	if testing.Short() {
		t.Skip("-short: not building the package")
	}
	if _, err := os.Stat("../functions/controlplane/lambda"); err != nil {
		t.Skip("functions/controlplane/lambda is not on this branch yet: nothing to package")
	}
	dir := t.TempDir()
	zipOnce := func() []byte {
		// A host build, as in TestMakefileRemediationTargets: what is under test is the packaging.
		cmd := makeCmd(t, "-s", "package-controlplane", "BUILD_DIR="+dir, "LAMBDA_ENV=", "LAMBDA_FLAGS=-tags lambda.norpc")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make package-controlplane: %v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "controlplane.zip"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := zipOnce()
	if second := zipOnce(); string(first) != string(second) {
		t.Errorf("two package-controlplane runs gave different zips: Terraform would redeploy an unchanged function")
	}
	z, err := zipNames(filepath.Join(dir, "controlplane.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(z, []string{"bootstrap"}) {
		t.Errorf("controlplane.zip holds %v, want bootstrap at the root and nothing else", z)
	}
}

func makeCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not on PATH")
	}
	cmd := exec.Command(mk, args...)
	cmd.Dir = ".."
	return cmd
}

// makeDryRun is what `make -n target vars...` would run.
func makeDryRun(t *testing.T, target string, vars ...string) string {
	t.Helper()
	out, err := makeCmd(t, append([]string{"-n", target}, vars...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", target, err, out)
	}
	return string(out)
}

func zipNames(path string) ([]string, error) {
	r, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var names []string
	for _, f := range r.File {
		names = append(names, f.Name)
	}
	return names, nil
}

// ---- Terraform AWS ----

func TestTerraformAWSKeyStore(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	for _, c := range []struct {
		on   bool
		auth string
	}{{true, "NONE"}, {false, "NONE"}, {true, "AWS_IAM"}, {false, "AWS_IAM"}} {
		t.Run(fmt.Sprintf("control_plane=%v,url_auth_type=%s", c.on, c.auth), func(t *testing.T) {
			ctx := tfContext(t, m, map[string]cty.Value{"control_plane": cty.BoolVal(c.on), "url_auth_type": cty.StringVal(c.auth)})
			public := c.auth == "NONE"
			tbl := m.find("resource", "aws_dynamodb_table", "keys")
			if count(t, ctx, tbl) != 1 {
				t.Fatalf("the key store must stay without the control plane")
			}
			if valString(t, ctx, tbl, "hash_key") != "pk" || valString(t, ctx, tbl, "range_key") != "sk" || valString(t, ctx, tbl, "billing_mode") != "PAY_PER_REQUEST" {
				t.Errorf("keys table: want pk/sk, on-demand")
			}
			var attrs []string
			idx := map[string][2]string{}
			for _, b := range tbl.Body.Blocks {
				switch b.Type {
				case "attribute":
					attrs = append(attrs, valString(t, ctx, b, "name")+":"+valString(t, ctx, b, "type"))
				case "global_secondary_index":
					idx[valString(t, ctx, b, "name")] = [2]string{valString(t, ctx, b, "hash_key"), valString(t, ctx, b, "range_key")}
					if valString(t, ctx, b, "projection_type") != "ALL" {
						t.Errorf("index %s must project ALL", valString(t, ctx, b, "name"))
					}
				case "ttl":
					t.Errorf("the keys table has a TTL: tombstones and audit entries are kept for good")
				}
			}
			sort.Strings(attrs)
			if !slices.Equal(attrs, keysAttributes) || fmt.Sprint(idx) != fmt.Sprint(keysIndexes) {
				t.Errorf("keys table attributes %v, indexes %v; want %v, %v", attrs, idx, keysAttributes, keysIndexes)
			}
			if valString(t, ctx, child(tbl, "point_in_time_recovery"), "enabled") != "true" || valString(t, ctx, child(tbl, "server_side_encryption"), "enabled") != "true" {
				t.Errorf("the keys table needs point-in-time recovery and server-side encryption")
			}
			if valString(t, ctx, tbl, "deletion_protection_enabled") != "true" {
				t.Errorf("the keys table is not deletion-protected by default")
			}

			env := ctx.Variables["local"].GetAttr("environment")
			has := env.Type().HasAttribute("KEYS_TABLE")
			if has != public || has && env.GetAttr("KEYS_TABLE").AsString() != "aws_dynamodb_table.keys.name" {
				t.Errorf("the gateway's KEYS_TABLE present = %v with url_auth_type = %s, want the keys table with a public URL only", has, c.auth)
			}
			if public {
				checkStoreEnvRead(t, "the gateway", "../functions/lambda", "KEYS_", keysOf(env.AsValueMap()))
			}
			gw := rolePolicies(t, ctx, m, "gateway")
			var onKeys []string
			for _, g := range gw {
				if strings.Contains(g, "aws_dynamodb_table.keys") {
					onKeys = append(onKeys, g)
				}
			}
			want := tfKeysReadGrants
			if !public {
				want = nil
			}
			if !slices.Equal(onKeys, want) {
				t.Errorf("gateway grants on the key store = %q, want exactly %q", onKeys, want)
			}
			checkNoKeyWrites(t, "the gateway", gw, "aws_dynamodb_table.keys")
			if !slices.Contains(refs(m.find("resource", "aws_lambda_function", "gateway"), "depends_on"), "aws_iam_role_policy.keys") {
				t.Errorf("the gateway must depend on its keys policy: the first request may present a stored key")
			}
			for _, g := range rolePolicies(t, ctx, m, "remediation") {
				if strings.Contains(g, "keys") {
					t.Errorf("the remediation function has %s", g)
				}
			}
		})
	}
	if m.find("output", "keys_table_name") == nil {
		t.Errorf("no keys_table_name output")
	}
}

// tfControlPlaneAWS lists the control plane's resources in the AWS module.
var tfControlPlaneAWS = [][2]string{{"aws_cloudwatch_log_group", "control_plane"}, {"aws_iam_role", "control_plane"},
	{"aws_iam_role_policy", "control_plane"}, {"aws_lambda_function", "control_plane"}, {"aws_lambda_function_url", "control_plane"},
	{"aws_lambda_permission", "control_plane_url"}, {"aws_lambda_permission", "control_plane_invoke"}}

func TestTerraformAWSControlPlane(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	if got := literal(t, m.find("variable", "control_plane"), "default"); !got.True() {
		t.Errorf("control_plane defaults to false; the templates deploy the control plane unless told not to")
	}
	ctx := tfContext(t, m, map[string]cty.Value{"control_plane_package_zip": cty.StringVal("build/controlplane.zip")})
	for _, r := range tfControlPlaneAWS {
		if n := count(t, ctx, m.find("resource", r[0], r[1])); n != 1 {
			t.Errorf("%s.%s count = %d with control_plane at its default", r[0], r[1], n)
		}
	}
	fn := m.find("resource", "aws_lambda_function", "control_plane")
	for attr, want := range map[string]string{"runtime": "provided.al2023", "handler": "bootstrap", "function_name": "fngate-controlplane"} {
		if got := valString(t, ctx, fn, attr); got != want {
			t.Errorf("control plane %s = %s, want %s", attr, got, want)
		}
	}
	if got := valStrings(t, ctx, fn, "architectures"); !slices.Equal(got, []string{"arm64"}) {
		t.Errorf("control plane architectures = %v", got)
	}
	if n, _ := val(t, ctx, fn, "timeout").AsBigFloat().Int64(); n > 60 {
		t.Errorf("control plane timeout %d s; an admin call is a few store calls", n)
	}
	if !slices.Contains(refs(fn, "filename"), "var.control_plane_package_zip") || !slices.Contains(refs(fn, "source_code_hash"), "var.control_plane_package_zip") {
		t.Errorf("the control plane must deploy var.control_plane_package_zip and hash it")
	}
	if pre := child(child(fn, "lifecycle"), "precondition"); pre == nil || !slices.Contains(refs(pre, "condition"), "var.control_plane_package_zip") {
		t.Errorf("the control plane needs a precondition naming control_plane_package_zip: a plan without it must say what to build")
	}
	if valString(t, ctx, m.find("resource", "aws_cloudwatch_log_group", "control_plane"), "name") != "/aws/lambda/"+valString(t, ctx, fn, "function_name") {
		t.Errorf("the control plane's log group is not /aws/lambda/<its name>")
	}
	if d := refs(fn, "depends_on"); !slices.Contains(d, "aws_cloudwatch_log_group.control_plane") || !slices.Contains(d, "aws_iam_role_policy.control_plane") {
		t.Errorf("the control plane must depend on its log group and its policy, got %v", d)
	}

	env := val(t, ctx, child(fn, "environment"), "variables").AsValueMap()
	for k, want := range map[string]string{"KEYS_TABLE": "aws_dynamodb_table.keys.name", "COUNTERS_TABLE": "aws_dynamodb_table.counters.name",
		"ROUTE_STATE_TABLE": "aws_dynamodb_table.route_state.name"} {
		if got, ok := env[k]; !ok || got.AsString() != want {
			t.Errorf("control plane %s = %v, want %s", k, got, want)
		}
	}
	checkMainEnv(t, "the control plane", "../functions/controlplane/lambda", controlPlaneLambdaEnv, keysOf(env))
	withConfig := tfContext(t, m, map[string]cty.Value{"control_plane_package_zip": cty.StringVal("z"), "config_yaml": cty.StringVal("models: {}")})
	if got := val(t, withConfig, child(fn, "environment"), "variables").GetAttr("FNGATE_CONFIG_YAML").AsString(); got != "models: {}" {
		t.Errorf("the control plane does not get the gateway's config_yaml: %q", got)
	}

	want := append(controlPlaneGrants("aws_dynamodb_table.keys.arn", "aws_dynamodb_table.route_state.arn",
		[]string{"dynamodb:BatchGetItem on aws_dynamodb_table.counters.arn", "dynamodb:GetItem on aws_dynamodb_table.counters.arn"}),
		"logs:CreateLogStream on aws_cloudwatch_log_group.control_plane.arn:*", "logs:PutLogEvents on aws_cloudwatch_log_group.control_plane.arn:*")
	sort.Strings(want)
	if got := rolePolicies(t, ctx, m, "control_plane"); !slices.Equal(got, want) {
		t.Errorf("control plane grants (no secrets) =\n %q\nwant %q", got, want)
	}
	secrets := tfContext(t, m, map[string]cty.Value{"control_plane_package_zip": cty.StringVal("z"),
		"secret_arns":               cty.ListVal([]cty.Value{cty.StringVal("arn:openai")}),
		"control_plane_secret_arns": cty.ListVal([]cty.Value{cty.StringVal("arn:session")})})
	cp := rolePolicies(t, secrets, m, "control_plane")
	for _, s := range []string{"arn:openai", "arn:session"} {
		if !slices.Contains(cp, "secretsmanager:GetSecretValue on "+s) {
			t.Errorf("the control plane cannot read %s: %q", s, cp)
		}
	}
	if slices.Contains(rolePolicies(t, secrets, m, "gateway"), "secretsmanager:GetSecretValue on arn:session") {
		t.Errorf("the gateway may read the control plane's secret")
	}

	url := m.find("resource", "aws_lambda_function_url", "control_plane")
	if valString(t, ctx, url, "authorization_type") != "NONE" || valString(t, ctx, url, "function_name") != "aws_lambda_function.control_plane.function_name" {
		t.Errorf("the control plane's URL must be public, on the control plane")
	}
	if _, ok := url.Body.Attributes["invoke_mode"]; ok {
		t.Errorf("the control plane's URL sets invoke_mode; it answers buffered")
	}
	pu := m.find("resource", "aws_lambda_permission", "control_plane_url")
	pi := m.find("resource", "aws_lambda_permission", "control_plane_invoke")
	if valString(t, ctx, pu, "action") != "lambda:InvokeFunctionUrl" || valString(t, ctx, pu, "function_url_auth_type") != "NONE" || valString(t, ctx, pu, "principal") != "*" ||
		valString(t, ctx, pi, "action") != "lambda:InvokeFunction" || valString(t, ctx, pi, "invoked_via_function_url") != "true" || valString(t, ctx, pi, "principal") != "*" {
		t.Errorf("the control plane's URL lacks the two public permissions")
	}
	for _, p := range []*struct{ name string }{{"control_plane_url"}, {"control_plane_invoke"}} {
		if got := valString(t, ctx, m.find("resource", "aws_lambda_permission", p.name), "function_name"); got != "aws_lambda_function.control_plane.function_name" {
			t.Errorf("%s is on %s", p.name, got)
		}
	}
	for _, o := range []string{"control_plane_url", "control_plane_function_name"} {
		if m.find("output", o) == nil {
			t.Errorf("no %s output", o)
		}
	}

	t.Run("left out", func(t *testing.T) {
		off := tfContext(t, m, map[string]cty.Value{"control_plane": cty.False})
		for _, r := range tfControlPlaneAWS {
			if n := count(t, off, m.find("resource", r[0], r[1])); n != 0 {
				t.Errorf("%s.%s count = %d with control_plane = false", r[0], r[1], n)
			}
		}
		if n := count(t, off, m.find("data", "aws_iam_policy_document", "control_plane")); n != 0 {
			t.Errorf("the control plane's policy document remains")
		}
		for _, o := range []string{"control_plane_url", "control_plane_function_name"} {
			if v := val(t, off, m.find("output", o), "value"); !v.IsNull() {
				t.Errorf("output %s = %#v with control_plane = false, want null", o, v)
			}
		}
	})
}

// ---- Terraform GCP ----

func TestTerraformGCPKeyStore(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	ctx := tfContext(t, m, nil)
	db := m.find("resource", "google_firestore_database", "keys")
	if count(t, ctx, db) != 1 || valString(t, ctx, db, "type") != "FIRESTORE_NATIVE" {
		t.Errorf("without keys_database the module must create a native database")
	}
	if n := count(t, tfContext(t, m, map[string]cty.Value{"keys_database": cty.StringVal("existing")}), db); n != 0 {
		t.Errorf("with keys_database set the module still creates one")
	}
	if valString(t, ctx, db, "point_in_time_recovery_enablement") != "POINT_IN_TIME_RECOVERY_ENABLED" ||
		valString(t, ctx, db, "delete_protection_state") != "DELETE_PROTECTION_ENABLED" {
		t.Errorf("the keys database needs point-in-time recovery and delete protection by default")
	}
	const database = "google_firestore_database.keys.name"
	if got := valString(t, ctx, m.find("variable", "keys_collection"), "default"); got != config.DefaultKeysCollection {
		t.Errorf("keys_collection defaults to %s, the store's default is %s", got, config.DefaultKeysCollection)
	}
	checkVariableValidation(t, m, "keys_collection", []string{"fngate_keys", "keys"}, "a/b")

	// One key's or route's audit, newest first.
	idx := m.find("resource", "google_firestore_index", "keys_audit")
	if valString(t, ctx, idx, "collection") != config.DefaultKeysCollection+"_audit" || valString(t, ctx, idx, "database") != database ||
		valString(t, ctx, idx, "query_scope") != "COLLECTION" {
		t.Errorf("the audit index must be on %s_audit in the keys database", config.DefaultKeysCollection)
	}
	var fields []string
	for _, f := range idx.Body.Blocks {
		if f.Type == "fields" {
			fields = append(fields, valString(t, ctx, f, "field_path")+" "+valString(t, ctx, f, "order"))
		}
	}
	if want := []string{"target ASCENDING", "t DESCENDING", "__name__ DESCENDING"}; !slices.Equal(fields, want) {
		t.Errorf("audit index fields %v, want %v", fields, want)
	}
	for _, b := range m.all("resource") {
		if b.Labels[0] == "google_firestore_field" && strings.HasPrefix(b.Labels[1], "keys") {
			if _, ok := b.Body.Attributes["for_each"]; !ok && child(b, "ttl_config") != nil {
				t.Errorf("%v puts a TTL on the key store: tombstones and audit entries are kept for good", b.Labels)
			}
		}
	}

	// The gateway serves stored keys when public, or when told to: with a key store every
	// request needs a key, which a private function's callers (IAM alone) may not send.
	iam := m.find("resource", "google_project_iam_member", "gateway_keys")
	for _, c := range []struct {
		public bool
		stored cty.Value
		want   bool
	}{{true, cty.NullVal(cty.Bool), true}, {false, cty.NullVal(cty.Bool), false}, {false, cty.True, true}, {true, cty.False, false}} {
		cctx := tfContext(t, m, map[string]cty.Value{"public": cty.BoolVal(c.public), "stored_keys": c.stored})
		env := cctx.Variables["local"].GetAttr("environment")
		for k, want := range map[string]string{"KEYS_PROJECT": "var.project_id", "KEYS_DATABASE": database, "KEYS_COLLECTION": config.DefaultKeysCollection} {
			has := env.Type().HasAttribute(k)
			if has != c.want || has && env.GetAttr(k).AsString() != want {
				t.Errorf("public = %v, stored_keys = %#v: the gateway's %s present = %v, want %v (= %s)", c.public, c.stored, k, has, c.want, want)
			}
		}
		if c.want {
			checkStoreEnvRead(t, "the gateway", "../functions/gcf", "KEYS_", keysOf(env.AsValueMap()))
		}
		if got := count(t, cctx, iam); got != map[bool]int{true: 1, false: 0}[c.want] {
			t.Errorf("public = %v, stored_keys = %#v: %d read roles on the keys database for the gateway", c.public, c.stored, got)
		}
	}
	if valString(t, ctx, iam, "role") != "roles/datastore.viewer" || valString(t, ctx, iam, "member") != "google_service_account.gateway.member" {
		t.Errorf("the gateway must read the keys database (roles/datastore.viewer), no more")
	}
	if c := child(iam, "condition"); c == nil || !strings.HasSuffix(valString(t, ctx, c, "expression"), "/databases/"+database+"\"") {
		t.Errorf("the gateway's datastore.viewer must be conditioned on the keys database")
	}
	// No write role for the gateway on the keys database.
	for _, b := range m.all("resource") {
		if b.Labels[0] != "google_project_iam_member" || valString(t, ctx, b, "member") != "google_service_account.gateway.member" {
			continue
		}
		if c := child(b, "condition"); c != nil && strings.Contains(valString(t, ctx, c, "expression"), database) && valString(t, ctx, b, "role") != "roles/datastore.viewer" {
			t.Errorf("%v gives the gateway %s on the key store", b.Labels, valString(t, ctx, b, "role"))
		}
	}
	if !slices.Contains(refs(m.find("resource", "google_cloudfunctions2_function", "gateway"), "depends_on"), "google_project_iam_member.gateway_keys") {
		t.Errorf("the gateway must depend on its keys role")
	}
	if m.find("output", "keys_database") == nil {
		t.Errorf("no keys_database output")
	}
}

// TestTerraformGCPUsageHistory: the history items' TTL policy, on the field and collection
// the history store writes (firestorecounters: <prefix>usage, expires), in the counters
// database.
func TestTerraformGCPUsageHistory(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	ctx := tfContext(t, m, map[string]cty.Value{"counters_prefix": cty.StringVal("team_")})
	collection := "team_" + firestorecounters.UsageCollection
	ttl := m.find("resource", "google_firestore_field", "usage_ttl")
	if valString(t, ctx, ttl, "collection") != collection || valString(t, ctx, ttl, "field") != firestorecounters.TTLField || child(ttl, "ttl_config") == nil ||
		valString(t, ctx, ttl, "database") != "google_firestore_database.counters.name" {
		t.Errorf("the usage TTL must be on %s.%s in the counters database", collection, firestorecounters.TTLField)
	}
	un := m.find("resource", "google_firestore_field", "usage_unindexed")
	if valString(t, ctx, un, "collection") != collection || valString(t, ctx, un, "field") != "m" || len(child(un, "index_config").Body.Blocks) != 0 {
		t.Errorf("the per-model counts (m) must be exempt from indexing")
	}
	if !slices.Contains(refs(un, "depends_on"), "google_firestore_field.usage_ttl") {
		t.Errorf("field operations on one collection run one at a time: usage_unindexed must wait for usage_ttl")
	}
}

var tfControlPlaneGCP = [][2]string{{"google_service_account", "control_plane"}, {"google_project_iam_member", "control_plane_keys"},
	{"google_project_iam_member", "control_plane_counters"}, {"google_project_iam_member", "control_plane_route_state"},
	{"google_storage_bucket_object", "control_plane_source"}, {"google_cloudfunctions2_function", "control_plane"}}

func TestTerraformGCPControlPlane(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	if got := literal(t, m.find("variable", "control_plane"), "default"); !got.True() {
		t.Errorf("control_plane defaults to false; the templates deploy the control plane unless told not to")
	}
	ctx := tfContext(t, m, nil)
	for _, r := range tfControlPlaneGCP {
		if n := count(t, ctx, m.find("resource", r[0], r[1])); n != 1 {
			t.Errorf("%s.%s count = %d with control_plane at its default", r[0], r[1], n)
		}
	}
	fn := m.find("resource", "google_cloudfunctions2_function", "control_plane")
	build := child(fn, "build_config")
	entry := "ControlPlane" // CONTROLPLANE-ENV.md; the source, where it is on this branch, below
	if got := valString(t, ctx, build, "runtime"); got != "go125" {
		t.Errorf("control plane runtime %s, want go125", got)
	}
	if got := valString(t, ctx, build, "entry_point"); got != entry {
		t.Errorf("control plane entry point %s, want %s", got, entry)
	}
	if names, ok := registeredFunctions(t, "../functions/controlplane/gcf"); ok && !slices.Equal(names, []string{entry}) {
		t.Errorf("functions/controlplane/gcf registers %v, the module deploys %s", names, entry)
	}
	if !slices.Contains(refs(child(child(build, "source"), "storage_source"), "object"), "google_storage_bucket_object.control_plane_source") ||
		!slices.Contains(refs(m.find("resource", "google_storage_bucket_object", "control_plane_source"), "source"), "var.control_plane_source_zip") {
		t.Errorf("the control plane's build must use var.control_plane_source_zip")
	}
	if pre := child(child(m.find("resource", "google_storage_bucket_object", "control_plane_source"), "lifecycle"), "precondition"); pre == nil ||
		!slices.Contains(refs(pre, "condition"), "var.control_plane_source_zip") {
		t.Errorf("the control plane's upload needs a precondition naming control_plane_source_zip")
	}
	svc := child(fn, "service_config")
	if valString(t, ctx, svc, "service_account_email") != "google_service_account.control_plane.email" {
		t.Errorf("the control plane must run as its own account")
	}
	if n, _ := val(t, ctx, svc, "timeout_seconds").AsBigFloat().Int64(); n > 300 {
		t.Errorf("control plane timeout %d s; an admin call is a few store calls", n)
	}
	env := val(t, ctx, svc, "environment_variables").AsValueMap()
	for k, want := range map[string]string{
		"KEYS_PROJECT": "var.project_id", "KEYS_DATABASE": "google_firestore_database.keys.name", "KEYS_COLLECTION": config.DefaultKeysCollection,
		"COUNTERS_DATABASE": "google_firestore_database.counters.name", "ROUTE_STATE_DATABASE": "google_firestore_database.route_state.name",
	} {
		if got, ok := env[k]; !ok || got.AsString() != want {
			t.Errorf("control plane %s = %v, want %s", k, got, want)
		}
	}
	checkMainEnv(t, "the control plane", "../functions/controlplane/gcf", controlPlaneGCFEnv, keysOf(env))
	// The same config file as the gateway's.
	withConfig := tfContext(t, m, map[string]cty.Value{"config_yaml": cty.StringVal("models: {}")})
	if got := val(t, withConfig, svc, "environment_variables").GetAttr("FNGATE_CONFIG"); got.AsString() != withConfig.Variables["local"].GetAttr("environment").GetAttr("FNGATE_CONFIG").AsString() {
		t.Errorf("the control plane's FNGATE_CONFIG %s is not the gateway's", got.AsString())
	}
	var dyn []string
	for _, b := range svc.Body.Blocks {
		if b.Type == "dynamic" {
			dyn = append(dyn, b.Labels...)
		}
	}
	if !slices.Contains(dyn, "secret_volumes") || !slices.Contains(dyn, "secret_environment_variables") {
		t.Errorf("the control plane must mount the config and secret env as the gateway does, has %v", dyn)
	}

	// Firestore roles, each on one database: keys read and written, usage read, route
	// state read and written.
	for name, want := range map[string][2]string{
		"control_plane_keys":        {"roles/datastore.user", "/databases/google_firestore_database.keys.name\""},
		"control_plane_counters":    {"roles/datastore.viewer", "/databases/google_firestore_database.counters.name\""},
		"control_plane_route_state": {"roles/datastore.user", "/databases/google_firestore_database.route_state.name\""},
	} {
		b := m.find("resource", "google_project_iam_member", name)
		if valString(t, ctx, b, "role") != want[0] || valString(t, ctx, b, "member") != "google_service_account.control_plane.member" {
			t.Errorf("%s: want %s for the control plane", name, want[0])
		}
		if c := child(b, "condition"); c == nil || !strings.HasSuffix(valString(t, ctx, c, "expression"), want[1]) {
			t.Errorf("%s must be conditioned on its database (%s)", name, want[1])
		}
	}
	if d := refs(fn, "depends_on"); !slices.Contains(d, "google_project_iam_member.control_plane_keys") {
		t.Errorf("the control plane must depend on its roles, got %v", d)
	}
	// Secrets: the gateway's (it loads the same config) and its own; the gateway never gets its own.
	secrets := tfContext(t, m, map[string]cty.Value{"secret_ids": cty.ListVal([]cty.Value{cty.StringVal("openai")}),
		"control_plane_secret_ids": cty.ListVal([]cty.Value{cty.StringVal("session")})})
	cpSecrets := valStrings(t, secrets, localsWith(t, m, "control_plane_secrets"), "control_plane_secrets")
	if !slices.Contains(cpSecrets, "openai") || !slices.Contains(cpSecrets, "session") {
		t.Errorf("the control plane reads the secrets %v, want openai and session", cpSecrets)
	}
	if slices.Contains(valStrings(t, secrets, localsWith(t, m, "readable_secrets"), "readable_secrets"), "session") {
		t.Errorf("the gateway may read the control plane's secret")
	}
	sm := m.find("resource", "google_secret_manager_secret_iam_member", "control_plane")
	if valString(t, ctx, sm, "role") != "roles/secretmanager.secretAccessor" || !slices.Contains(refs(sm, "for_each"), "local.control_plane_secrets") {
		t.Errorf("the control plane's secret access must be secretAccessor on local.control_plane_secrets")
	}

	inv := m.find("resource", "google_cloud_run_service_iam_member", "control_plane_invoker")
	if valString(t, ctx, inv, "role") != "roles/run.invoker" || valString(t, ctx, inv, "service") != "google_cloudfunctions2_function.control_plane.name" {
		t.Errorf("the control plane's invoker must be roles/run.invoker on its service")
	}
	if got := valStrings(t, ctx, inv, "for_each"); !slices.Equal(got, []string{"allUsers"}) {
		t.Errorf("the control plane is invoked by %v by default, want allUsers (the admin API authenticates every call)", got)
	}
	for _, o := range []string{"control_plane_url", "control_plane_service_account_email"} {
		if m.find("output", o) == nil {
			t.Errorf("no %s output", o)
		}
	}

	t.Run("left out", func(t *testing.T) {
		off := tfContext(t, m, map[string]cty.Value{"control_plane": cty.False})
		for _, r := range tfControlPlaneGCP {
			if n := count(t, off, m.find("resource", r[0], r[1])); n != 0 {
				t.Errorf("%s.%s count = %d with control_plane = false", r[0], r[1], n)
			}
		}
		if got := valStrings(t, off, inv, "for_each"); len(got) != 0 {
			t.Errorf("invokers %v remain with control_plane = false", got)
		}
		if got := valStrings(t, off, localsWith(t, m, "control_plane_secrets"), "control_plane_secrets"); len(got) != 0 {
			t.Errorf("secret access %v remains with control_plane = false", got)
		}
		for _, o := range []string{"control_plane_url", "control_plane_service_account_email"} {
			if v := val(t, off, m.find("output", o), "value"); !v.IsNull() {
				t.Errorf("output %s = %#v with control_plane = false, want null", o, v)
			}
		}
		// The key store stays.
		if count(t, off, m.find("resource", "google_firestore_database", "keys")) != 1 {
			t.Errorf("the keys database goes with the control plane")
		}
	})
}

// registeredFunctions lists what dir's non-test files register with functions.HTTP; ok is
// false when dir is not on this branch.
func registeredFunctions(t *testing.T, dir string) (names []string, ok bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(files) == 0 {
		return nil, false
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		consts := map[string]string{}
		ast.Inspect(file, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[id.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
			return true
		})
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "HTTP" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "functions" {
				return true
			}
			switch a := call.Args[0].(type) {
			case *ast.BasicLit:
				s, _ := strconv.Unquote(a.Value)
				names = append(names, s)
			case *ast.Ident:
				names = append(names, consts[a.Name])
			}
			return true
		})
	}
	return names, true
}

// TestTemplatesSetWhatTheGatewayReads: what the gateway's mains read (their source on this
// branch, the key store's variables included once they are wired) is set by every template.
// PROVIDER_ERROR_BUS is set on the EventBridge path only, the key store's variables with a
// public URL (or function) only: those are the ones checked here.
func TestTemplatesSetWhatTheGatewayReads(t *testing.T) {
	sam := samFor(t, map[string]any{"ErrorDelivery": "EventBridge", "UrlAuthType": "NONE"})
	checkMainEnv(t, "the gateway (SAM)", "../functions/lambda", nil,
		keysOf(dig(sam.res, "GatewayFunction", "Properties", "Environment", "Variables").(map[string]any)))
	aws := parseModule(t, "terraform/aws")
	checkMainEnv(t, "the gateway (Terraform AWS)", "../functions/lambda", nil,
		keysOf(tfContext(t, aws, map[string]cty.Value{"url_auth_type": cty.StringVal("NONE")}).Variables["local"].GetAttr("environment").AsValueMap()))
	gcp := parseModule(t, "terraform/gcp")
	checkMainEnv(t, "the gateway (Terraform GCP)", "../functions/gcf", nil,
		keysOf(tfContext(t, gcp, map[string]cty.Value{"public": cty.True}).Variables["local"].GetAttr("environment").AsValueMap()))
}

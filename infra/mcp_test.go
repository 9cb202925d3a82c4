package infra

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"

	"github.com/fngate/fngate/core/config"
	mcpdynamo "github.com/fngate/fngate/core/mcpsessions/dynamostore"
	mcpfirestore "github.com/fngate/fngate/core/mcpsessions/firestorestore"
)

// The MCP gateway (/mcp): the upstream servers' secrets, the gateway's alone, and the store of
// the sessions the protocol versions before 2026-07-28 open, read by every instance.

// The sessions stores' schema is theirs; the environment names are the mains' (Lambda's is
// behind the mcp build tag, so spelled here), which checkStoreEnvRead compares with what the
// functions' source reads.
const (
	mcpSessionsKey              = mcpdynamo.KeyPartition
	mcpSessionsTTL              = mcpdynamo.AttrTTL
	mcpSessionsFirestoreTTL     = mcpfirestore.TTLField
	envMCPSessionsTable         = "FNGATE_MCP_SESSIONS_TABLE"
	envMCPSessionsProject       = "FNGATE_MCP_SESSIONS_PROJECT"
	envMCPSessionsDatabase      = "FNGATE_MCP_SESSIONS_DATABASE"
	envMCPSessionsCollection    = "FNGATE_MCP_SESSIONS_COLLECTION"
	mcpSessionsEnvPrefix        = "FNGATE_MCP_SESSIONS_"
	getSecretValue              = "secretsmanager:GetSecretValue"
	samMCPSessionsTableArn      = "GetAtt:McpSessionsTable.Arn"
	tfMCPSessionsTableReference = "aws_dynamodb_table.mcp_sessions"
)

// A session is read, written and forgotten by its id: nothing that lists sessions.
var (
	samMCPSessionsGrants = []string{"dynamodb:DeleteItem on " + samMCPSessionsTableArn, "dynamodb:GetItem on " + samMCPSessionsTableArn,
		"dynamodb:PutItem on " + samMCPSessionsTableArn}
	tfMCPSessionsGrants = []string{"dynamodb:DeleteItem on aws_dynamodb_table.mcp_sessions.arn", "dynamodb:GetItem on aws_dynamodb_table.mcp_sessions.arn",
		"dynamodb:PutItem on aws_dynamodb_table.mcp_sessions.arn"}
)

var (
	testConfigSecretArn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:openai-AbCdEf"
	testMCPSecretArns   = []string{
		"arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp/github-??????",
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:mcp/linear-Xy12Zw",
	}
	goodMCPSecretArns = slices.Concat(testMCPSecretArns, []string{"arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:mcp_token+1=@.x"})
	badMCPSecretArns  = []string{
		"mcp/github", // what an aws-sm:// reference names; IAM matches ARNs
		"aws-sm://mcp/github#token",
		"arn:aws:secretsmanager:us-east-1:12345:secret:mcp",
		"arn:aws:bedrock:us-east-1:123456789012:guardrail/gr1",
		"arn:aws:secretsmanager:us-east-1:123456789012:secret:",
	}
)

// ---- SAM ----

// TestTemplateMCPSessions: McpSessions (on by default) creates the table, hands it to the
// gateway and lets it get, put and delete items there; off, none of it exists.
func TestTemplateMCPSessions(t *testing.T) {
	p := at(rawTemplate(t), "Parameters", "McpSessions")
	if p == nil || at(p, "Default") == nil || at(p, "Default").Value != "true" {
		t.Fatalf("McpSessions must default to \"true\"")
	}
	for _, tc := range []struct {
		name   string
		params map[string]any
		on     bool
	}{
		{"default", nil, true},
		{"true", map[string]any{"McpSessions": "true"}, true},
		{"false", map[string]any{"McpSessions": "false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := samFor(t, tc.params)
			if v.conds["HasMcpSessions"] != tc.on {
				t.Errorf("HasMcpSessions = %v, want %v", v.conds["HasMcpSessions"], tc.on)
			}
			gw := v.res["GatewayFunction"]
			env := dig(gw, "Properties", "Environment", "Variables", envMCPSessionsTable)
			var onTable []string
			for _, g := range functionGrants(t, gw) {
				if strings.HasSuffix(g, "McpSessionsTable.Arn") {
					onTable = append(onTable, g)
				}
			}
			if !tc.on {
				if _, ok := v.res["McpSessionsTable"]; ok {
					t.Errorf("McpSessions = false still creates McpSessionsTable")
				}
				if env != nil || len(onTable) > 0 || v.out["McpSessionsTableName"] != nil {
					t.Errorf("McpSessions = false: %s = %v, grants %q, output %v; want none", envMCPSessionsTable, env, onTable, v.out["McpSessionsTableName"])
				}
				return
			}
			tbl, err := v.tmpl.GetDynamoDBTableWithName("McpSessionsTable")
			if err != nil {
				t.Fatal(err)
			}
			if tbl.BillingMode == nil || *tbl.BillingMode != "PAY_PER_REQUEST" {
				t.Errorf("McpSessionsTable BillingMode = %v, want PAY_PER_REQUEST", tbl.BillingMode)
			}
			if len(tbl.KeySchema) != 1 || tbl.KeySchema[0].KeyType != "HASH" || tbl.KeySchema[0].AttributeName != mcpSessionsKey {
				t.Errorf("McpSessionsTable keys = %+v, want %s alone (hash)", tbl.KeySchema, mcpSessionsKey)
			}
			if len(tbl.AttributeDefinitions) != 1 || tbl.AttributeDefinitions[0].AttributeName != mcpSessionsKey || tbl.AttributeDefinitions[0].AttributeType != "S" {
				t.Errorf("McpSessionsTable attributes = %+v, want %s (S) only", tbl.AttributeDefinitions, mcpSessionsKey)
			}
			if ttl := tbl.TimeToLiveSpecification; ttl == nil || ttl.AttributeName == nil || *ttl.AttributeName != mcpSessionsTTL || !ttl.Enabled {
				t.Errorf("McpSessionsTable TTL = %+v, want enabled on %s", ttl, mcpSessionsTTL)
			}
			if env != "Ref:McpSessionsTable" {
				t.Errorf("gateway %s = %v, want Ref:McpSessionsTable", envMCPSessionsTable, env)
			}
			if !slices.Equal(onTable, samMCPSessionsGrants) {
				t.Errorf("gateway grants on McpSessionsTable = %q, want exactly %q", onTable, samMCPSessionsGrants)
			}
			for name, res := range v.res {
				if name != "GatewayFunction" && name != "McpSessionsTable" && strings.Contains(stringsOf(res), "McpSessionsTable") {
					t.Errorf("%s uses McpSessionsTable; only the gateway keeps MCP sessions", name)
				}
			}
			if v.out["McpSessionsTableName"] == nil {
				t.Errorf("no McpSessionsTableName output")
			}
		})
	}

	raw := at(rawTemplate(t), "Resources", "McpSessionsTable")
	if c := at(raw, "Condition"); c == nil || c.Value != "HasMcpSessions" {
		t.Errorf("McpSessionsTable.Condition = %s, want HasMcpSessions", scalar(c))
	}
	for _, p := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if at(raw, p) == nil {
			t.Errorf("McpSessionsTable has no %s: say what happens to open sessions with the stack", p)
		}
	}
	// /mcp answers in SSE over the function URL: a buffered URL would hold every event back
	// until the response ends.
	if m := at(rawTemplate(t), "Resources", "GatewayFunction", "Properties", "FunctionUrlConfig", "InvokeMode"); m == nil || m.Value != "RESPONSE_STREAM" {
		t.Errorf("the gateway's InvokeMode = %s, want RESPONSE_STREAM (/mcp streams SSE)", scalar(m))
	}
}

// TestTemplateMCPSecrets: McpSecretArns grants the gateway GetSecretValue on exactly those ARNs,
// under a condition so the empty default grants nothing, and no other function ever (the
// control plane reads SecretArns, not these).
func TestTemplateMCPSecrets(t *testing.T) {
	for _, tc := range []struct {
		name string
		arns []string
	}{
		{"none", nil},
		{"one", testMCPSecretArns[:1]},
		{"several", testMCPSecretArns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := map[string]any{"SecretArns": anyList([]string{testConfigSecretArn})}
			if tc.arns != nil {
				params["McpSecretArns"] = anyList(tc.arns)
			}
			v := samFor(t, params)
			if v.conds["HasMcpSecrets"] != (len(tc.arns) > 0) {
				t.Errorf("HasMcpSecrets = %v with %d ARNs", v.conds["HasMcpSecrets"], len(tc.arns))
			}
			want := []string{getSecretValue + " on " + testConfigSecretArn}
			for _, a := range tc.arns {
				want = append(want, getSecretValue+" on "+a)
			}
			slices.Sort(want)
			var got []string
			for _, g := range functionGrants(t, v.res["GatewayFunction"]) {
				if strings.HasPrefix(g, "secretsmanager:") {
					got = append(got, g)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("gateway secretsmanager grants = %q, want exactly %q", got, want)
			}
			for name, res := range v.res {
				if name == "GatewayFunction" {
					continue
				}
				for _, a := range tc.arns {
					if strings.Contains(stringsOf(res), a) {
						t.Errorf("%s is granted the MCP secret %s; only the gateway calls MCP servers", name, a)
					}
				}
			}
		})
	}

	root := rawTemplate(t)
	var statement string
	for _, p := range at(root, "Resources", "GatewayFunction", "Properties", "Policies").Content {
		if p.Tag == "!If" && len(p.Content) == 3 && p.Content[0].Value == "HasMcpSecrets" {
			statement = scalar(at(p.Content[1].Content[1].Content[0], "Resource"))
			if a := at(p.Content[1].Content[1].Content[0], "Action"); a == nil || a.Value != getSecretValue {
				t.Errorf("the HasMcpSecrets statement allows %s, want %s alone", scalar(a), getSecretValue)
			}
		}
	}
	if statement != "!Ref McpSecretArns" {
		t.Errorf("the gateway's MCP secrets statement: resource %s under HasMcpSecrets, want !Ref McpSecretArns", statement)
	}
	if c := at(root, "Conditions", "HasMcpSecrets"); c == nil || !strings.Contains(stringsOfNode(c), "McpSecretArns") {
		t.Errorf("Conditions.HasMcpSecrets must test McpSecretArns")
	}

	p := at(root, "Parameters", "McpSecretArns")
	if p == nil || at(p, "Type").Value != "CommaDelimitedList" || at(p, "Default") == nil || at(p, "Default").Value != "" {
		t.Fatalf("McpSecretArns must be a CommaDelimitedList defaulting to empty")
	}
	pattern, err := regexp.Compile(at(p, "AllowedPattern").Value)
	if err != nil {
		t.Fatalf("McpSecretArns AllowedPattern: %v", err)
	}
	if !pattern.MatchString("") {
		t.Errorf("McpSecretArns AllowedPattern refuses its own empty default")
	}
	for _, a := range goodMCPSecretArns {
		if !pattern.MatchString(a) {
			t.Errorf("McpSecretArns AllowedPattern refuses %s", a)
		}
	}
	for _, a := range badMCPSecretArns {
		if pattern.MatchString(a) {
			t.Errorf("McpSecretArns AllowedPattern accepts %s", a)
		}
	}
}

// stringsOfNode is every scalar under n, space-separated.
func stringsOfNode(n *yaml.Node) string {
	var b strings.Builder
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		b.WriteString(n.Value + " ")
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// TestTemplateMCPCfnLint: cfn-lint checks McpSecretArns' default against its pattern, so a
// secret's name as the default fails it.
func TestTemplateMCPCfnLint(t *testing.T) {
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not on PATH: skipping the template lint (pip install cfn-lint)")
	}
	b, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "  McpSecretArns:")
	j := strings.Index(s[i:], `Default: ""`)
	if i < 0 || j < 0 {
		t.Fatal("no McpSecretArns parameter with an empty default")
	}
	bad := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(bad, []byte(s[:i+j]+`Default: "mcp/github"`+s[i+j+len(`Default: ""`):]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, bad).CombinedOutput(); err == nil {
		t.Errorf("cfn-lint accepted a secret name as McpSecretArns:\n%s", out)
	}
}

// ---- Terraform ----

// TestTerraformAWSMCPSessions: mcp_sessions (on by default) creates the table, puts it in the
// gateway's environment and grants get, put and delete on it; off, none of it.
func TestTerraformAWSMCPSessions(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	if got := literal(t, m.find("variable", "mcp_sessions"), "default"); !got.True() {
		t.Errorf("mcp_sessions defaults to %#v, want true", got)
	}
	tbl := m.find("resource", "aws_dynamodb_table", "mcp_sessions")
	for _, on := range []bool{true, false} {
		ctx := tfContext(t, m, map[string]cty.Value{"mcp_sessions": cty.BoolVal(on)})
		env := ctx.Variables["local"].GetAttr("environment")
		var onTable []string
		for _, g := range rolePolicies(t, ctx, m, "gateway") {
			if strings.Contains(g, tfMCPSessionsTableReference) {
				onTable = append(onTable, g)
			}
		}
		if !on {
			if count(t, ctx, tbl) != 0 || env.Type().HasAttribute(envMCPSessionsTable) || len(onTable) > 0 {
				t.Errorf("mcp_sessions = false: %d tables, %s set %v, grants %q; want none", count(t, ctx, tbl), envMCPSessionsTable,
					env.Type().HasAttribute(envMCPSessionsTable), onTable)
			}
			continue
		}
		if count(t, ctx, tbl) != 1 {
			t.Fatalf("mcp_sessions = true creates %d tables", count(t, ctx, tbl))
		}
		if valString(t, ctx, tbl, "hash_key") != mcpSessionsKey || valString(t, ctx, tbl, "billing_mode") != "PAY_PER_REQUEST" {
			t.Errorf("mcp_sessions table: want hash key %s, on-demand", mcpSessionsKey)
		}
		if _, ok := tbl.Body.Attributes["range_key"]; ok {
			t.Errorf("mcp_sessions table has a range key; sessions are found by %s alone", mcpSessionsKey)
		}
		var attrs []string
		for _, a := range tbl.Body.Blocks {
			if a.Type == "attribute" {
				attrs = append(attrs, valString(t, ctx, a, "name")+":"+valString(t, ctx, a, "type"))
			}
		}
		if !slices.Equal(attrs, []string{mcpSessionsKey + ":S"}) {
			t.Errorf("mcp_sessions table attributes %v", attrs)
		}
		if ttl := child(tbl, "ttl"); valString(t, ctx, ttl, "attribute_name") != mcpSessionsTTL || valString(t, ctx, ttl, "enabled") != "true" {
			t.Errorf("mcp_sessions ttl must be enabled on %s", mcpSessionsTTL)
		}
		if !env.Type().HasAttribute(envMCPSessionsTable) || env.GetAttr(envMCPSessionsTable).AsString() != tfMCPSessionsTableReference+".name" {
			t.Errorf("gateway environment lacks %s = the mcp_sessions table: %#v", envMCPSessionsTable, env)
		}
		if !slices.Equal(onTable, tfMCPSessionsGrants) {
			t.Errorf("gateway grants on the mcp_sessions table = %q, want exactly %q", onTable, tfMCPSessionsGrants)
		}
		for _, role := range []string{"remediation", "control_plane", "sweep"} {
			for _, g := range rolePolicies(t, ctx, m, role) {
				if strings.Contains(g, "mcp_sessions") {
					t.Errorf("the %s role has %s; only the gateway keeps MCP sessions", role, g)
				}
			}
		}
	}
	if !slices.Contains(refs(m.find("resource", "aws_lambda_function", "gateway"), "depends_on"), "aws_iam_role_policy.mcp_sessions") {
		t.Errorf("the gateway must depend on its mcp_sessions policy, or its first initialize may be denied")
	}
	if o := m.find("output", "mcp_sessions_table_name"); o == nil || !slices.Contains(refs(o, "value"), tfMCPSessionsTableReference) {
		t.Errorf("no mcp_sessions_table_name output of the table")
	}
	// /mcp answers in SSE over the function URL (TestTerraformAWS checks it too).
	if v := literal(t, m.find("resource", "aws_lambda_function_url", "gateway"), "invoke_mode"); v.AsString() != "RESPONSE_STREAM" {
		t.Errorf("invoke_mode = %s, want RESPONSE_STREAM (/mcp streams SSE)", v.AsString())
	}
	checkStoreEnvRead(t, "the gateway (Terraform AWS)", "../functions/lambda", mcpSessionsEnvPrefix,
		keysOf(tfContext(t, m, nil).Variables["local"].GetAttr("environment").AsValueMap()))
	checkStoreEnvRead(t, "the gateway (SAM)", "../functions/lambda", mcpSessionsEnvPrefix,
		keysOf(dig(samFor(t, nil).res, "GatewayFunction", "Properties", "Environment", "Variables").(map[string]any)))
}

// TestTerraformAWSMCPSecrets: mcp_secret_arns grants the gateway role GetSecretValue on exactly
// those ARNs (and the secrets' KMS key, whether or not secret_arns is set), no policy at all when
// empty, no other role ever, and refuses what is not a secret's ARN.
func TestTerraformAWSMCPSecrets(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	if got := literal(t, m.find("variable", "mcp_secret_arns"), "default"); got.LengthInt() != 0 {
		t.Errorf("mcp_secret_arns defaults to %#v, want []", got)
	}
	pol := m.find("resource", "aws_iam_role_policy", "mcp_secrets")
	for _, arns := range [][]string{nil, testMCPSecretArns[:1], testMCPSecretArns} {
		ctx := tfContext(t, m, map[string]cty.Value{"mcp_secret_arns": ctyStrings(arns)})
		var want []string
		for _, a := range arns {
			want = append(want, getSecretValue+" on "+a)
		}
		slices.Sort(want)
		var got []string
		for _, g := range rolePolicies(t, ctx, m, "gateway") {
			if strings.HasPrefix(g, "secretsmanager:") {
				got = append(got, g)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d ARNs: gateway secretsmanager grants = %q, want exactly %q", len(arns), got, want)
		}
		if n := count(t, ctx, pol); n != min(len(arns), 1) {
			t.Errorf("%d ARNs: %d mcp_secrets policies, want %d", len(arns), n, min(len(arns), 1))
		}
		for _, role := range []string{"remediation", "control_plane", "sweep"} {
			for _, g := range rolePolicies(t, ctx, m, role) {
				for _, a := range arns {
					if strings.HasSuffix(g, " on "+a) {
						t.Errorf("the %s role has %s; only the gateway calls MCP servers", role, g)
					}
				}
			}
		}
	}
	const key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	ctx := tfContext(t, m, map[string]cty.Value{"mcp_secret_arns": ctyStrings(testMCPSecretArns), "secrets_kms_key_arn": cty.StringVal(key)})
	if grants, _ := policy(t, ctx, m.find("data", "aws_iam_policy_document", "mcp_secrets")); !slices.Contains(grants, "kms:Decrypt on "+key) {
		t.Errorf("with secrets_kms_key_arn and no secret_arns the MCP secrets cannot be decrypted: %q", grants)
	}
	if !slices.Contains(refs(pol, "role"), "aws_iam_role.gateway") {
		t.Errorf("the mcp_secrets policy must be the gateway role's, not %v", refs(pol, "role"))
	}
	if !slices.Contains(refs(m.find("resource", "aws_lambda_function", "gateway"), "depends_on"), "aws_iam_role_policy.mcp_secrets") {
		t.Errorf("the gateway must depend on its mcp_secrets policy, or its first call to an upstream may be denied")
	}
	checkListValidation(t, m, "mcp_secret_arns", goodMCPSecretArns, badMCPSecretArns)
}

// TestTerraformGCPMCP: mcp_secret_ids are the gateway's to read (not the control plane's);
// mcp_sessions (on by default) puts a TTL policy on expires_at of fngate_mcp_sessions in the
// responses database, where the gateway already reads and writes, and tells the gateway where.
func TestTerraformGCPMCP(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	if got := literal(t, m.find("variable", "mcp_secret_ids"), "default"); got.LengthInt() != 0 {
		t.Errorf("mcp_secret_ids defaults to %#v, want []", got)
	}
	if got := literal(t, m.find("variable", "mcp_sessions"), "default"); !got.True() {
		t.Errorf("mcp_sessions defaults to %#v, want true", got)
	}

	secrets := tfContext(t, m, map[string]cty.Value{"secret_ids": ctyStrings([]string{"openai"}), "mcp_secret_ids": ctyStrings([]string{"mcp-github", "openai"})})
	gw := valStrings(t, secrets, localsWith(t, m, "gateway_secrets"), "gateway_secrets")
	if !slices.Equal(gw, []string{"mcp-github", "openai"}) {
		t.Errorf("the gateway reads the secrets %v, want mcp-github and openai, each once", gw)
	}
	if cp := valStrings(t, secrets, localsWith(t, m, "control_plane_secrets"), "control_plane_secrets"); slices.Contains(cp, "mcp-github") {
		t.Errorf("the control plane may read the MCP secret mcp-github: %v", cp)
	}
	sm := m.find("resource", "google_secret_manager_secret_iam_member", "gateway")
	if valString(t, secrets, sm, "role") != "roles/secretmanager.secretAccessor" || valString(t, secrets, sm, "member") != "google_service_account.gateway.member" ||
		!slices.Equal(refs(sm, "for_each"), []string{"local.gateway_secrets"}) {
		t.Errorf("the gateway's secret access must be secretAccessor for its service account on local.gateway_secrets")
	}
	checkListValidation(t, m, "mcp_secret_ids", []string{"mcp-github", "MCP_token_2"}, []string{"projects/p/secrets/mcp-github", "gcp-sm://projects/p/secrets/mcp-github", ""})

	ttl := m.find("resource", "google_firestore_field", "mcp_sessions_ttl")
	const database = "google_firestore_database.responses.name"
	for _, on := range []bool{true, false} {
		ctx := tfContext(t, m, map[string]cty.Value{"mcp_sessions": cty.BoolVal(on)})
		env := ctx.Variables["local"].GetAttr("environment")
		if !on {
			if count(t, ctx, ttl) != 0 {
				t.Errorf("mcp_sessions = false still sets the TTL policy")
			}
			for _, k := range []string{envMCPSessionsProject, envMCPSessionsDatabase, envMCPSessionsCollection} {
				if env.Type().HasAttribute(k) {
					t.Errorf("mcp_sessions = false still sets %s", k)
				}
			}
			continue
		}
		if count(t, ctx, ttl) != 1 || valString(t, ctx, ttl, "collection") != config.DefaultMCPSessionsCollection ||
			valString(t, ctx, ttl, "field") != mcpSessionsFirestoreTTL || child(ttl, "ttl_config") == nil || valString(t, ctx, ttl, "database") != database {
			t.Errorf("the TTL policy must be on field %s of %s in the responses database", mcpSessionsFirestoreTTL, config.DefaultMCPSessionsCollection)
		}
		for k, want := range map[string]string{envMCPSessionsProject: "var.project_id", envMCPSessionsDatabase: database,
			envMCPSessionsCollection: config.DefaultMCPSessionsCollection} {
			if !env.Type().HasAttribute(k) {
				t.Errorf("the gateway lacks %s", k)
			} else if got := env.GetAttr(k); !got.IsKnown() || got.AsString() != want {
				t.Errorf("%s = %#v, want %s", k, got, want)
			}
		}
		// The sessions live where the gateway's datastore.user already reaches.
		iam := m.find("resource", "google_project_iam_member", "gateway_responses")
		if c := child(iam, "condition"); c == nil || !strings.HasSuffix(valString(t, ctx, c, "expression"), "/databases/"+database+"\"") {
			t.Errorf("the sessions' database is not the one the gateway's datastore.user is conditioned on")
		}
		for _, fn := range []string{"remediation", "control_plane"} {
			b := m.find("resource", "google_cloudfunctions2_function", fn)
			if b == nil {
				continue
			}
			ev := val(t, ctx, child(b, "service_config"), "environment_variables")
			if ev.Type().HasAttribute(envMCPSessionsDatabase) {
				t.Errorf("the %s function is given the MCP sessions", fn)
			}
		}
		checkStoreEnvRead(t, "the gateway (Terraform GCP)", "../functions/gcf", mcpSessionsEnvPrefix, keysOf(env.AsValueMap()))
	}
}

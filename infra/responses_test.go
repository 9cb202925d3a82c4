package infra

import (
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fngate/fngate/core/config"
	respdynamo "github.com/fngate/fngate/core/responsestore/dynamostore"
	respfirestore "github.com/fngate/fngate/core/responsestore/firestorestore"
	"github.com/fngate/fngate/functions/gcf"
)

// The gateway's grants on the table of stored responses, in both AWS templates: the three
// calls dynamostore makes, nothing that reads the table wholesale (Query, Scan).
var (
	samResponsesGrants = []string{"dynamodb:DeleteItem on GetAtt:ResponsesTable.Arn", "dynamodb:GetItem on GetAtt:ResponsesTable.Arn",
		"dynamodb:PutItem on GetAtt:ResponsesTable.Arn"}
	tfResponsesGrants = []string{"dynamodb:DeleteItem on aws_dynamodb_table.responses.arn", "dynamodb:GetItem on aws_dynamodb_table.responses.arn",
		"dynamodb:PutItem on aws_dynamodb_table.responses.arn"}
)

// envResponsesTable is functions/lambda's EnvResponsesTable (a main package, which a test
// cannot import); TestBootstrapResponseStore checks the bootstrap reads it.
const envResponsesTable = "RESPONSES_TABLE"

func TestTemplateResponses(t *testing.T) {
	v := samFor(t, nil)
	tbl, err := v.tmpl.GetDynamoDBTableWithName("ResponsesTable")
	if err != nil {
		t.Fatal(err)
	}
	if tbl.BillingMode == nil || *tbl.BillingMode != "PAY_PER_REQUEST" {
		t.Errorf("ResponsesTable BillingMode = %v, want PAY_PER_REQUEST", tbl.BillingMode)
	}
	if len(tbl.KeySchema) != 1 || tbl.KeySchema[0].KeyType != "HASH" || tbl.KeySchema[0].AttributeName != respdynamo.KeyPartition {
		t.Errorf("ResponsesTable keys = %+v, dynamostore uses %s alone (hash)", tbl.KeySchema, respdynamo.KeyPartition)
	}
	if len(tbl.AttributeDefinitions) != 1 || tbl.AttributeDefinitions[0].AttributeType != "S" {
		t.Errorf("ResponsesTable attributes = %+v, want %s (S) only", tbl.AttributeDefinitions, respdynamo.KeyPartition)
	}
	if ttl := tbl.TimeToLiveSpecification; ttl == nil || ttl.AttributeName == nil || *ttl.AttributeName != respdynamo.AttrTTL || !ttl.Enabled {
		t.Errorf("ResponsesTable TTL = %+v, want enabled on %s", ttl, respdynamo.AttrTTL)
	}
	raw := at(rawTemplate(t), "Resources", "ResponsesTable")
	for _, p := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if at(raw, p) == nil {
			t.Errorf("ResponsesTable has no %s: say what happens to stored responses with the stack", p)
		}
	}

	gw := v.res["GatewayFunction"]
	if got := dig(gw, "Properties", "Environment", "Variables", envResponsesTable); got != "Ref:ResponsesTable" {
		t.Errorf("gateway %s = %v, want Ref:ResponsesTable", envResponsesTable, got)
	}
	var onTable []string
	for _, g := range functionGrants(t, gw) {
		if strings.HasSuffix(g, "ResponsesTable.Arn") {
			onTable = append(onTable, g)
		}
	}
	if !slices.Equal(onTable, samResponsesGrants) {
		t.Errorf("gateway grants on ResponsesTable = %q, want exactly %q", onTable, samResponsesGrants)
	}
	for _, g := range functionGrants(t, v.res["RemediationFunction"]) {
		if strings.Contains(g, "ResponsesTable") {
			t.Errorf("the remediation function has %s; it has no business with stored responses", g)
		}
	}
	if v.out["ResponsesTableName"] == nil {
		t.Errorf("no ResponsesTableName output")
	}
}

func TestTerraformAWSResponses(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	ctx := tfContext(t, m, nil)
	tbl := m.find("resource", "aws_dynamodb_table", "responses")
	if valString(t, ctx, tbl, "hash_key") != respdynamo.KeyPartition || valString(t, ctx, tbl, "billing_mode") != "PAY_PER_REQUEST" {
		t.Errorf("responses table: want hash key %s, on-demand", respdynamo.KeyPartition)
	}
	if _, ok := tbl.Body.Attributes["range_key"]; ok {
		t.Errorf("responses table has a range key; dynamostore uses %s alone", respdynamo.KeyPartition)
	}
	var attrs []string
	for _, a := range tbl.Body.Blocks {
		if a.Type == "attribute" {
			attrs = append(attrs, valString(t, ctx, a, "name")+":"+valString(t, ctx, a, "type"))
		}
	}
	if !slices.Equal(attrs, []string{respdynamo.KeyPartition + ":S"}) {
		t.Errorf("responses table attributes %v", attrs)
	}
	if ttl := child(tbl, "ttl"); valString(t, ctx, ttl, "attribute_name") != respdynamo.AttrTTL || valString(t, ctx, ttl, "enabled") != "true" {
		t.Errorf("responses ttl must be enabled on %s", respdynamo.AttrTTL)
	}
	env := ctx.Variables["local"].GetAttr("environment")
	if !env.Type().HasAttribute(envResponsesTable) || env.GetAttr(envResponsesTable).AsString() != "aws_dynamodb_table.responses.name" {
		t.Errorf("gateway environment lacks %s = the responses table: %#v", envResponsesTable, env)
	}
	var onTable []string
	for _, g := range rolePolicies(t, ctx, m, "gateway") {
		if strings.Contains(g, "aws_dynamodb_table.responses") {
			onTable = append(onTable, g)
		}
	}
	if !slices.Equal(onTable, tfResponsesGrants) {
		t.Errorf("gateway grants on the responses table = %q, want exactly %q", onTable, tfResponsesGrants)
	}
	for _, g := range rolePolicies(t, ctx, m, "remediation") {
		if strings.Contains(g, "responses") {
			t.Errorf("the remediation function has %s", g)
		}
	}
	if !slices.Contains(refs(m.find("resource", "aws_lambda_function", "gateway"), "depends_on"), "aws_iam_role_policy.responses") {
		t.Errorf("the gateway must depend on its responses policy, or its first Put may be denied")
	}
	if m.find("output", "responses_table_name") == nil {
		t.Errorf("no responses_table_name output")
	}
}

func TestTerraformGCPResponses(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	ctx := tfContext(t, m, nil)

	db := m.find("resource", "google_firestore_database", "responses")
	if count(t, ctx, db) != 1 || valString(t, ctx, db, "type") != "FIRESTORE_NATIVE" {
		t.Errorf("without responses_database the module must create a native database")
	}
	if n := count(t, tfContext(t, m, map[string]cty.Value{"responses_database": cty.StringVal("existing")}), db); n != 0 {
		t.Errorf("with responses_database set the module still creates one")
	}
	const database = "google_firestore_database.responses.name"
	// The collection's default is the store's, so a config without one finds it too.
	if got := valString(t, ctx, m.find("variable", "responses_collection"), "default"); got != config.DefaultResponsesCollection {
		t.Errorf("responses_collection defaults to %s, the gateway's default is %s", got, config.DefaultResponsesCollection)
	}
	checkVariableValidation(t, m, "responses_collection", []string{"fngate_responses", "chats"}, "a/b")

	ttl := m.find("resource", "google_firestore_field", "responses_ttl")
	if valString(t, ctx, ttl, "collection") != config.DefaultResponsesCollection || valString(t, ctx, ttl, "field") != respfirestore.TTLField ||
		child(ttl, "ttl_config") == nil || valString(t, ctx, ttl, "database") != database {
		t.Errorf("the TTL policy must be on field %s of the responses collection in the responses database", respfirestore.TTLField)
	}
	body := m.find("resource", "google_firestore_field", "responses_body")
	if ic := child(body, "index_config"); ic == nil || len(ic.Body.Blocks) != 0 || valString(t, ctx, body, "field") != "body" {
		t.Errorf("the compressed body must be exempt from indexing (an empty index_config)")
	}

	gwEnv := ctx.Variables["local"].GetAttr("environment")
	for k, want := range map[string]string{gcf.EnvResponsesProject: "var.project_id", gcf.EnvResponsesDatabase: database, gcf.EnvResponsesCollection: config.DefaultResponsesCollection} {
		if !gwEnv.Type().HasAttribute(k) {
			t.Errorf("the gateway lacks %s", k)
		} else if got := gwEnv.GetAttr(k); !got.IsKnown() || got.AsString() != want {
			t.Errorf("%s = %#v, want %s", k, got, want)
		}
	}
	rem := m.find("resource", "google_cloudfunctions2_function", "remediation")
	remEnv := val(t, ctx, child(rem, "service_config"), "environment_variables")
	if remEnv.Type().HasAttribute(gcf.EnvResponsesProject) {
		t.Errorf("the remediation function is given the responses store")
	}

	iam := m.find("resource", "google_project_iam_member", "gateway_responses")
	if valString(t, ctx, iam, "role") != "roles/datastore.user" || valString(t, ctx, iam, "member") != "google_service_account.gateway.member" {
		t.Errorf("the gateway must have roles/datastore.user for its responses")
	}
	if c := child(iam, "condition"); c == nil || !strings.HasSuffix(valString(t, ctx, c, "expression"), "/databases/"+database+"\"") {
		t.Errorf("the gateway's datastore.user must be conditioned on the responses database alone")
	}
	// Route state stays read-only to the gateway: no write role on its database.
	for _, b := range m.all("resource") {
		if b.Labels[0] != "google_project_iam_member" || valString(t, ctx, b, "member") != "google_service_account.gateway.member" {
			continue
		}
		if c := child(b, "condition"); c != nil && strings.Contains(valString(t, ctx, c, "expression"), "route_state") && valString(t, ctx, b, "role") != "roles/datastore.viewer" {
			t.Errorf("%v gives the gateway %s on route state", b.Labels, valString(t, ctx, b, "role"))
		}
	}
	if !slices.Contains(refs(m.find("resource", "google_cloudfunctions2_function", "gateway"), "depends_on"), "google_project_iam_member.gateway_responses") {
		t.Errorf("the gateway must depend on its responses role")
	}
	if m.find("output", "responses_database") == nil {
		t.Errorf("no responses_database output")
	}
}

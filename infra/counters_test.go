package infra

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fngate/fngate/core/counters/dynamocounters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/functions/gcf"
)

// What the gateway's role may do to the counters table: admit (a conditional UpdateItem),
// settle (an UpdateItem) and read an item whose condition failed (GetItem). Nothing else: no
// Scan, Query, PutItem or DeleteItem.
var (
	samCounterGrants = []string{"dynamodb:GetItem on GetAtt:CountersTable.Arn", "dynamodb:UpdateItem on GetAtt:CountersTable.Arn"}
	tfCounterGrants  = []string{"dynamodb:GetItem on aws_dynamodb_table.counters.arn", "dynamodb:UpdateItem on aws_dynamodb_table.counters.arn"}
)

// TestTemplateCounters: SAM creates the counters table with the key and TTL dynamocounters
// uses, hands it to the gateway as COUNTERS_TABLE (what functions/lambda reads), and grants
// exactly the calls the store makes on it (the grants themselves are checked, with the rest of
// the gateway's, in TestTemplateSelfRepair).
func TestTemplateCounters(t *testing.T) {
	v := samFor(t, map[string]any{})
	tbl, err := v.tmpl.GetDynamoDBTableWithName("CountersTable")
	if err != nil {
		t.Fatal(err)
	}
	if tbl.BillingMode == nil || *tbl.BillingMode != "PAY_PER_REQUEST" {
		t.Errorf("CountersTable BillingMode = %v, want PAY_PER_REQUEST", tbl.BillingMode)
	}
	if len(tbl.KeySchema) != 1 || tbl.KeySchema[0].AttributeName != dynamocounters.KeyPartition || tbl.KeySchema[0].KeyType != "HASH" {
		t.Errorf("CountersTable keys = %+v, dynamocounters uses %s (hash) alone", tbl.KeySchema, dynamocounters.KeyPartition)
	}
	if len(tbl.AttributeDefinitions) != 1 || tbl.AttributeDefinitions[0].AttributeType != "S" {
		t.Errorf("CountersTable attributes = %+v, want one string key", tbl.AttributeDefinitions)
	}
	if ttl := tbl.TimeToLiveSpecification; ttl == nil || ttl.AttributeName == nil || *ttl.AttributeName != dynamocounters.AttrTTL || !ttl.Enabled {
		t.Errorf("CountersTable TTL = %+v, want enabled on %s (each key's month window ends there)", ttl, dynamocounters.AttrTTL)
	}
	env := dig(v.res["GatewayFunction"], "Properties", "Environment", "Variables")
	if got := dig(env, "COUNTERS_TABLE"); got != "Ref:CountersTable" {
		t.Errorf("gateway COUNTERS_TABLE = %v, want the table", got)
	}
	var counterGrants []string
	for _, g := range functionGrants(t, v.res["GatewayFunction"]) {
		if strings.Contains(g, "CountersTable") {
			counterGrants = append(counterGrants, g)
		}
	}
	if !slices.Equal(counterGrants, samCounterGrants) {
		t.Errorf("gateway grants on the counters table = %q, want exactly %q", counterGrants, samCounterGrants)
	}
	for name, res := range v.res {
		if name == "GatewayFunction" || !strings.Contains(stringsOf(res), "CountersTable.Arn") {
			continue
		}
		// The control plane reads usage (the current windows and the history beside them).
		if name != "ControlPlaneFunction" {
			t.Errorf("%s is granted access to the counters table; only the gateway counts", name)
			continue
		}
		var got []string
		for _, g := range functionGrants(t, res) {
			if strings.Contains(g, "CountersTable") {
				got = append(got, g)
			}
		}
		if !slices.Equal(got, samControlPlaneUsageGrants) {
			t.Errorf("control plane grants on the counters table = %q, want exactly %q (read only)", got, samControlPlaneUsageGrants)
		}
	}
	if v.out["CountersTableName"] == nil {
		t.Error("no CountersTableName output")
	}
}

func stringsOf(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + " ")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// TestTerraformAWSCounters: the module's counters table and its policy, as SAM's.
func TestTerraformAWSCounters(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	ctx := tfContext(t, m, nil)
	tbl := m.find("resource", "aws_dynamodb_table", "counters")
	if got := valString(t, ctx, tbl, "hash_key"); got != dynamocounters.KeyPartition {
		t.Errorf("counters hash_key = %s, want %s", got, dynamocounters.KeyPartition)
	}
	if _, ok := tbl.Body.Attributes["range_key"]; ok {
		t.Error("the counters table has a range key; dynamocounters keys items by pk alone")
	}
	if got := valString(t, ctx, tbl, "billing_mode"); got != "PAY_PER_REQUEST" {
		t.Errorf("counters billing_mode = %s", got)
	}
	ttl := child(tbl, "ttl")
	if got := valString(t, ctx, ttl, "attribute_name"); got != dynamocounters.AttrTTL || !val(t, ctx, ttl, "enabled").True() {
		t.Errorf("counters ttl = %s, want enabled on %s", got, dynamocounters.AttrTTL)
	}
	env := val(t, ctx, localsWith(t, m, "environment"), "environment")
	if !env.Type().HasAttribute("COUNTERS_TABLE") || env.GetAttr("COUNTERS_TABLE").AsString() != "aws_dynamodb_table.counters.name" {
		t.Errorf("the gateway's environment lacks COUNTERS_TABLE = the table: %#v", env)
	}
	grants, _ := policy(t, ctx, m.find("data", "aws_iam_policy_document", "counters"))
	sort.Strings(grants)
	if !slices.Equal(grants, tfCounterGrants) {
		t.Errorf("counters policy = %q, want exactly %q", grants, tfCounterGrants)
	}
	pol := m.find("resource", "aws_iam_role_policy", "counters")
	if !slices.Contains(refs(pol, "role"), "aws_iam_role.gateway") {
		t.Errorf("the counters policy must be the gateway role's, not %v", refs(pol, "role"))
	}
	fn := m.find("resource", "aws_lambda_function", "gateway")
	if !slices.Contains(refs(fn, "depends_on"), "aws_iam_role_policy.counters") {
		t.Error("the function must wait for its counters policy: the first request counts")
	}
	if m.find("output", "counters_table_name") == nil {
		t.Error("no counters_table_name output")
	}
}

// TestTerraformGCPCounters: a Firestore database of its own, the TTL policy on the field
// firestorecounters writes, the counts left unindexed, the gateway allowed to read and write
// that database only, the environment functions/gcf reads, and the metric on the log line
// the gateway writes.
func TestTerraformGCPCounters(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	ctx := tfContext(t, m, nil)
	if got := count(t, ctx, m.find("resource", "google_firestore_database", "counters")); got != 1 {
		t.Errorf("the module creates %d counters databases by default, want 1", got)
	}
	if got := count(t, tfContext(t, m, map[string]cty.Value{"counters_database": cty.StringVal("mine")}), m.find("resource", "google_firestore_database", "counters")); got != 0 {
		t.Errorf("with counters_database set the module still creates %d", got)
	}
	collection := "fngate_" + firestorecounters.Collection
	ttl := m.find("resource", "google_firestore_field", "counters_ttl")
	if valString(t, ctx, ttl, "collection") != collection || valString(t, ctx, ttl, "field") != firestorecounters.TTLField || child(ttl, "ttl_config") == nil {
		t.Errorf("counters TTL is on %s.%s; firestorecounters writes %s.%s", valString(t, ctx, ttl, "collection"), valString(t, ctx, ttl, "field"), collection, firestorecounters.TTLField)
	}
	if got := valStrings(t, ctx, m.find("resource", "google_firestore_field", "counters_unindexed"), "for_each"); !slices.Equal(got, []string{"c", "w"}) {
		t.Errorf("unindexed counter fields = %v, want c and w", got)
	}
	iam := m.find("resource", "google_project_iam_member", "gateway_counters")
	if valString(t, ctx, iam, "role") != "roles/datastore.user" || !slices.Contains(refs(iam, "member"), "google_service_account.gateway") {
		t.Errorf("counters IAM: role %s for %v", valString(t, ctx, iam, "role"), refs(iam, "member"))
	}
	if cond := valString(t, ctx, child(iam, "condition"), "expression"); !strings.Contains(cond, "databases/") || !strings.Contains(cond, "counters") {
		t.Errorf("the gateway's Firestore write access must be conditioned on the counters database: %q", cond)
	}
	env := val(t, ctx, localsWith(t, m, "counters_env"), "counters_env")
	for _, k := range []string{gcf.EnvCountersProject, gcf.EnvCountersDatabase, gcf.EnvCountersPrefix} {
		if !env.Type().HasAttribute(k) {
			t.Errorf("counters_env lacks %s", k)
		}
	}
	if !slices.Contains(refs(localsWith(t, m, "environment"), "environment"), "local.counters_env") {
		t.Error("the function's environment does not include counters_env")
	}
	metric := m.find("resource", "google_logging_metric", "counter_store_errors")
	if f := valString(t, ctx, metric, "filter"); !strings.Contains(f, `jsonPayload.message="`+record.MsgCounterStoreError+`"`) {
		t.Errorf("the metric filter %q does not match the gateway's %s lines", f, record.MsgCounterStoreError)
	}
	if m.find("output", "counters_database") == nil {
		t.Error("no counters_database output")
	}
}

// localsWith returns the locals block (of the module's several) that defines name.
func localsWith(t *testing.T, m *module, name string) *hclsyntax.Block {
	t.Helper()
	for _, b := range m.all("locals") {
		if _, ok := b.Body.Attributes[name]; ok {
			return b
		}
	}
	t.Fatalf("no locals block defines %s", name)
	return nil
}

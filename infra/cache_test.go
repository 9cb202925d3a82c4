package infra

import (
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fngate/fngate/core/config"
	cachedynamo "github.com/fngate/fngate/core/responsecache/dynamostore"
	cachefirestore "github.com/fngate/fngate/core/responsecache/firestorestore"
	"github.com/fngate/fngate/functions/gcf"
)

// cacheBodyField is where firestorestore keeps the recorded answer (a document field, which
// the store names only in its struct tag).
const cacheBodyField = "body"

// envCacheTable is functions/lambda's EnvCacheTable (a main package, which a test cannot
// import); TestTemplatesSetTheCacheWhatTheLambdaReads checks the bootstrap reads it.
const envCacheTable = "CACHE_TABLE"

// The gateway's grants on the cache table, in both AWS templates: a lookup and a write, one
// item each. Nothing reads the table wholesale (Query, Scan) and nothing deletes: TTL does.
var (
	samCacheGrants = []string{"dynamodb:GetItem on GetAtt:CacheTable.Arn", "dynamodb:PutItem on GetAtt:CacheTable.Arn"}
	tfCacheGrants  = []string{"dynamodb:GetItem on aws_dynamodb_table.cache.arn", "dynamodb:PutItem on aws_dynamodb_table.cache.arn"}
)

// TestTemplateCache: SAM creates the cache table with the store's key and TTL, hands it to
// the gateway as CACHE_TABLE whatever the URL's auth (the gateway opens it only when a model
// or key opts in), grants the gateway exactly the two calls the store makes, and nothing
// else in the stack may touch it.
func TestTemplateCache(t *testing.T) {
	raw := at(rawTemplate(t), "Resources", "CacheTable")
	for _, p := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if v := at(raw, p); v == nil || v.Value != "Delete" {
			t.Errorf("CacheTable %s = %s, want Delete: a cache holds nothing worth keeping past its stack", p, scalar(v))
		}
	}
	for _, auth := range []string{"AWS_IAM", "NONE"} {
		t.Run(auth, func(t *testing.T) {
			v := samFor(t, map[string]any{"UrlAuthType": auth})
			tbl, err := v.tmpl.GetDynamoDBTableWithName("CacheTable")
			if err != nil {
				t.Fatal(err)
			}
			if tbl.BillingMode == nil || *tbl.BillingMode != "PAY_PER_REQUEST" {
				t.Errorf("CacheTable BillingMode = %v, want PAY_PER_REQUEST", tbl.BillingMode)
			}
			if len(tbl.KeySchema) != 1 || tbl.KeySchema[0].KeyType != "HASH" || tbl.KeySchema[0].AttributeName != cachedynamo.KeyPartition {
				t.Errorf("CacheTable keys = %+v, the store uses %s alone (hash)", tbl.KeySchema, cachedynamo.KeyPartition)
			}
			if len(tbl.AttributeDefinitions) != 1 || tbl.AttributeDefinitions[0].AttributeName != cachedynamo.KeyPartition || tbl.AttributeDefinitions[0].AttributeType != "S" {
				t.Errorf("CacheTable attributes = %+v, want %s (S) only", tbl.AttributeDefinitions, cachedynamo.KeyPartition)
			}
			if ttl := tbl.TimeToLiveSpecification; ttl == nil || ttl.AttributeName == nil || *ttl.AttributeName != cachedynamo.AttrTTL || !ttl.Enabled {
				t.Errorf("CacheTable TTL = %+v, want enabled on %s", ttl, cachedynamo.AttrTTL)
			}

			gw := v.res["GatewayFunction"]
			if got := dig(gw, "Properties", "Environment", "Variables", envCacheTable); got != "Ref:CacheTable" {
				t.Errorf("gateway %s = %v, want Ref:CacheTable", envCacheTable, got)
			}
			var onTable []string
			for _, g := range functionGrants(t, gw) {
				if strings.Contains(g, "CacheTable") {
					onTable = append(onTable, g)
				}
			}
			if !slices.Equal(onTable, samCacheGrants) {
				t.Errorf("gateway grants on CacheTable = %q, want exactly %q", onTable, samCacheGrants)
			}
			for name, res := range v.res {
				if name != "GatewayFunction" && strings.Contains(stringsOf(res), "CacheTable") {
					t.Errorf("%s refers to the cache table; only the gateway reads and writes it", name)
				}
			}
			if got := dig(v.out, "CacheTableName", "Value"); got != "Ref:CacheTable" {
				t.Errorf("CacheTableName output = %v, want Ref:CacheTable", got)
			}
		})
	}
}

// TestTerraformAWSCache: the module's cache table, environment, policy and output, as SAM's.
func TestTerraformAWSCache(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	tbl := m.find("resource", "aws_dynamodb_table", "cache")
	for _, auth := range []string{"AWS_IAM", "NONE"} {
		t.Run(auth, func(t *testing.T) {
			ctx := tfContext(t, m, map[string]cty.Value{"url_auth_type": cty.StringVal(auth)})
			if valString(t, ctx, tbl, "hash_key") != cachedynamo.KeyPartition || valString(t, ctx, tbl, "billing_mode") != "PAY_PER_REQUEST" {
				t.Errorf("cache table: want hash key %s, on-demand", cachedynamo.KeyPartition)
			}
			if _, ok := tbl.Body.Attributes["range_key"]; ok {
				t.Errorf("the cache table has a range key; the store uses %s alone", cachedynamo.KeyPartition)
			}
			var attrs []string
			for _, a := range tbl.Body.Blocks {
				if a.Type == "attribute" {
					attrs = append(attrs, valString(t, ctx, a, "name")+":"+valString(t, ctx, a, "type"))
				}
			}
			if !slices.Equal(attrs, []string{cachedynamo.KeyPartition + ":S"}) {
				t.Errorf("cache table attributes %v, want %s:S only", attrs, cachedynamo.KeyPartition)
			}
			if ttl := child(tbl, "ttl"); valString(t, ctx, ttl, "attribute_name") != cachedynamo.AttrTTL || valString(t, ctx, ttl, "enabled") != "true" {
				t.Errorf("the cache table's ttl must be enabled on %s", cachedynamo.AttrTTL)
			}

			env := ctx.Variables["local"].GetAttr("environment")
			if !env.Type().HasAttribute(envCacheTable) || env.GetAttr(envCacheTable).AsString() != "aws_dynamodb_table.cache.name" {
				t.Errorf("gateway environment lacks %s = the cache table: %#v", envCacheTable, env)
			}
			var onTable []string
			for _, g := range rolePolicies(t, ctx, m, "gateway") {
				if strings.Contains(g, "aws_dynamodb_table.cache") {
					onTable = append(onTable, g)
				}
			}
			if !slices.Equal(onTable, tfCacheGrants) {
				t.Errorf("gateway grants on the cache table = %q, want exactly %q", onTable, tfCacheGrants)
			}
			for _, role := range []string{"remediation", "control_plane", "sweep"} {
				for _, g := range rolePolicies(t, ctx, m, role) {
					if strings.Contains(g, "aws_dynamodb_table.cache") {
						t.Errorf("the %s role has %s; only the gateway reads and writes the cache", role, g)
					}
				}
			}
		})
	}
	if pol := m.find("resource", "aws_iam_role_policy", "cache"); !slices.Contains(refs(pol, "role"), "aws_iam_role.gateway") {
		t.Errorf("the cache policy must be the gateway role's, not %v", refs(pol, "role"))
	}
	if !slices.Contains(refs(m.find("resource", "aws_lambda_function", "gateway"), "depends_on"), "aws_iam_role_policy.cache") {
		t.Errorf("the gateway must depend on its cache policy, or its first lookup may be denied")
	}
	if m.find("output", "cache_table_name") == nil {
		t.Errorf("no cache_table_name output")
	}
}

// TestTerraformGCPCache: a Firestore database of its own (or the one named), the TTL policy
// on the field the store writes and the answer left unindexed, in the collection the gateway
// is told, read and write on that
// database alone, and the environment functions/gcf reads, on the gateway only.
func TestTerraformGCPCache(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	ctx := tfContext(t, m, nil)

	db := m.find("resource", "google_firestore_database", "cache")
	if count(t, ctx, db) != 1 || valString(t, ctx, db, "type") != "FIRESTORE_NATIVE" {
		t.Errorf("without cache_database the module must create a native database")
	}
	if n := count(t, tfContext(t, m, map[string]cty.Value{"cache_database": cty.StringVal("existing")}), db); n != 0 {
		t.Errorf("with cache_database set the module still creates one")
	}
	const database = "google_firestore_database.cache.name"
	// The collection's default is the gateway's, so a config without one finds it too.
	if got := valString(t, ctx, m.find("variable", "cache_collection"), "default"); got != config.DefaultCacheCollection {
		t.Errorf("cache_collection defaults to %s, the gateway's default is %s", got, config.DefaultCacheCollection)
	}
	checkVariableValidation(t, m, "cache_collection", []string{"fngate_cache", "answers"}, "a/b")

	// The field settings follow the collection the gateway is told, whatever its name.
	ttl, body := m.find("resource", "google_firestore_field", "cache_ttl"), m.find("resource", "google_firestore_field", "cache_body")
	if ttl == nil || body == nil {
		t.Fatalf("want google_firestore_field cache_ttl (the TTL policy) and cache_body (the answer unindexed), have %v and %v", ttl != nil, body != nil)
	}
	for _, collection := range []string{config.DefaultCacheCollection, "answers"} {
		cctx := tfContext(t, m, map[string]cty.Value{"cache_collection": cty.StringVal(collection)})
		if valString(t, cctx, ttl, "collection") != collection || valString(t, cctx, ttl, "field") != cachefirestore.TTLField ||
			child(ttl, "ttl_config") == nil || valString(t, cctx, ttl, "database") != database {
			t.Errorf("cache_collection = %s: the TTL policy must be on field %s of that collection in the cache database", collection, cachefirestore.TTLField)
		}
		if ic := child(ttl, "index_config"); ic == nil || len(ic.Body.Blocks) != 0 {
			t.Errorf("the TTL field must be exempt from indexing (an empty index_config): a growing timestamp is a write hotspot")
		}
		if ic := child(body, "index_config"); ic == nil || len(ic.Body.Blocks) != 0 || valString(t, cctx, body, "field") != cacheBodyField ||
			valString(t, cctx, body, "collection") != collection || valString(t, cctx, body, "database") != database {
			t.Errorf("cache_collection = %s: the answer (%s) must be exempt from indexing (an empty index_config) in that collection", collection, cacheBodyField)
		}
		if !slices.Contains(refs(body, "depends_on"), "google_firestore_field.cache_ttl") {
			t.Errorf("field operations on one collection run one at a time: cache_body must wait for cache_ttl")
		}
		env := cctx.Variables["local"].GetAttr("environment")
		for k, want := range map[string]string{gcf.EnvCacheProject: "var.project_id", gcf.EnvCacheDatabase: database, gcf.EnvCacheCollection: collection} {
			if !env.Type().HasAttribute(k) {
				t.Errorf("the gateway lacks %s", k)
			} else if got := env.GetAttr(k); !got.IsKnown() || got.AsString() != want {
				t.Errorf("%s = %#v, want %s", k, got, want)
			}
		}
	}
	// Whether public or not: the cache serves every caller the gateway admits.
	for _, public := range []bool{false, true} {
		env := tfContext(t, m, map[string]cty.Value{"public": cty.BoolVal(public)}).Variables["local"].GetAttr("environment")
		if !env.Type().HasAttribute(gcf.EnvCacheProject) {
			t.Errorf("public = %v: the gateway lacks %s", public, gcf.EnvCacheProject)
		}
		checkStoreEnvRead(t, "the gateway", "../functions/gcf", "CACHE_", keysOf(env.AsValueMap()))
	}
	for _, fn := range []string{"remediation", "control_plane"} {
		svc := child(m.find("resource", "google_cloudfunctions2_function", fn), "service_config")
		if env := val(t, ctx, svc, "environment_variables"); env.Type().HasAttribute(gcf.EnvCacheProject) {
			t.Errorf("the %s function is given the response cache", fn)
		}
	}

	iam := m.find("resource", "google_project_iam_member", "gateway_cache")
	if valString(t, ctx, iam, "role") != "roles/datastore.user" || valString(t, ctx, iam, "member") != "google_service_account.gateway.member" {
		t.Errorf("the gateway must have roles/datastore.user for its cache")
	}
	if c := child(iam, "condition"); c == nil || !strings.HasSuffix(valString(t, ctx, c, "expression"), "/databases/"+database+"\"") {
		t.Errorf("the gateway's datastore.user must be conditioned on the cache database alone")
	}
	// Only the gateway is given the cache database.
	for _, b := range m.all("resource") {
		if b.Labels[0] != "google_project_iam_member" || b.Labels[1] == "gateway_cache" {
			continue
		}
		if c := child(b, "condition"); c != nil && strings.Contains(valString(t, ctx, c, "expression"), database) {
			t.Errorf("%v is conditioned on the cache database; only the gateway's role may be", b.Labels)
		}
	}
	if !slices.Contains(refs(m.find("resource", "google_cloudfunctions2_function", "gateway"), "depends_on"), "google_project_iam_member.gateway_cache") {
		t.Errorf("the gateway must depend on its cache role")
	}
	if m.find("output", "cache_database") == nil {
		t.Errorf("no cache_database output")
	}
}

// TestTemplatesSetTheCacheWhatTheLambdaReads: where functions/lambda reads CACHE_* names, it
// reads exactly the ones both AWS templates set (a name set but never read would send the
// cache elsewhere, or nowhere).
func TestTemplatesSetTheCacheWhatTheLambdaReads(t *testing.T) {
	for _, auth := range []string{"AWS_IAM", "NONE"} {
		sam := samFor(t, map[string]any{"UrlAuthType": auth})
		checkStoreEnvRead(t, "the gateway (SAM, "+auth+")", "../functions/lambda", "CACHE_",
			keysOf(dig(sam.res, "GatewayFunction", "Properties", "Environment", "Variables").(map[string]any)))
		aws := parseModule(t, "terraform/aws")
		checkStoreEnvRead(t, "the gateway (Terraform AWS, "+auth+")", "../functions/lambda", "CACHE_",
			keysOf(tfContext(t, aws, map[string]cty.Value{"url_auth_type": cty.StringVal(auth)}).Variables["local"].GetAttr("environment").AsValueMap()))
	}
}

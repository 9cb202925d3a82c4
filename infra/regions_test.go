package infra

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The deployment the tests read the modules for: two US regions (the primary first) and one
// in the EU, as docs/deploy.md walks through.
var (
	awsRegions = []string{"us-east-1", "us-west-2", "eu-west-1"}
	gcpRegions = []string{"us-central1", "us-east4", "europe-west4"}
)

func strList(ss ...string) cty.Value {
	vals := make([]cty.Value, len(ss))
	for i, s := range ss {
		vals[i] = cty.StringVal(s)
	}
	if len(vals) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	return cty.ListVal(vals)
}

// forEachKeys evaluates an expression that is a set, list, tuple or map of strings (a for_each),
// returning its keys (a map's) or elements, sorted.
func forEachKeys(t *testing.T, ctx *hcl.EvalContext, e hcl.Expression, what string) []string {
	t.Helper()
	v, diags := e.Value(ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", what, diags.Error())
	}
	if !v.IsWhollyKnown() {
		t.Fatalf("%s is not known at plan time", what)
	}
	var out []string
	if v.Type().IsMapType() || v.Type().IsObjectType() {
		for k := range v.AsValueMap() {
			out = append(out, k)
		}
	} else {
		for _, el := range v.AsValueSlice() {
			out = append(out, el.AsString())
		}
	}
	sort.Strings(out)
	return out
}

func forEach(t *testing.T, ctx *hcl.EvalContext, m *module, typ, name string) []string {
	t.Helper()
	b := m.find("resource", typ, name)
	if b == nil {
		t.Fatalf("no resource %s.%s", typ, name)
	}
	a, ok := b.Body.Attributes["for_each"]
	if !ok {
		t.Fatalf("%s.%s has no for_each", typ, name)
	}
	return forEachKeys(t, ctx, a.Expr, typ+"."+name+".for_each")
}

// withEach is ctx with each.key and each.value set, for a for_each resource's arguments.
func withEach(ctx *hcl.EvalContext, key string, value cty.Value) *hcl.EvalContext {
	c := ctx.NewChild()
	c.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(key), "value": value})}
	return c
}

// replicas lists the regions of a table's dynamic replica blocks.
func replicas(t *testing.T, ctx *hcl.EvalContext, b *hclsyntax.Block) []string {
	t.Helper()
	for _, d := range b.Body.Blocks {
		if d.Type == "dynamic" && len(d.Labels) == 1 && d.Labels[0] == "replica" {
			return forEachKeys(t, ctx, d.Body.Attributes["for_each"].Expr, strings.Join(b.Labels, ".")+" replicas")
		}
	}
	t.Fatalf("%v has no dynamic replica block", b.Labels)
	return nil
}

func sorted(ss ...string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return out
}

func evalString(t *testing.T, ctx *hcl.EvalContext, b *hclsyntax.Block, name string) string {
	t.Helper()
	return val(t, ctx, b, name).AsString()
}

func residencyOf(t *testing.T, ctx *hcl.EvalContext, region string) string {
	t.Helper()
	return ctx.Variables["local"].GetAttr("residency").GetAttr(region).AsString()
}

// TestTerraformAWSRegions: with regions, every region has its function and URL, the front end
// (API Gateway in each region, Route 53 latency records with health checks) reaches every
// region, the tables without content replicate to every region and those with content only
// within their residency, each residency beyond the primary's with tables of its own. With
// none, the module is the single-region one: no further function, no replica, no front end.
func TestTerraformAWSRegions(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	primary := cty.ObjectVal(map[string]cty.Value{"region": cty.StringVal(awsRegions[0])})
	shared := []string{"counters", "keys", "route_state"}
	content := []string{"responses", "cache"}

	t.Run("one region", func(t *testing.T) {
		ctx := tfContext(t, m, map[string]cty.Value{"data.aws_region.current": primary, "url_auth_type": cty.StringVal("NONE")})
		for _, r := range []string{"aws_lambda_function.regional", "aws_lambda_function_url.regional", "aws_api_gateway_rest_api.front", "aws_route53_record.front", "aws_dynamodb_table.responses_residency"} {
			typ, name, _ := strings.Cut(r, ".")
			if got := forEach(t, ctx, m, typ, name); len(got) != 0 {
				t.Errorf("%s = %v with no regions; want none", r, got)
			}
		}
		for _, tbl := range append(shared, content...) {
			if got := replicas(t, ctx, m.find("resource", "aws_dynamodb_table", tbl)); len(got) != 0 {
				t.Errorf("table %s replicates to %v with no regions; want nowhere", tbl, got)
			}
		}
		if env := ctx.Variables["local"].GetAttr("environment"); env.Type().HasAttribute("FNGATE_REGION") {
			t.Errorf("the single-region function's environment has FNGATE_REGION")
		}
	})

	t.Run("three regions in two residencies", func(t *testing.T) {
		ctx := tfContext(t, m, map[string]cty.Value{
			"data.aws_region.current": primary, "url_auth_type": cty.StringVal("NONE"),
			"regions": strList(awsRegions...), "domain_name": cty.StringVal("gw.example.com"), "hosted_zone_id": cty.StringVal("Z123"),
		})
		extra := awsRegions[1:]
		// Every region has its function: the primary's own, and one per further region.
		if got := forEach(t, ctx, m, "aws_lambda_function", "regional"); !slices.Equal(got, sorted(extra...)) {
			t.Errorf("further functions in %v; want %v", got, sorted(extra...))
		}
		if got := forEach(t, ctx, m, "aws_lambda_function_url", "regional"); !slices.Equal(got, sorted(extra...)) {
			t.Errorf("further function URLs in %v; want %v", got, sorted(extra...))
		}
		fn := m.find("resource", "aws_lambda_function", "regional")
		if v := evalString(t, withEach(ctx, "eu-west-1", cty.StringVal("eu-west-1")), fn, "region"); v != "eu-west-1" {
			t.Errorf("the further function's region = %s; want each.key", v)
		}
		if got := residencyOf(t, ctx, "eu-west-1"); got != "eu" {
			t.Errorf("eu-west-1's residency = %s; want eu", got)
		}
		env := ctx.Variables["local"].GetAttr("region_environment")
		for _, r := range awsRegions {
			e := env.GetAttr(r)
			if e.GetAttr("FNGATE_REGION").AsString() != r || e.GetAttr("FNGATE_RESIDENCY").AsString() != residencyOf(t, ctx, r) {
				t.Errorf("region %s's environment = %#v; want its name and residency", r, e)
			}
		}
		if e := env.GetAttr("eu-west-1"); !e.Type().HasAttribute("RESPONSES_TABLE") || e.GetAttr("RESPONSES_TABLE").AsString() != "fngate-responses-eu" {
			t.Errorf("eu-west-1 keeps its stored responses in %#v; want the eu table", e)
		}

		// The front end reaches every region: an API, a health check and latency records each.
		all := sorted(awsRegions...)
		for _, r := range []string{"aws_api_gateway_rest_api.front", "aws_route53_health_check.front", "aws_acm_certificate.front"} {
			typ, name, _ := strings.Cut(r, ".")
			if got := forEach(t, ctx, m, typ, name); !slices.Equal(got, all) {
				t.Errorf("%s in %v; want every region %v", r, got, all)
			}
		}
		// The rest of each API follows the APIs (for_each = aws_api_gateway_rest_api.front).
		for _, name := range []string{"front_proxy", "front_deployment"} {
			typ := "aws_api_gateway_resource"
			if name == "front_deployment" {
				typ, name = "aws_api_gateway_deployment", "front"
			}
			for _, tt := range []string{typ, "aws_api_gateway_method", "aws_api_gateway_integration"} {
				b := m.find("resource", tt, name)
				if b == nil {
					continue
				}
				if got := refs(b, "for_each"); !slices.Equal(got, []string{"aws_api_gateway_rest_api.front"}) {
					t.Errorf("%s.%s for_each = %v; want the APIs of every region", tt, name, got)
				}
			}
		}
		integ := m.find("resource", "aws_api_gateway_integration", "front_proxy")
		if evalString(t, ctx, integ, "type") != "HTTP_PROXY" || evalString(t, ctx, integ, "response_transfer_mode") != "STREAM" {
			t.Errorf("the front end's integration must be HTTP_PROXY streaming (STREAM)")
		}
		urls := map[string]bool{}
		for _, l := range m.all("locals") {
			if a, ok := l.Body.Attributes["function_urls"]; ok {
				for _, tr := range a.Expr.Variables() {
					if len(tr) > 1 {
						urls[tr.RootName()+"."+tr[1].(hcl.TraverseAttr).Name] = true
					}
				}
			}
		}
		if !urls["aws_lambda_function_url.gateway"] || !urls["aws_lambda_function_url.regional"] {
			t.Errorf("the front end's origins (local.function_urls) come from %v; want the primary's and every further region's URL", urls)
		}
		names := ctx.Variables["local"].GetAttr("front_names").AsValueMap()
		byName := map[string][]string{}
		for _, n := range names {
			byName[n.GetAttr("name").AsString()] = append(byName[n.GetAttr("name").AsString()], n.GetAttr("region").AsString())
		}
		for name, rs := range byName {
			sort.Strings(rs)
			switch name {
			case "gw.example.com":
				if !slices.Equal(rs, all) {
					t.Errorf("the one name answers from %v; want every region", rs)
				}
			default:
				res, _, _ := strings.Cut(name, ".")
				for _, r := range rs {
					if residencyOf(t, ctx, r) != res {
						t.Errorf("%s answers from %s, whose residency is %s", name, r, residencyOf(t, ctx, r))
					}
				}
			}
		}
		if len(byName["eu.gw.example.com"]) != 1 || len(byName["us.gw.example.com"]) != 2 {
			t.Errorf("residency names %v; want eu over one region, us over two", byName)
		}

		// Tables: no content replicates everywhere, content within its residency only.
		for _, tbl := range shared {
			if got := replicas(t, ctx, m.find("resource", "aws_dynamodb_table", tbl)); !slices.Equal(got, sorted(extra...)) {
				t.Errorf("table %s replicates to %v; want every further region %v", tbl, got, sorted(extra...))
			}
			if b := m.find("resource", "aws_dynamodb_table", tbl); evalString(t, ctx, b, "stream_view_type") != "NEW_AND_OLD_IMAGES" {
				t.Errorf("table %s: a global table needs its stream (NEW_AND_OLD_IMAGES)", tbl)
			}
		}
		for _, tbl := range content {
			got := replicas(t, ctx, m.find("resource", "aws_dynamodb_table", tbl))
			for _, r := range got {
				if residencyOf(t, ctx, r) != residencyOf(t, ctx, awsRegions[0]) {
					t.Errorf("table %s replicates to %s, outside its residency", tbl, r)
				}
			}
			if !slices.Equal(got, []string{"us-west-2"}) {
				t.Errorf("table %s replicates to %v; want [us-west-2], the primary's residency", tbl, got)
			}
			b := m.find("resource", "aws_dynamodb_table", tbl+"_residency")
			if got := forEach(t, ctx, m, "aws_dynamodb_table", tbl+"_residency"); !slices.Equal(got, []string{"eu"}) {
				t.Errorf("%s tables of further residencies: %v; want [eu]", tbl, got)
			}
			ectx := withEach(ctx, "eu", cty.StringVal("eu"))
			if home := evalString(t, ectx, b, "region"); residencyOf(t, ctx, home) != "eu" {
				t.Errorf("the eu %s table lives in %s", tbl, home)
			}
			for _, r := range replicas(t, ectx, b) {
				if residencyOf(t, ctx, r) != "eu" {
					t.Errorf("the eu %s table replicates to %s", tbl, r)
				}
			}
		}
	})
}

// TestTerraformGCPRegions: with regions, every region has its function and a serverless NEG,
// the load balancer's backend (with outlier detection) reaches every region and each
// residency's backend only its own, and each further residency's content lives in a database
// inside it.
func TestTerraformGCPRegions(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	base := map[string]cty.Value{"region": cty.StringVal(gcpRegions[0]), "project_id": cty.StringVal("p")}
	t.Run("one region", func(t *testing.T) {
		ctx := tfContext(t, m, base)
		for _, r := range []string{"google_cloudfunctions2_function.regional", "google_compute_region_network_endpoint_group.gateway", "google_compute_backend_service.gateway", "google_firestore_database.responses_residency"} {
			typ, name, _ := strings.Cut(r, ".")
			if got := forEach(t, ctx, m, typ, name); len(got) != 0 {
				t.Errorf("%s = %v with no regions; want none", r, got)
			}
		}
	})
	t.Run("three regions in two residencies", func(t *testing.T) {
		over := map[string]cty.Value{"regions": strList(gcpRegions...), "domain_name": cty.StringVal("gw.example.com")}
		for k, v := range base {
			over[k] = v
		}
		ctx := tfContext(t, m, over)
		if got := forEach(t, ctx, m, "google_cloudfunctions2_function", "regional"); !slices.Equal(got, sorted(gcpRegions[1:]...)) {
			t.Errorf("further functions in %v; want %v", got, sorted(gcpRegions[1:]...))
		}
		if got := forEach(t, ctx, m, "google_compute_region_network_endpoint_group", "gateway"); !slices.Equal(got, sorted(gcpRegions...)) {
			t.Errorf("NEGs in %v; want every region", got)
		}
		be := m.find("resource", "google_compute_backend_service", "gateway")
		if child(be, "outlier_detection") == nil {
			t.Error("the backend service has no outlier_detection: nothing would eject a failing region")
		}
		fe, diags := be.Body.Attributes["for_each"].Expr.Value(ctx)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		for name, rs := range fe.AsValueMap() {
			var regions []string
			for _, r := range rs.AsValueSlice() {
				regions = append(regions, r.AsString())
			}
			sort.Strings(regions)
			if name == "all" {
				if !slices.Equal(regions, sorted(gcpRegions...)) {
					t.Errorf("the backend of the one name reaches %v; want every region", regions)
				}
				continue
			}
			for _, r := range regions {
				if residencyOf(t, ctx, r) != name {
					t.Errorf("the %s backend reaches %s, of residency %s", name, r, residencyOf(t, ctx, r))
				}
			}
		}
		if residencyOf(t, ctx, "europe-west4") != "eu" || residencyOf(t, ctx, "us-east4") != "us" {
			t.Errorf("residencies %#v; want europe-west4 eu, us-east4 us", ctx.Variables["local"].GetAttr("residency"))
		}
		for _, db := range []string{"responses_residency", "cache_residency"} {
			if got := forEach(t, ctx, m, "google_firestore_database", db); !slices.Equal(got, []string{"eu"}) {
				t.Errorf("%s databases for %v; want [eu]", db, got)
			}
			b := m.find("resource", "google_firestore_database", db)
			if loc := evalString(t, withEach(ctx, "eu", cty.StringVal("eu")), b, "location_id"); loc != "eur3" {
				t.Errorf("the eu %s database is in %s; want eur3", db, loc)
			}
		}
	})
}

package admin_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/admin"
)

// TestOpenAPIDocumentsEveryRoute holds the document and the route table together: every
// operation served is documented, and every documented one is served.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(admin.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	var documented, served []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if m != "parameters" {
				documented = append(documented, strings.ToUpper(m)+" "+p)
			}
		}
	}
	for _, r := range admin.Routes() {
		served = append(served, r[0]+" "+r[1])
	}
	sort.Strings(documented)
	sort.Strings(served)
	if strings.Join(documented, "\n") != strings.Join(served, "\n") {
		t.Fatalf("documented:\n%s\n\nserved:\n%s", strings.Join(documented, "\n"), strings.Join(served, "\n"))
	}
	// And the handler really answers each (no unknown path, no wrong method).
	f := newFixture(t, "")
	for _, op := range served {
		method, p, _ := strings.Cut(op, " ")
		p = strings.ReplaceAll(p, "{id}", "key_000000000000000000000000")
		code, body, _ := f.do(method, p, adminSecret, nil)
		if e, _ := body["error"].(map[string]any); code == http.StatusMethodNotAllowed || e != nil && (e["code"] == "unknown_path" || e["code"] == "method_not_allowed") {
			t.Errorf("%s: %d %v", op, code, body)
		}
	}
	if code, body, _ := f.do(http.MethodGet, "/admin/v1/nothing", adminSecret, nil); code != http.StatusNotFound || body["error"] == nil {
		t.Errorf("an unknown path: %d %v", code, body)
	}
	if code, _, hd := f.do(http.MethodPut, "/admin/v1/keys", adminSecret, nil); code != http.StatusMethodNotAllowed || !strings.Contains(hd.Get("Allow"), "POST") {
		t.Errorf("a wrong method: %d %v", code, hd)
	}
}

// TestOpenAPIRefsResolve: every $ref names a component the document has.
func TestOpenAPIRefsResolve(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(admin.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	comps := doc["components"].(map[string]any)
	for _, m := range regexp.MustCompile(`"\$ref":\s*"#/components/(\w+)/(\w+)"`).FindAllStringSubmatch(string(admin.OpenAPI()), -1) {
		sec, _ := comps[m[1]].(map[string]any)
		if _, ok := sec[m[2]]; !ok {
			t.Errorf("$ref to a missing %s/%s", m[1], m[2])
		}
	}
}

func TestOpenAPIServedWithoutAuth(t *testing.T) {
	f := newFixture(t, "")
	code, body, hd := f.do(http.MethodGet, "/admin/v1/openapi.json", "", nil)
	if code != http.StatusOK || body["openapi"] != "3.1.0" || hd.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %v", code, hd)
	}
}

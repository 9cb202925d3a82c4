package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/dynamocounters"
	keydynamo "github.com/fngate/fngate/core/keystore/dynamostore"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
)

const adminToken = "sk-controlplane-admin-test"

func configYAML() string {
	sum := sha256.Sum256([]byte(adminToken))
	return `
admin:
  keys: [{name: ops, sha256: "` + hex.EncodeToString(sum[:]) + `", role: admin}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// invoke sends one function URL event through the buffered adapter.
func invoke(t *testing.T, h http.Handler, method, path, query, body string, cookies ...string) (*events.LambdaFunctionURLResponse, map[string]any) {
	t.Helper()
	ev := &events.LambdaFunctionURLRequest{RawPath: path, RawQueryString: query, Body: body, Cookies: cookies,
		Headers: map[string]string{"authorization": "Bearer " + adminToken, "content-type": "application/json"}}
	ev.RequestContext.DomainName = "abc.lambda-url.us-east-1.on.aws"
	ev.RequestContext.HTTP.Method = method
	ev.RequestContext.HTTP.SourceIP = "203.0.113.9"
	resp, err := buffered(h)(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(resp.Body), &out)
	return resp, out
}

func TestServesTheAdminAPI(t *testing.T) {
	h, err := setup(context.Background(), env(map[string]string{"FNGATE_CONFIG_YAML": configYAML()}))
	if err != nil {
		t.Fatal(err)
	}
	resp, me := invoke(t, h, http.MethodGet, "/admin/v1/me", "", "")
	if resp.StatusCode != http.StatusOK || me["id"] != "key:ops" || resp.Headers["Cache-Control"] != "no-store" {
		t.Fatalf("me: %+v", resp)
	}
	// No key store: keys are the config's, and changes say why they cannot be made.
	if resp, _ := invoke(t, h, http.MethodPost, "/admin/v1/keys", "", `{"name":"x"}`); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("create without a key store: %+v", resp)
	}
	if resp, body := invoke(t, h, http.MethodGet, "/v1/chat/completions", "", ""); resp.StatusCode != http.StatusNotFound || body["error"] == nil {
		t.Fatalf("the gateway's path on the control plane: %+v", resp)
	}
}

// TestBufferedAdapter: cookies reach the handler as a Cookie header, Set-Cookie goes back in
// the event's cookies, binary bodies are base64, a panic is a 500.
func TestBufferedAdapter(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cookie":
			c, err := r.Cookie("session")
			if err != nil {
				http.Error(w, "no cookie", http.StatusBadRequest)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "seen", Value: c.Value})
			http.SetCookie(w, &http.Cookie{Name: "other", Value: "2"})
			fmt.Fprint(w, r.URL.RawQuery)
		case "/binary":
			_, _ = w.Write([]byte{0xff, 0xfe, 0x00})
		case "/panic":
			panic("boom")
		}
	})
	resp, _ := invoke(t, h, http.MethodGet, "/cookie", "a=1&b=2", "", "session=abc", "x=y")
	if resp.StatusCode != http.StatusOK || resp.Body != "a=1&b=2" || len(resp.Cookies) != 2 || resp.Cookies[0] != "seen=abc" {
		t.Fatalf("cookies: %+v", resp)
	}
	if resp, _ := invoke(t, h, http.MethodGet, "/binary", "", ""); !resp.IsBase64Encoded || resp.Body != "//4A" {
		t.Fatalf("binary: %+v", resp)
	}
	if resp, _ := invoke(t, h, http.MethodGet, "/panic", "", ""); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("panic: %+v", resp)
	}
}

func TestRefusesStoresItCannotShare(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"memory key store", map[string]string{"FNGATE_CONFIG_YAML": "key_store: {store: memory}\n" + configYAML()}, "not available on Lambda"},
		{"file key store", map[string]string{"FNGATE_CONFIG_YAML": "key_store: {store: file}\n" + configYAML()}, "not available on Lambda"},
		{"file counters", map[string]string{"FNGATE_CONFIG_YAML": "counters: {store: file}\n" + configYAML()}, "not available on Lambda"},
	} {
		if _, err := setup(context.Background(), env(tc.env)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestStoresOnMoto: usage from the counters table, routes from the route-state table, a
// route cooled by hand written to it.
func TestStoresOnMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	awstest.Isolate(t, "controlplane", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTPClient: awsconf.HTTPClient()})
	ctx := context.Background()
	suffix := fmt.Sprint(time.Now().UnixNano())
	countersTable, routesTable := "cp-counters-"+suffix, "cp-routes-"+suffix
	if err := dynamocounters.CreateTable(ctx, db, countersTable); err != nil {
		t.Fatal(err)
	}
	if err := dynamostore.CreateTable(ctx, db, routesTable); err != nil {
		t.Fatal(err)
	}
	hist := dynamocounters.New(db, countersTable)
	if err := hist.AddUsage(ctx, "app", time.Now(), "m", counters.Usage{Requests: 3, InputTokens: 30}); err != nil {
		t.Fatal(err)
	}
	h, err := setup(ctx, env(map[string]string{"FNGATE_CONFIG_YAML": configYAML() + "keys: [{name: app, value: sk-app}]\n",
		EnvCountersTable: countersTable, EnvRouteStateTable: routesTable}))
	if err != nil {
		t.Fatal(err)
	}
	resp, u := invoke(t, h, http.MethodGet, "/admin/v1/usage", "key=app", "")
	if tot, _ := u["totals"].(map[string]any); resp.StatusCode != http.StatusOK || tot["requests"] != 3.0 {
		t.Fatalf("usage: %d %v", resp.StatusCode, u)
	}
	if resp, r := invoke(t, h, http.MethodPost, "/admin/v1/routes/mock%2Fecho/cool", "", `{"for":"10m","reason":"test"}`); resp.StatusCode != http.StatusOK || r["status"] != "cooled" {
		t.Fatalf("cool: %d %v", resp.StatusCode, r)
	}
	st, err := dynamostore.New(db, routesTable).Get(ctx, "mock/echo")
	if err != nil || st.Status != routestate.Cooling || st.Source != routestate.SourceManual {
		t.Fatalf("stored %+v, %v", st, err)
	}
}

// TestKeysOnMoto: the key store on KEYS_TABLE, a key made, listed and audited.
func TestKeysOnMoto(t *testing.T) {
	endpoint := emulator.Moto(t)
	awstest.Isolate(t, "controlplane", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTPClient: awsconf.HTTPClient()})
	ctx := context.Background()
	table := fmt.Sprint("cp-keys-", time.Now().UnixNano())
	if err := keydynamo.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	h, err := setup(ctx, env(map[string]string{"FNGATE_CONFIG_YAML": configYAML(), EnvKeysTable: table}))
	if err != nil {
		t.Fatal(err)
	}
	resp, made := invoke(t, h, http.MethodPost, "/admin/v1/keys", "", `{"name":"svc","team":"t"}`)
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(fmt.Sprint(made["key"]), "sk-fngate-") {
		t.Fatalf("create: %d %v", resp.StatusCode, made)
	}
	id := made["id"].(string)
	if resp, got := invoke(t, h, http.MethodGet, "/admin/v1/keys", "team=t", ""); resp.StatusCode != http.StatusOK || len(got["data"].([]any)) != 1 {
		t.Fatalf("list: %d %v", resp.StatusCode, got)
	}
	if resp, got := invoke(t, h, http.MethodGet, "/admin/v1/audit", "target="+id, ""); resp.StatusCode != http.StatusOK || len(got["data"].([]any)) != 1 {
		t.Fatalf("audit: %d %v", resp.StatusCode, got)
	}
	k, err := keydynamo.New(db, table, keydynamo.Options{}).Get(ctx, id)
	if err != nil || k.Name != "svc" || k.CreatedBy != "key:ops" {
		t.Fatalf("stored %+v, %v", k, err)
	}
}

// TestGatewayCarriesNoControlPlane: the gateway's binaries link none of the admin API (nor
// the console), and the control plane none of the providers.
func TestGatewayCarriesNoControlPlane(t *testing.T) {
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		return string(out)
	}
	for _, gw := range []string{"github.com/fngate/fngate/functions/lambda", "github.com/fngate/fngate/functions/gcf"} {
		for _, line := range strings.Split(deps(gw), "\n") {
			if strings.HasSuffix(line, "/core/admin") || strings.HasSuffix(line, "/core/console") || strings.HasSuffix(line, "/internal/oidcfake") {
				t.Errorf("%s links %s", gw, line)
			}
		}
	}
	if strings.Contains(deps("github.com/fngate/fngate/functions/controlplane/lambda"), "/core/providers/") {
		t.Error("the control plane links the providers")
	}
}

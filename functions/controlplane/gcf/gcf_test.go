package gcf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	keyfirestore "github.com/fngate/fngate/core/keystore/firestorestore"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/firestorestore"
	"github.com/fngate/fngate/internal/emulator"
)

const adminToken = "sk-controlplane-gcf-admin-test"

func configYAML() string {
	sum := sha256.Sum256([]byte(adminToken))
	return `
keys: [{name: app, value: sk-app}]
admin:
  keys: [{name: ops, sha256: "` + hex.EncodeToString(sum[:]) + `", role: admin}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func call(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+adminToken)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

// TestRegisteredFunctionServesTheAdminAPI: the entry point builds from the environment on
// its first request.
func TestRegisteredFunctionServesTheAdminAPI(t *testing.T) {
	t.Setenv("FNGATE_CONFIG_YAML", configYAML())
	code, me := call(t, http.HandlerFunc(ControlPlane), http.MethodGet, "/admin/v1/me", "")
	if code != http.StatusOK || me["id"] != "key:ops" {
		t.Fatalf("%d %v", code, me)
	}
}

func TestFailedBuildIsA500AndRetried(t *testing.T) {
	calls := 0
	l := newLazy(time.Hour, func(context.Context) (http.Handler, error) {
		calls++
		return nil, fmt.Errorf("no config")
	})
	for range 2 {
		if code, body := call(t, l, http.MethodGet, "/admin/v1/me", ""); code != http.StatusInternalServerError || body["error"] == nil {
			t.Fatalf("%d %v", code, body)
		}
	}
	if calls != 1 {
		t.Fatalf("built %d times within retryAfter", calls)
	}
}

func TestRefusesStoresItCannotShare(t *testing.T) {
	for _, section := range []string{"key_store: {store: memory}\n", "key_store: {store: file}\n", "counters: {store: file}\n"} {
		if _, err := build(context.Background(), env(map[string]string{"FNGATE_CONFIG_YAML": section + configYAML()})); err == nil || !strings.Contains(err.Error(), "not available on Cloud Functions") {
			t.Errorf("%q: %v", section, err)
		}
	}
}

// TestStoresOnTheEmulator: usage from the counters database, a route cooled by hand written
// to the route-state database.
func TestStoresOnTheEmulator(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	ctx := context.Background()
	prefix := fmt.Sprintf("cp%d_", time.Now().UnixNano())
	client, err := firestore.NewClient(ctx, "fngate-test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := firestorecounters.New(client, prefix, 0).AddUsage(ctx, "app", time.Now(), "m", counters.Usage{Requests: 2}); err != nil {
		t.Fatal(err)
	}
	h, err := build(ctx, env(map[string]string{"FNGATE_CONFIG_YAML": configYAML(), EnvKeysProject: "fngate-test", EnvKeysCollection: prefix + "keys",
		EnvCountersProject: "fngate-test", EnvCountersPrefix: prefix, EnvRouteStateProject: "fngate-test", EnvRouteStatePrefix: prefix}))
	if err != nil {
		t.Fatal(err)
	}
	code, u := call(t, h, http.MethodGet, "/admin/v1/usage?key=app", "")
	if tot, _ := u["totals"].(map[string]any); code != http.StatusOK || tot["requests"] != 2.0 {
		t.Fatalf("usage: %d %v", code, u)
	}
	if code, r := call(t, h, http.MethodPost, "/admin/v1/routes/mock%2Fecho/cool", `{"for":"10m"}`); code != http.StatusOK || r["status"] != "cooled" {
		t.Fatalf("cool: %d %v", code, r)
	}
	st, err := firestorestore.New(client, prefix).Get(ctx, "mock/echo")
	if err != nil || st.Status != routestate.Cooling || st.Source != routestate.SourceManual {
		t.Fatalf("stored %+v, %v", st, err)
	}
	// Keys in the key store's collection, the route change in its audit log beside them.
	code, made := call(t, h, http.MethodPost, "/admin/v1/keys", `{"name":"svc"}`)
	if code != http.StatusCreated || !strings.HasPrefix(fmt.Sprint(made["key"]), "sk-fngate-") {
		t.Fatalf("create: %d %v", code, made)
	}
	k, err := keyfirestore.New(client, prefix+"keys", keyfirestore.Options{}).Get(ctx, made["id"].(string))
	if err != nil || k.Name != "svc" {
		t.Fatalf("stored key %+v, %v", k, err)
	}
	code, audit := call(t, h, http.MethodGet, "/admin/v1/audit", "")
	if data, _ := audit["data"].([]any); code != http.StatusOK || len(data) != 2 || data[1].(map[string]any)["action"] != "route.cool" {
		t.Fatalf("audit: %d %v", code, audit)
	}
}

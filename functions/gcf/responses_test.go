package gcf

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/firestorestore"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const catalog = "connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(context.Background(), []byte(yaml+"\n"+catalog), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestResponseStoreChoice(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:1") // no client may reach Google
	for _, tc := range []struct {
		yaml string
		env  map[string]string
		want string
		err  string
	}{
		{"", nil, "none", ""},
		{"", map[string]string{EnvResponsesProject: "p"}, "firestore collection fngate_responses of database (default)", ""},
		{"", map[string]string{EnvResponsesProject: "p", EnvResponsesDatabase: "fngate-responses", EnvResponsesCollection: "chats"},
			"firestore collection chats of database fngate-responses", ""},
		{"responses: {store: firestore, database: mine, collection: kept}", map[string]string{EnvResponsesProject: "p", EnvResponsesDatabase: "theirs"},
			"firestore collection kept of database mine", ""},
		{"responses: {store: firestore}", nil, "firestore collection fngate_responses of database (default)", ""},
		{"responses: {store: none}", map[string]string{EnvResponsesProject: "p"}, "none", ""},
		{"responses:\n  store: memory\n", nil, "", "line 2: responses.store: the Cloud Functions gateway keeps stored responses in Firestore (store: firestore, or none); memory would be each instance's own"},
		{"responses:\n  store: dynamodb\n  table: t-1\n", nil, "", "line 2: responses.store: the Cloud Functions gateway keeps stored responses in Firestore"},
	} {
		s, what, err := responseStore(context.Background(), parse(t, tc.yaml), func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q %v: err = %v\nwant %s", tc.yaml, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || what != tc.want || (s == nil) != (what == "none") {
			t.Errorf("%q %v: %v %q, %v; want %q", tc.yaml, tc.env, s, what, err, tc.want)
		}
	}
}

// The store build opens is the environment's collection, on the emulator here.
func TestResponseStoreOnEmulator(t *testing.T) {
	host := emulator.Firestore(t)
	t.Setenv("FIRESTORE_EMULATOR_HOST", host)
	project := fmt.Sprint("gcf-responses-", time.Now().UnixNano())
	env := map[string]string{EnvResponsesProject: project, EnvResponsesCollection: "chats"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, _, err := responseStore(ctx, parse(t, "responses: {timeout: 10s}"), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := s.Put(ctx, &responsestore.Stored{ID: "resp_1", Owner: "app", Created: now, Expires: now.Add(time.Hour), Response: []byte(`{"id":"resp_1"}`)}); err != nil {
		t.Fatal(err)
	}
	client, err := firestore.NewClient(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	got, err := firestorestore.New(client, "chats", firestorestore.Options{}).Get(ctx, "resp_1", "app")
	if err != nil || string(got.Response) != `{"id":"resp_1"}` {
		t.Fatalf("the collection holds %+v, %v", got, err)
	}
}

func TestBuildRefusesAnUnsharedResponseStore(t *testing.T) {
	env := map[string]string{"FNGATE_CONFIG_YAML": "auth: none\nresponses: {store: file}\n" + catalog}
	_, err := build(context.Background(), func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "keeps stored responses in Firestore") {
		t.Fatalf("build error = %v", err)
	}
}

// TestBuildResponsesAcrossInstances builds two instances the way the Terraform module
// configures them (RESPONSES_PROJECT, RESPONSES_DATABASE; the config names no store) on the
// Firestore emulator: a response stored by one is continued, fetched and deleted on the other.
func TestBuildResponsesAcrossInstances(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
	warmEmulator(t)
	env := map[string]string{
		// The emulator answers slower than the default timeout on a busy machine.
		"FNGATE_CONFIG_YAML": `
responses: {timeout: 15s}
keys: [{name: app, value: key-gcf-responses-1}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`,
		EnvResponsesProject:    "fngate-test",
		EnvResponsesCollection: fmt.Sprint("gcf_responses_", time.Now().UnixNano()),
	}
	var instances []http.Handler
	for range 2 {
		h, err := build(context.Background(), func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		instances = append(instances, h)
	}
	gatewaytest.StoredAcrossInstances(t, func(t *testing.T, i int, method, path, body string) (int, []byte) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer key-gcf-responses-1")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		instances[i].ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes()
	}, "m")
}

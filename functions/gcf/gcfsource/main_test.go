package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/firestorestore"
	"github.com/fngate/fngate/events/eventarc"
	"github.com/fngate/fngate/functions/gcf"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/loopback"
)

// buildpackMain is what the Go functions buildpack generates for a declaratively registered
// function (functions.HTTP, functions.CloudEvent): a main that blank-imports the root
// package of the upload and starts the framework on $PORT.
const buildpackMain = `package main

import (
	"log"
	"net/http"
	"os"

	_ "` + Module + `"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
)

func main() {
	http.HandleFunc("/robots.txt", http.NotFound)
	http.HandleFunc("/favicon.ico", http.NotFound)
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	if err := funcframework.Start(port); err != nil {
		log.Fatalf("Function failed to start: %v\n", err)
	}
}
`

// The entry points the Terraform module deploys are the ones the packages register.
func TestEntryPointsMatchTheRegisteredFunctions(t *testing.T) {
	if got := Functions["gateway"].EntryPoint; got != gcf.FunctionName {
		t.Errorf("gateway entry point %q, functions/gcf registers %q", got, gcf.FunctionName)
	}
	if got := Functions["remediation"].EntryPoint; got != eventarc.EntryPoint {
		t.Errorf("remediation entry point %q, events/eventarc registers %q", got, eventarc.EntryPoint)
	}
}

// buildLikeCloudBuild stages fn's upload, then does what the buildpack does with it (go mod
// tidy, generate the main under functions.local/app, go build), and returns the server
// binary and the upload's files.
func buildLikeCloudBuild(t *testing.T, fn Function) (string, map[string][]byte) {
	t.Helper()
	files, err := Files("../../..", fn)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.Contains(name, "/testdata/") {
			t.Errorf("the upload carries %s", name)
		}
		for _, skip := range fn.Skip {
			if strings.HasPrefix(name, "fngate/"+skip+"/") {
				t.Errorf("the upload carries %s", name)
			}
		}
	}
	app := filepath.Join(dir, "functions.local", "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "main.go"), []byte(buildpackMain), 0o644); err != nil {
		t.Fatal(err)
	}

	// The module proxy as configured (Cloud Build has one too): the buildpack's `go mod tidy`
	// loads the tests of dependencies, whose modules fngate's own build never downloads.
	// Checksums come from the upload's go.sum, so no checksum database is consulted.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOSUMDB=off", "GOWORK=off")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("mod", "tidy")
	bin := filepath.Join(dir, "server")
	// No -trimpath: it would recompile every dependency instead of reusing the test run's.
	run("build", "-o", bin, "./functions.local/app")
	return bin, files
}

// TestUploadBuildsLikeCloudBuild builds the gateway's upload and serves a request through
// the result with FUNCTION_TARGET=Gateway.
func TestUploadBuildsLikeCloudBuild(t *testing.T) {
	bin, files := buildLikeCloudBuild(t, Functions["gateway"])
	for _, name := range []string{"fngate/core/config/default.yaml", "fngate/functions/gcf/gcf.go"} {
		if files[name] == nil {
			t.Errorf("the upload lacks %s", name)
		}
	}
	srv := serve(t, bin, "FUNCTION_TARGET=Gateway", "FNGATE_INVOKER_AUTH=IAM",
		"FNGATE_CONFIG_YAML=connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n")
	body := `{"model":"m","messages":[{"role":"user","content":"built like cloud build"}]}`
	status, got := srv.post(t, "/v1/chat/completions", "application/json", nil, body)
	if status != 200 || !strings.Contains(got, "built like cloud build") {
		t.Fatalf("status %d: %s\n%s", status, got, srv.out.String())
	}
}

// TestRemediationUploadBuildsLikeCloudBuild builds the remediation function's upload and
// sends it Pub/Sub messagePublished CloudEvents the way Eventarc does. Offline it proves the
// entry point, the decoding of a log sink's LogEntry and the dry-run default; against the
// Firestore emulator, that the built function cools a route.
func TestRemediationUploadBuildsLikeCloudBuild(t *testing.T) {
	fn := Functions["remediation"]
	bin, files := buildLikeCloudBuild(t, fn)
	if files["fngate/events/eventarc/eventarc.go"] == nil {
		t.Errorf("the upload lacks events/eventarc")
	}
	for name := range files {
		if strings.HasPrefix(name, "fngate/functions/") || strings.HasPrefix(name, "fngate/events/eventbridge/") {
			t.Errorf("the remediation upload carries %s", name)
		}
	}
	target := "FUNCTION_TARGET=" + fn.EntryPoint

	t.Run("dry-run by default", func(t *testing.T) {
		// Nothing dials Firestore until a delivery needs the store, and an ignored class
		// never does: the address is unreachable on purpose.
		srv := serve(t, bin, target, "ROUTE_STATE_PROJECT=demo", "FIRESTORE_EMULATOR_HOST=127.0.0.1:1")
		status, body := srv.postEvent(t, "m-1", providerError("a/echo", "bad_request", 400, time.Now()))
		if status != 200 {
			t.Fatalf("status %d: %s\n%s", status, body, srv.out.String())
		}
		line := srv.waitFor(t, `"message":"remediation"`)
		for _, want := range []string{`"mode":"dry_run"`, `"action":"none"`, `"event_id":"ps:m-1"`, `"route":"a/echo"`} {
			if !strings.Contains(line, want) {
				t.Errorf("decision line lacks %s: %s", want, line)
			}
		}
	})

	t.Run("a bad mode refuses events", func(t *testing.T) {
		srv := serve(t, bin, target, "ROUTE_STATE_PROJECT=demo", "FIRESTORE_EMULATOR_HOST=127.0.0.1:1", "REMEDIATION_MODE=aply")
		// An error status makes Pub/Sub redeliver once the environment is fixed.
		if status, body := srv.postEvent(t, "m-2", providerError("a/echo", "bad_request", 400, time.Now())); status < 500 {
			t.Fatalf("status %d with REMEDIATION_MODE=aply: %s", status, body)
		}
		srv.waitFor(t, "REMEDIATION_MODE")
	})

	t.Run("cools a route in Firestore", func(t *testing.T) {
		host := emulator.Firestore(t)
		project := fmt.Sprintf("gcfsource-%d", time.Now().UnixNano())
		srv := serve(t, bin, target, "ROUTE_STATE_PROJECT="+project, "FIRESTORE_EMULATOR_HOST="+host,
			"REMEDIATION_MODE=apply", "REMEDIATION_BURST_ERRORS=1")
		if status, body := srv.postEvent(t, "m-3", providerError("a/echo", "rate_limited", 429, time.Now())); status != 200 {
			t.Fatalf("status %d: %s\n%s", status, body, srv.out.String())
		}
		t.Setenv("FIRESTORE_EMULATOR_HOST", host)
		client, err := firestore.NewClient(context.Background(), project)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		st, err := firestorestore.New(client, "").Get(context.Background(), "a/echo")
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != routestate.Cooling || st.EventID != "ps:m-3" {
			t.Fatalf("route state %+v, want cooling by ps:m-3\n%s", st, srv.out.String())
		}
	})
}

// providerError is the LogEntry a log sink publishes for one of the gateway's provider_error
// lines in the Cloud Logging format.
func providerError(route, class string, status int, at time.Time) []byte {
	conn, model, _ := strings.Cut(route, "/")
	entry := map[string]any{
		"insertId":  fmt.Sprintf("ins-%d", at.UnixNano()),
		"logName":   "projects/demo/logs/run.googleapis.com%2Fstdout",
		"severity":  "ERROR",
		"timestamp": at.UTC().Format(time.RFC3339Nano),
		"resource":  map[string]any{"type": "cloud_run_revision", "labels": map[string]string{"service_name": "fngate"}},
		"jsonPayload": map[string]any{
			"message": "provider_error", "request_id": "req_1", "endpoint": "chat", "model": "m", "route": route,
			"connection": conn, "provider": "mock", "upstream_model": model, "attempt": 1, "outcome": "failover",
			"status": status, "error_class": class,
		},
	}
	b, _ := json.Marshal(entry)
	return b
}

type server struct {
	url string
	out *syncBuffer
}

// serve runs bin on a free port with env and waits until it accepts connections.
func serve(t *testing.T, bin string, env ...string) *server {
	t.Helper()
	port := loopback.ForTest(t).String()
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(), "PORT="+port), env...)
	s := &server{url: "http://127.0.0.1:" + port, out: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the built function did not listen: %v\n%s", err, s.out.String())
		}
	}
}

func (s *server) post(t *testing.T, path, contentType string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.out.String())
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// postEvent delivers data as Eventarc does for a Pub/Sub message: a binary-mode CloudEvent
// whose id is the message id.
func (s *server) postEvent(t *testing.T, messageID string, data []byte) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"message": map[string]any{
			"data": base64.StdEncoding.EncodeToString(data), "messageId": messageID,
			"publishTime": time.Now().UTC().Format(time.RFC3339Nano),
		},
		"subscription": "projects/demo/subscriptions/eventarc-fngate-remediate-sub",
	})
	return s.post(t, "/", "application/json", map[string]string{
		"ce-specversion": "1.0",
		"ce-id":          messageID,
		"ce-type":        eventarc.EventType,
		"ce-source":      "//pubsub.googleapis.com/projects/demo/topics/fngate-provider-errors",
		"ce-time":        time.Now().UTC().Format(time.RFC3339Nano),
	}, string(body))
}

// waitFor returns the first output line containing want, waiting for the function's logs.
func (s *server) waitFor(t *testing.T, want string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(s.out.String(), "\n") {
			if strings.Contains(line, want) {
				return line
			}
		}
	}
	t.Fatalf("no output line with %s:\n%s", want, s.out.String())
	return ""
}

// syncBuffer collects a subprocess's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// registeredHTTP returns the names the non-test files of dir register with functions.HTTP,
// read from the source: the control plane's package may not exist yet on this branch, so the
// test cannot import it.
func registeredHTTP(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
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
	return names
}

// TestControlPlaneUploadBuildsLikeCloudBuild builds the control plane's upload and asks the
// result for the admin API's OpenAPI document (which needs no credentials), with the key store
// pointed at an address nothing listens on: serving the document must not need the store.
func TestControlPlaneUploadBuildsLikeCloudBuild(t *testing.T) {
	fn := Functions["controlplane"]
	dir := filepath.Join("..", "..", "..", strings.TrimPrefix(fn.Package, fngateMod+"/"))
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s is not on this branch yet: nothing to build", dir)
	}
	if got := registeredHTTP(t, dir); len(got) != 1 || got[0] != fn.EntryPoint {
		t.Fatalf("%s registers %q with functions.HTTP; the upload's entry point (and the Terraform module's) is %s", dir, got, fn.EntryPoint)
	}
	bin, files := buildLikeCloudBuild(t, fn)
	for name := range files {
		if strings.HasPrefix(name, "fngate/functions/gcf/") || strings.HasPrefix(name, "fngate/functions/lambda/") {
			t.Errorf("the control-plane upload carries %s", name)
		}
	}
	srv := serve(t, bin, "FUNCTION_TARGET="+fn.EntryPoint, "KEYS_PROJECT=demo", "COUNTERS_PROJECT=demo", "ROUTE_STATE_PROJECT=demo",
		"FIRESTORE_EMULATOR_HOST=127.0.0.1:1")
	resp, err := http.Get(srv.url + "/admin/v1/openapi.json")
	if err != nil {
		t.Fatalf("%v\n%s", err, srv.out.String())
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); resp.StatusCode != 200 || err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("GET /admin/v1/openapi.json: status %d, %v, openapi %q\n%s", resp.StatusCode, err, doc.OpenAPI, srv.out.String())
	}
}

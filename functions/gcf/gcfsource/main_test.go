package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildpackMain is what the Go functions buildpack generates for a function registered with
// functions.HTTP (its "declarative" template): a main that blank-imports the root package
// of the upload and starts the framework on $PORT.
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

// TestUploadBuildsLikeCloudBuild stages the upload, then does what the buildpack does with
// it (go mod tidy, generate the main under functions.local/app, go build) without the
// network, and serves a request through the result with FUNCTION_TARGET=Gateway.
func TestUploadBuildsLikeCloudBuild(t *testing.T) {
	files, err := Files("../../..")
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
	for _, name := range []string{"fngate/core/config/default.yaml", "fngate/functions/gcf/gcf.go"} {
		if files[name] == nil {
			t.Errorf("the upload lacks %s", name)
		}
	}
	for name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "fngate/functions/gcf/cmd/") {
			t.Errorf("the upload carries %s", name)
		}
	}
	app := filepath.Join(dir, "functions.local", "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "main.go"), []byte(buildpackMain), 0o644); err != nil {
		t.Fatal(err)
	}

	// Offline: everything must come from the module cache that fngate's own build filled.
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "CGO_ENABLED=0")
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
	run("build", "-trimpath", "-o", bin, "./functions.local/app")

	port := freePort(t)
	srv := exec.Command(bin)
	srv.Env = append(os.Environ(), "PORT="+port, "FUNCTION_TARGET=Gateway", "FNGATE_INVOKER_AUTH=IAM",
		"FNGATE_CONFIG_YAML=connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n")
	var out strings.Builder
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()

	body := `{"model":"m","messages":[{"role":"user","content":"built like cloud build"}]}`
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err = http.Post("http://127.0.0.1:"+port+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the built function did not answer: %v\n%s", err, out.String())
		}
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(got), "built like cloud build") {
		t.Fatalf("status %d: %s\n%s", resp.StatusCode, got, out.String())
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

package doccheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/internal/loopback"
)

// root is the repository, two levels up from this package.
var root = func() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}()

// documents are the files whose snippets are checked.
func documents(t *testing.T) []Snippet {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var all []Snippet
	for _, f := range append([]string{filepath.Join(root, "README.md")}, files...) {
		ss, err := Extract(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ss {
			ss[i].File, _ = filepath.Rel(root, ss[i].File)
		}
		all = append(all, ss...)
	}
	return all
}

// isWalkthrough: the self-repair steps of docs/remediation.md, which
// TestSelfRepairWalkthrough runs with its own checks.
func isWalkthrough(s Snippet) bool {
	return s.File == filepath.Join("docs", "remediation.md") && s.Heading == "Try it locally" && isShell(s.Lang)
}

func isShell(lang string) bool {
	switch lang {
	case "sh", "bash", "shell", "console":
		return true
	}
	return false
}

// TestSnippets checks every snippet of README.md and docs/*.md by its language.
func TestSnippets(t *testing.T) {
	for _, s := range documents(t) {
		if s.Lang == "" || s.Lang == "text" {
			continue // a diagram, a listing, a query for another tool: not a snippet
		}
		t.Run(s.Name(), func(t *testing.T) {
			if s.Skip != "" {
				t.Skip(s.Skip)
			}
			switch {
			case s.Lang == "go":
				h.checkGo(t, s)
			case s.Lang == "python" || s.Lang == "py":
				h.checkPython(t, s)
			case isWalkthrough(s):
				t.Skip("run by TestSelfRepairWalkthrough")
			case isShell(s.Lang) && startsServer(s):
				expectAll(t, s, h.runShell(t, s.Body, loopback.ForTest(t).Addr()))
			case isShell(s.Lang):
				expectAll(t, s, h.runShell(t, s.Body, h.server(t)))
			case s.Lang == "yaml" || s.Lang == "yml":
				checkConfigYAML(t, s)
			case s.Lang == "json":
				if !json.Valid([]byte(s.Body)) {
					t.Fatalf("not JSON:\n%s", s.Body)
				}
			case s.Lang == "toml":
				checkTOML(t, s)
			case s.Lang == "hcl" || s.Lang == "terraform":
				if _, diags := hclsyntax.ParseConfig([]byte(s.Body), s.Name(), hclBegin); diags.HasErrors() {
					t.Fatalf("not HCL: %v", diags)
				}
			default:
				t.Fatalf("no check for %q snippets: mark it <!-- snippet: skip (reason) --> or fence it without a language", s.Lang)
			}
		})
	}
}

// TestSelfRepairWalkthrough runs the self-repair steps of docs/remediation.md as written, in a
// fresh directory: `make run` and `go run ./events/cmd/fngate remediation` are the commands, on
// a loopback address instead of 8080 (shims on PATH stand in for make and go with binaries
// built from this tree). It checks what the page says each step does.
func TestSelfRepairWalkthrough(t *testing.T) {
	var walk *Snippet
	for _, s := range documents(t) {
		if isWalkthrough(s) {
			walk = &s
			break
		}
	}
	if walk == nil {
		t.Fatal("docs/remediation.md has no shell snippet under ## Try it locally")
	}
	dir := t.TempDir()
	out := h.runShellIn(t, dir, walk.Body, loopback.ForTest(t).Addr())
	for _, want := range []string{
		"5 provider errors handled (mode dry_run)",        // the dry run reads the log
		"mock/error:503: would cool",                      // and plans the cool
		"windows judged by the log lines' own timestamps", // by the log's own clock
		"5 provider errors handled (mode apply)",          // the same log, applied:
		"mock/error:503: cool applied",                    // a dry run took no delivery
		"X-Fngate-Attempts: 1",                            // the server skips the cooled route
		"-> active v2",                                    // clear brings it back
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".fngate", "routestate.json")); err != nil {
		t.Errorf("the walkthrough left no route state where the local server reads it: %v", err)
	}
	expectAll(t, *walk, out)
}

// checkConfigYAML reads a YAML snippet as an fngate config excerpt: every field it names must
// be one config.Config has, so a field renamed in the code cannot live on in the docs. (The
// gateway itself allows unknown keys; an excerpt is not validated as a whole config, since
// it elides what it does not show.)
func checkConfigYAML(t *testing.T, s Snippet) {
	dec := yaml.NewDecoder(strings.NewReader(s.Body))
	dec.KnownFields(true)
	var c config.Config
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("not an fngate config excerpt: %v", err)
	}
}

// startsServer: a snippet that starts a local server of its own, which then listens on an
// address of its own rather than the shared server's.
func startsServer(s Snippet) bool {
	return strings.Contains(s.Body, "make run") || strings.Contains(s.Body, "go run ./functions/local")
}

// checkTOML parses a TOML snippet with Python's tomllib (the standard library since 3.11;
// the module graph has no TOML parser, and a test is no reason to add one).
func checkTOML(t *testing.T, s Snippet) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	cmd := exec.Command(py, "-c", `
import sys
try:
    import tomllib
except ImportError:
    sys.exit(3)
tomllib.loads(sys.stdin.read())`)
	cmd.Stdin = strings.NewReader(s.Body)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 3 {
		t.Skip("python3 has no tomllib (Python 3.11 or newer)")
	}
	if err != nil {
		t.Fatalf("not TOML: %v\n%s", err, out)
	}
}

func expectAll(t *testing.T, s Snippet, out string) {
	t.Helper()
	for _, want := range s.Expect {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// hclBegin is where an HCL snippet starts.
var hclBegin = hcl.Pos{Line: 1, Column: 1}

// h is the tests' harness: binaries built and the shared server started once, on first use.
var h = &harness{}

type harness struct {
	buildOnce  sync.Once
	bin        string
	buildErr   error
	serverOnce sync.Once
	addr       string
	serverErr  error
	serverCmd  *exec.Cmd
}

// TestMain ends the shared server and removes the binaries once every test has run: a child
// process is not ended by its parent's exit.
func TestMain(m *testing.M) {
	code := m.Run()
	if h.serverCmd != nil {
		_ = h.serverCmd.Process.Kill()
		_ = h.serverCmd.Wait()
	}
	if h.bin != "" {
		_ = os.RemoveAll(h.bin)
	}
	os.Exit(code)
}

// binaries builds the local server and the operator tool from this tree.
func (h *harness) binaries(t *testing.T) string {
	t.Helper()
	h.buildOnce.Do(func() {
		h.bin, h.buildErr = os.MkdirTemp("", "doccheck-bin")
		if h.buildErr != nil {
			return
		}
		for name, pkg := range map[string]string{"fngate-local": "./functions/local", "fngate-remediate": "./events/cmd/fngate-remediate", "fngate": "./events/cmd/fngate"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(h.bin, name), pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				h.buildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
		h.buildErr = writeShims(h.bin)
	})
	if h.buildErr != nil {
		t.Fatal(h.buildErr)
	}
	return h.bin
}

// server is a local server with the embedded default (mock models only: provider
// credentials are kept from it), shared by the snippets that only call one.
func (h *harness) server(t *testing.T) string {
	t.Helper()
	bin := h.binaries(t)
	h.serverOnce.Do(func() {
		p, err := loopback.Reserve()
		if err != nil {
			h.serverErr = err
			return
		}
		// Held for the test binary's life; the server binds it all the same (see loopback).
		h.addr = p.Addr()
		cmd := exec.Command(filepath.Join(bin, "fngate-local"), "-addr", h.addr, "-route-state", "off")
		cmd.Env = cleanEnv()
		if err := cmd.Start(); err != nil {
			h.serverErr = err
			return
		}
		h.serverCmd = cmd // serves every subtest; TestMain ends it
		h.serverErr = waitHealthy(h.addr)
	})
	if h.serverErr != nil {
		t.Fatal(h.serverErr)
	}
	return h.addr
}

func waitHealthy(addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the local server on %s never answered /healthz", addr)
}

// cleanEnv is this process's environment without provider credentials and fngate settings,
// so the embedded default serves the mock models only and nothing reaches the network.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "FNGATE_"), strings.HasPrefix(k, "REMEDIATION_"), strings.HasSuffix(k, "_API_KEY"),
			k == "AWS_BEARER_TOKEN_BEDROCK", k == "GOOGLE_CLOUD_PROJECT", k == "OLLAMA_BASE_URL", k == "VLLM_BASE_URL":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// shims stand in for the commands the docs tell a reader to type, running what this test
// built: `make run` and `go run` of the local server, of fngate and of fngate-remediate (its
// old name). Anything else fails loudly rather than doing something the test did not mean.
const shimMake = `#!/usr/bin/env bash
if [ "$1" = run ]; then shift; exec "$DOCCHECK_BIN/fngate-local" -addr "$DOCCHECK_ADDR" "$@"; fi
echo "doccheck: the snippet runs 'make $*', which the snippet test does not run" >&2; exit 97
`

const shimGo = `#!/usr/bin/env bash
if [ "$1" = run ]; then
  case "$2" in
  ./functions/local) shift 2; exec "$DOCCHECK_BIN/fngate-local" -addr "$DOCCHECK_ADDR" "$@" ;;
  ./events/cmd/fngate-remediate) shift 2; exec "$DOCCHECK_BIN/fngate-remediate" "$@" ;;
  ./events/cmd/fngate) shift 2; exec "$DOCCHECK_BIN/fngate" "$@" ;;
  esac
fi
echo "doccheck: the snippet runs 'go $*', which the snippet test does not run" >&2; exit 97
`

func writeShims(bin string) error {
	dir := filepath.Join(bin, "shims")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{"make": shimMake, "go": shimGo} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// onLoopback points a snippet at addr instead of the documented 127.0.0.1:8080.
func onLoopback(body, addr string) string {
	return strings.NewReplacer("127.0.0.1:8080", addr, "localhost:8080", addr).Replace(body)
}

func (h *harness) runShell(t *testing.T, body, addr string) string {
	t.Helper()
	return h.runShellIn(t, t.TempDir(), body, addr)
}

// runShellIn runs a shell snippet in dir with bash -eo pipefail, the shims first on PATH,
// and ends whatever it left running in the background.
func (h *harness) runShellIn(t *testing.T, dir, body, addr string) string {
	t.Helper()
	bin := h.binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", onLoopback(body, addr))
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PATH="+filepath.Join(bin, "shims")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DOCCHECK_BIN="+bin, "DOCCHECK_ADDR="+addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return string(out)
}

// checkGo compiles a Go snippet in a module of its own that requires what the repository
// requires (openai-go at the repository's version, fngate itself by replace), offline, and
// runs it against the local server.
func (h *harness) checkGo(t *testing.T, s Snippet) {
	if !strings.HasPrefix(strings.TrimSpace(s.Body), "package ") {
		t.Fatal("a Go snippet must be a whole program (package, imports, main) or be marked <!-- snippet: skip (reason) -->")
	}
	addr := h.server(t)
	dir := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	mod := "module snippet\n\ngo " + mf.Go.Version + "\n\nrequire github.com/fngate/fngate v0.0.0\n\nreplace github.com/fngate/fngate => " + root + "\n"
	for _, r := range mf.Require {
		mod += "require " + r.Mod.Path + " " + r.Mod.Version + "\n"
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "main.go": []byte(onLoopback(s.Body, addr))} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", "snippet", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the snippet does not compile: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, filepath.Join(dir, "snippet"))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the snippet fails: %v\n%s", err, out)
	}
	expectAll(t, s, string(out))
}

// checkPython parses a Python snippet and, when it uses the openai package, runs it against
// the local server with the stand-in in testdata/pystub (PyPI is out of reach here).
func (h *harness) checkPython(t *testing.T, s Snippet) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	file := filepath.Join(t.TempDir(), "snippet.py")
	if err := os.WriteFile(file, []byte(onLoopback(s.Body, h.server(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", file).CombinedOutput(); err != nil {
		t.Fatalf("not Python: %v\n%s", err, out)
	}
	if !strings.Contains(s.Body, "import openai") && !strings.Contains(s.Body, "from openai") {
		return
	}
	stub, _ := filepath.Abs(filepath.Join("testdata", "pystub"))
	cmd := exec.Command(py, file)
	cmd.Env = append(cleanEnv(), "PYTHONPATH="+stub)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the snippet fails: %v\n%s", err, out)
	}
	expectAll(t, s, string(out))
}

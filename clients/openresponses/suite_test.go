package openresponses

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/loopback"
)

// The suite's tests, by id, as the contract (docs/open-responses.md) names them. Every test
// the suite runs must pass but those outside the contract; a required test the suite no
// longer has fails this test, and one it has that is named nowhere here is required too.
var required = []string{
	"basic-response", "assistant-phase", "streaming-response", "system-prompt", "tool-calling", "image-input", "multi-turn",
	// WebSocket mode, on the local server.
	"websocket-response", "websocket-sequential-responses", "websocket-continuation",
	"websocket-reconnect-store-false-recovery", "websocket-previous-response-not-found",
	"websocket-failed-continuation-evicts-cache", "websocket-compact-new-chain",
	// POST /v1/responses/compact.
	"compact-response", "compact-missing-model",
}

// outside are the tests outside the contract, with why: reported, never required.
var outside = map[string]string{
	"response-output-phase-schema": "validates a fixture of the suite's own against the schema and sends no request",
	"file-input":                   "input_file parts are read only by OpenAI's Responses API (the native route); not in this copy of the suite",
	"file-search":                  "the file_search tool runs at OpenAI over its vector stores; not in this copy of the suite",
	"offline-web-search":           "the web_search tool runs at OpenAI; not in this copy of the suite",
}

const suiteKey = "sk-fngate-openresponses-0123456789"

// backend is one model the suite runs against.
type backend struct{ name, model string }

var backends = []backend{
	{"mock", "mock-tools"},        // the mock: text, or a call of the first tool offered
	{"anthropic", "claude-model"}, // translated to Anthropic's Messages API (the fake answers like a model)
}

// result is one test of the suite's --json output.
type result struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Status       string          `json:"status"`
	Duration     int             `json:"duration"`
	Errors       []string        `json:"errors"`
	StreamEvents *int            `json:"streamEvents"`
	Request      json.RawMessage `json:"request"`
	Response     json.RawMessage `json:"response"`
}

// TestOpenResponses runs the Open Responses compliance suite against the local server, once
// per backend, with a subtest per suite test id (-run 'TestOpenResponses/mock/tool-calling'
// runs the suite on the mock and reports that test), and a table of every result in the
// log.
func TestOpenResponses(t *testing.T) {
	root := moduleRoot(t)
	src := suiteSource(t, root)
	modules := installed(t)
	bun := installedBun(t, modules)
	work := copySuite(t, src, modules)
	base, logs := serveLocal(t, root)

	t.Run("stream-goldens", func(t *testing.T) { checkGoldens(t, bun, work, root) })
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			results := runSuite(t, bun, work, base, b.model)
			t.Log("Open Responses suite on " + b.model + ":\n" + table(results))
			byID := map[string]result{}
			for _, r := range results {
				byID[r.ID] = r
			}
			ids := append([]string(nil), required...)
			for id := range byID {
				if !contains(required, id) {
					ids = append(ids, id)
				}
			}
			for _, id := range ids {
				t.Run(id, func(t *testing.T) {
					r, ran := byID[id]
					why, isOutside := outside[id]
					switch {
					case isOutside:
						t.Skipf("outside the contract (%s); the suite says %s", why, r.Status)
					case !ran:
						t.Fatalf("the suite has no test %s any more: update the contract (docs/open-responses.md) and this test", id)
					case r.Status != "passed":
						t.Errorf("%s (%s): %s\n%s", r.Name, r.Status, strings.Join(r.Errors, "\n"), excerpt(r.Response))
					}
					if !contains(required, id) && !isOutside {
						t.Logf("%s is not named in the contract: it is required, and docs/open-responses.md should list it", id)
					}
				})
			}
			if t.Failed() {
				t.Log("the gateway's log of what it refused or failed:\n" + notable(logs.String()))
			}
		})
	}
}

// outsideGoldens are stream goldens of what the Open Responses schema has no shape for, with
// why: not validated.
var outsideGoldens = map[string]string{
	"namespaced_call.golden.txt": "a namespace tool, which Codex sends for its MCP servers: OpenAI's, not in the Open Responses schema, whose tools are functions",
}

// checkGoldens validates the Responses stream golden files with the suite's schemas
// (goldens.ts): the event kinds the suite's own tests never make (reasoning, refusals,
// function call arguments, response.incomplete) are held to the schema too.
func checkGoldens(t *testing.T, bun, work, root string) {
	all, _ := filepath.Glob(filepath.Join(root, "core", "responses", "testdata", "stream", "*.golden.txt"))
	var files []string
	for _, f := range all {
		if why, ok := outsideGoldens[filepath.Base(f)]; ok {
			t.Logf("%s: outside the contract (%s)", filepath.Base(f), why)
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no stream golden files under core/responses/testdata/stream")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bun, append([]string{"--no-install", filepath.Join("bin", "goldens.ts")}, files...)...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1", "DO_NOT_TRACK=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("goldens.ts: %v\n%s", err, out)
	}
	events := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			File   string   `json:"file"`
			Event  string   `json:"event"`
			Issues []string `json:"issues"`
			Events *int     `json:"events"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("goldens.ts printed %q", line)
		}
		if r.Events != nil {
			events = *r.Events
			continue
		}
		t.Errorf("%s: %s refused by the schema: %s", filepath.Base(r.File), r.Event, strings.Join(r.Issues, "; "))
	}
	if events == 0 {
		t.Errorf("no events validated in %d files", len(files))
	}
	t.Logf("%d events of %d golden files validated", events, len(files))
}

// runSuite runs the suite against base with model and returns its results.
func runSuite(t *testing.T, bun, work, base, model string) []result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bun, "--no-install", "bin/compliance-test.ts",
		"--base-url", base+"/v1", "--api-key", suiteKey, "--model", model, "--json")
	cmd.Dir = work
	// Nothing of this machine's but PATH: no proxy (the suite talks to loopback only), no
	// keys, a HOME of its own for whatever Bun keeps.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1", "DO_NOT_TRACK=1",
		"NO_PROXY=127.0.0.1,localhost"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run() // exits 1 when a test failed: the results say which
	var out struct {
		Summary struct{ Passed, Failed, Skipped, Total int } `json:"summary"`
		Results []result                                     `json:"results"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil || len(out.Results) == 0 {
		t.Fatalf("the suite gave no results (%v, %v):\n%s\n%s", err, jerr, stdout.String(), stderr.String())
	}
	sort.Slice(out.Results, func(i, j int) bool { return out.Results[i].ID < out.Results[j].ID })
	return out.Results
}

// table lists the results, one line each, with the first error of a failure.
func table(results []result) string {
	var b strings.Builder
	for _, r := range results {
		mark := map[string]string{"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[r.Status]
		if mark == "" {
			mark = strings.ToUpper(r.Status)
		}
		fmt.Fprintf(&b, "  %-4s %-44s %5dms", mark, r.ID, r.Duration)
		if r.StreamEvents != nil {
			fmt.Fprintf(&b, " %3d events", *r.StreamEvents)
		}
		if _, ok := outside[r.ID]; ok {
			b.WriteString("  (outside the contract)")
		}
		if r.Status == "failed" && len(r.Errors) > 0 {
			fmt.Fprintf(&b, "  %s", firstLine(r.Errors[0]))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// notable keeps the log lines of what did not go well: warnings, errors, and requests
// answered with a status of 400 or more.
func notable(log string) string {
	var b strings.Builder
	for _, line := range strings.Split(log, "\n") {
		var l struct {
			Level  string `json:"level"`
			Status int    `json:"status"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Level != "INFO" || l.Status >= 400 {
			if strings.TrimSpace(line) != "" {
				b.WriteString(line + "\n")
			}
		}
	}
	if b.Len() == 0 {
		return "(nothing: every request the gateway logged was answered)"
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

func excerpt(raw json.RawMessage) string {
	if len(raw) > 4000 {
		return string(raw[:4000]) + "..."
	}
	return string(raw)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// compactionKey is a key to seal compaction summaries with, this run's own.
func compactionKey(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// serveLocal builds the local server and serves it on loopback with the mock and an
// Anthropic route (the fake, in this process), a key, and the memory response store. It
// returns the server's base URL and its log.
func serveLocal(t *testing.T, root string) (string, *gatewaytest.LogBuffer) {
	t.Helper()
	an := anthropicfake.New()
	t.Cleanup(an.Close)
	an.Script = anthropicfake.Model
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fngate.yaml")
	yaml := `
keys:
  - {name: suite, value: ` + suiteKey + `}
connections:
  mock: {kind: mock}
  claude: {kind: anthropic, api_key: ` + anthropicfake.APIKey + `, base_url: "` + an.URL + `"}
models:
  mock-tools: {routes: [{connection: mock, model: tools}]}
  claude-model: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
responses:
  store: memory
  compaction_keys: [{id: suite, key: "` + compactionKey(t) + `"}]
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fngate-local")
	build := exec.Command("go", "build", "-o", bin, "./functions/local")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the local server: %v\n%s", err, out)
	}
	addr := loopback.ForTest(t).Addr()
	cmd := exec.Command(bin, "-config", cfg, "-addr", addr, "-route-state", "off")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	logs := &gatewaytest.LogBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr, logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local server did not start:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

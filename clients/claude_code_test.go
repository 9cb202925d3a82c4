// Package clients runs the real agent clients (Claude Code, Codex CLI) and SDKs against the
// gateway, offline: the npm packages pinned in package.json, installed by .ci/run, driven by
// clients/internal/agents. A test skips with the install command when they are absent.
package clients

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fngate/fngate/clients/internal/agents"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// The gateway names Claude Code is pointed at: names it does not know, as any gateway's are,
// so it sends what it sends to an unknown model (adaptive thinking, a system message in the
// conversation).
const claudeConfig = `
keys:
  - {name: claude-code, value: sk-gw-claude-code-0123456789}
connections:
  mock: {kind: mock}
models:
  claude-mock: {routes: [{connection: mock, model: lorem}]}
  claude-mock-tools: {routes: [{connection: mock, model: tools}]}
`

const claudeKey = "sk-gw-claude-code-0123456789"

// serve runs the gateway on loopback with the mock provider, returning its URL and its log;
// seen, when not nil, gets each request's method and URL.
func serve(t *testing.T, yaml string, seen ...func(method, url string)) (string, *gatewaytest.LogBuffer) {
	t.Helper()
	return serveWith(t, yaml, nil, seen...)
}

// serveWith is serve with the gateway's options set by with, when not nil.
func serveWith(t *testing.T, yaml string, with func(*gateway.Options), seen ...func(method, url string)) (string, *gatewaytest.LogBuffer) {
	t.Helper()
	logs := &gatewaytest.LogBuffer{}
	cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: func(string) string { return "" }})
	reg := providers.Registry{}
	mock.Register(reg)
	var wraps []func(http.Handler) http.Handler
	for _, f := range seen {
		wraps = append(wraps, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f(r.Method, r.URL.String())
				next.ServeHTTP(w, r)
			})
		})
	}
	opt := gateway.Options{Registry: reg, Logger: logs.Logger()}
	if with != nil {
		with(&opt)
	}
	srv := gatewaytest.Serve(t, cfg, opt, wraps...)
	return srv.URL, logs
}

// requests returns the gateway's request log lines.
func requests(t *testing.T, logs *gatewaytest.LogBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == record.MsgRequest {
			out = append(out, line)
		}
	}
	return out
}

// allAccepted fails the test unless the gateway answered every request with a 200: Claude
// Code retries a refused request with fewer betas, which would still let it answer.
func allAccepted(t *testing.T, logs *gatewaytest.LogBuffer, atLeast int) []map[string]any {
	t.Helper()
	reqs := requests(t, logs)
	if len(reqs) < atLeast {
		t.Fatalf("the gateway logged %d requests, want at least %d:\n%s", len(reqs), atLeast, logs.String())
	}
	for _, r := range reqs {
		if r["status"] != float64(200) {
			t.Errorf("the gateway refused a request Claude Code sent: %v", r)
		}
	}
	return reqs
}

func TestClaudeCodeAnswersThroughTheGateway(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  agents.ClaudeOptions
	}{
		{"x-api-key", agents.ClaudeOptions{APIKey: claudeKey}},
		{"bearer", agents.ClaudeOptions{AuthToken: claudeKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, logs := serve(t, claudeConfig)
			opt := tc.opt
			opt.BaseURL, opt.Model, opt.Prompt = url, "claude-mock", "Say something, please."
			run := agents.Claude(t, opt)
			if run.ExitCode != 0 || !strings.HasPrefix(run.Text(), "Lorem ipsum dolor sit amet") {
				t.Fatalf("exit %d, answer %q\nstderr: %s\ngateway log:\n%s", run.ExitCode, run.Text(), run.Stderr, logs.String())
			}
			for _, r := range allAccepted(t, logs, 1) {
				if r["endpoint"] != "messages" || r["model"] != "claude-mock" {
					t.Errorf("request %v", r)
				}
			}
		})
	}
}

// TestClaudeCodeToolUse: the mock calls Claude Code's Read tool; Claude Code runs it and
// sends the result back as a tool_result, and the answer after it comes through.
func TestClaudeCodeToolUse(t *testing.T) {
	url, logs := serve(t, claudeConfig)
	run := agents.Claude(t, agents.ClaudeOptions{BaseURL: url, APIKey: claudeKey, Model: "claude-mock-tools",
		Prompt: "Read the file notes.txt", Tools: []string{"Read"}, AllowedTools: []string{"Read"}, DisableToolSearch: true})
	if run.ExitCode != 0 || !strings.HasPrefix(run.Text(), "The tool returned:") {
		t.Fatalf("exit %d, answer %q\nstderr: %s\ngateway log:\n%s", run.ExitCode, run.Text(), run.Stderr, logs.String())
	}
	allAccepted(t, logs, 2)
}

// TestClaudeCodeWithItsDefaultTools: the default tool set (a deferred-tool placeholder
// first, tool search) is accepted as Claude Code sends it.
func TestClaudeCodeWithItsDefaultTools(t *testing.T) {
	url, logs := serve(t, claudeConfig)
	run := agents.Claude(t, agents.ClaudeOptions{BaseURL: url, APIKey: claudeKey, Model: "claude-mock", Prompt: "Hi"})
	if run.ExitCode != 0 || run.Text() == "" {
		t.Fatalf("exit %d, answer %q\nstderr: %s\ngateway log:\n%s", run.ExitCode, run.Text(), run.Stderr, logs.String())
	}
	allAccepted(t, logs, 1)
}

// TestClaudeCodeModelDiscovery: with gateway model discovery on, Claude Code lists the
// gateway's models in Anthropic's shape before it asks.
func TestClaudeCodeModelDiscovery(t *testing.T) {
	var mu sync.Mutex
	var urls []string
	url, logs := serve(t, claudeConfig, func(method, url string) {
		mu.Lock()
		defer mu.Unlock()
		urls = append(urls, method+" "+url)
	})
	run := agents.Claude(t, agents.ClaudeOptions{BaseURL: url, APIKey: claudeKey, Model: "claude-mock", Prompt: "Hi", ModelDiscovery: true})
	if run.ExitCode != 0 || run.Text() == "" {
		t.Fatalf("exit %d, answer %q\nstderr: %s", run.ExitCode, run.Text(), run.Stderr)
	}
	allAccepted(t, logs, 1)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(urls, "GET /v1/models?limit=1000") {
		t.Errorf("Claude Code did not list the models: %v", urls)
	}
}

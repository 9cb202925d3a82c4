package clients

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/fngate/fngate/clients/internal/agents"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// codexSummary is what the upstream answers Codex's compaction request with.
const codexSummary = "CODEX-SUMMARY-7731: the user asked for a greeting; a probe tool was called."

// TestCodexSessionWhoseContextFills: Codex 0.171 with a custom provider does not call
// POST /v1/responses/compact when its context fills (that is for OpenAI's own provider); it
// compacts with an ordinary streamed POST /v1/responses turn, its compaction prompt as the last
// user message and no tools, and then goes on in a new context window that holds the summary.
// On a route the gateway translates (a vLLM server, OpenAI's chat wire) the session completes:
// the upstream reports a context past Codex's auto-compact limit after the first call, Codex
// compacts, and the turn ends with the answer of the window that holds the summary.
func TestCodexSessionWhoseContextFills(t *testing.T) {
	up := openaifake.New()
	t.Cleanup(up.Close)
	up.Script = func(r openaifake.Request) openaifake.Reply {
		_, hasTools := r.Body["tools"]
		switch {
		case strings.Contains(string(r.Raw), "CODEX-SUMMARY-7731"):
			return openaifake.Reply{Text: "Resumed from the summary.", PromptTokens: 900, CompletionTokens: 5}
		case !hasTools:
			return openaifake.Reply{Text: codexSummary, PromptTokens: 900, CompletionTokens: 20}
		}
		// A context far past model_auto_compact_token_limit: Codex compacts before it sends the
		// tool's result.
		return openaifake.Reply{ToolCalls: []openaifake.ToolCall{{ID: "call_probe", Name: "fngate_probe", Arguments: `{}`}},
			PromptTokens: 50000, CompletionTokens: 10}
	}
	yaml := `
keys:
  - {name: codex, value: ` + codexKey + `}
connections:
  up: {kind: vllm, base_url: "` + up.BaseURL() + `"}
models:
  gpt-up: {routes: [{connection: up, model: served-model}]}
`
	cfg := gatewaytest.Config(t, yaml, config.Options{Getenv: func(string) string { return "" }})
	reg := providers.Registry{}
	openaicompat.Register(reg)
	logs := &gatewaytest.LogBuffer{}
	var mu sync.Mutex
	var kinds, paths []string // what Codex said each request was, and where it sent it
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			mu.Lock()
			paths = append(paths, r.Method+" "+r.URL.Path)
			kinds = append(kinds, codexRequestKind(b))
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}
	srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: logs.Logger()}, record)
	run := agents.Codex(t, agents.CodexOptions{BaseURL: srv.URL, APIKey: codexKey, Model: "gpt-up", Prompt: "say hi",
		Config: "model_context_window = 100000\nmodel_auto_compact_token_limit = 20000", NoRetries: true})
	if run.ExitCode != 0 || run.Failure() != "" || run.Text() != "Resumed from the summary." {
		t.Fatalf("exit %d, failure %q, answer %q\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", run.ExitCode, run.Failure(), run.Text(),
			run.Stdout, run.Stderr, logs.String())
	}
	responsesOnly(t, requests(t, logs), 3)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if p != "POST /v1/responses" {
			t.Errorf("Codex sent %s; with a custom provider it compacts through /v1/responses", p)
		}
	}
	if strings.Join(kinds, " ") != "turn compaction turn" {
		t.Errorf("Codex's requests were %v, want a turn, its compaction, and the turn that resumed", kinds)
	}
	last := up.Requests()[len(up.Requests())-1]
	if !strings.Contains(string(last.Raw), "CODEX-SUMMARY-7731") {
		t.Errorf("the window after the compaction does not hold the summary: %s", last.Raw)
	}
}

// codexRequestKind is the request_kind Codex writes in the turn metadata it sends as
// client_metadata (turn, compaction), or "?".
func codexRequestKind(body []byte) string {
	var b struct {
		ClientMetadata map[string]string `json:"client_metadata"`
	}
	var meta struct {
		RequestKind string `json:"request_kind"`
	}
	if json.Unmarshal(body, &b) != nil || json.Unmarshal([]byte(b.ClientMetadata["x-codex-turn-metadata"]), &meta) != nil || meta.RequestKind == "" {
		return "?"
	}
	return meta.RequestKind
}

package agents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const testKey = "sk-gw-harness-test"

// say answers every request with the same text.
func say(text string) func(map[string]any) anthropicTurn {
	return func(map[string]any) anthropicTurn { return anthropicTurn{Text: text} }
}

// onlyMessages fails the test unless every request the stub got was Claude Code's
// POST /v1/messages?beta=true: with nonessential traffic off there is no probe, no telemetry,
// no model list, and so nothing a door test would have to answer beyond the one endpoint.
func onlyMessages(t *testing.T, reqs []request) {
	t.Helper()
	only(t, reqs, "POST", "/v1/messages?beta=true")
}

// only fails the test unless there were requests and all of them were method url.
func only(t *testing.T, reqs []request, method, url string) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("the stub received no request")
	}
	for _, r := range reqs {
		if r.Method != method || r.URL != url {
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
		}
	}
}

func toolNames(body map[string]any) []string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		tool, _ := x.(map[string]any)
		name, _ := tool["name"].(string)
		names = append(names, name)
	}
	return names
}

func TestClaudePrintsTheAnswerOfAMessagesStream(t *testing.T) {
	stub := anthropicStub(t, say("PING"))
	r := Claude(t, ClaudeOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "claude-mock", Prompt: "Say PING back"})
	if r.ExitCode != 0 || r.Final == nil || r.Final.IsError {
		t.Fatalf("exit %d, final %+v\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Final, r.Stdout, r.Stderr)
	}
	if got := r.Text(); got != "PING" {
		t.Errorf("answer %q, want the stub's PING", got)
	}
	if len(r.Events) < 2 {
		t.Errorf("stream-json gave %d events, want the init and result at least", len(r.Events))
	}

	reqs := stub.requests()
	onlyMessages(t, reqs)
	q := reqs[0]
	if got := q.Header.Get("x-api-key"); got != testKey {
		t.Errorf("x-api-key %q, want the key given", got)
	}
	if got := q.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q sent beside x-api-key", got)
	}
	if q.Body["model"] != "claude-mock" || q.Body["stream"] != true {
		t.Errorf("model %v, stream %v; want claude-mock, true", q.Body["model"], q.Body["stream"])
	}
	// The request matches the recordings' (which used stream-json too): see OutputFormat.
	if beta := q.Header.Get("anthropic-beta"); !strings.Contains(beta, "thinking-display-updates-2026-08-18") {
		t.Errorf("anthropic-beta %q lacks the recordings' thinking-display-updates flag", beta)
	}
}

func TestClaudeSendsAuthTokenAsBearer(t *testing.T) {
	stub := anthropicStub(t, say("PING"))
	r := Claude(t, ClaudeOptions{BaseURL: stub.srv.URL, AuthToken: testKey, Model: "claude-mock",
		Prompt: "Say PING back", OutputFormat: "text"})
	if r.ExitCode != 0 || r.Text() != "PING" {
		t.Fatalf("exit %d, answer %q\nstderr:\n%s", r.ExitCode, r.Text(), r.Stderr)
	}
	reqs := stub.requests()
	onlyMessages(t, reqs)
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q, want Bearer and the token", got)
	}
	if got := reqs[0].Header.Get("x-api-key"); got != "" {
		t.Errorf("x-api-key %q sent beside the bearer token", got)
	}
}

// A tool turn end to end: the stub asks for Read, Claude Code runs it in the working
// directory and sends the file back as a tool_result, the stub answers with what it got.
func TestClaudeRunsAnAllowedToolAndReturnsItsResult(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(file, []byte("the note says 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stub := anthropicStub(t, func(body map[string]any) anthropicTurn {
		if result, ok := toolResult(body); ok {
			if strings.Contains(result, "the note says 42") {
				return anthropicTurn{Text: "FOUND 42"}
			}
			return anthropicTurn{Text: "MISSING: " + result}
		}
		return anthropicTurn{ToolName: "Read", ToolInput: map[string]any{"file_path": file}}
	})
	r := Claude(t, ClaudeOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "claude-mock-tools",
		Prompt: "Read note.txt and tell me the number", Dir: dir,
		Tools: []string{"Read"}, AllowedTools: []string{"Read"}, DisableToolSearch: true})
	if r.ExitCode != 0 || r.Text() != "FOUND 42" {
		t.Fatalf("exit %d, answer %q\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Text(), tail(r.Stdout), r.Stderr)
	}
	reqs := stub.requests()
	onlyMessages(t, reqs)
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the tool_use turn and the tool_result turn", len(reqs))
	}
	for i, q := range reqs {
		if got := toolNames(q.Body); !slices.Equal(got, []string{"Read"}) {
			t.Errorf("request %d offers tools %v, want only Read (--tools Read, no ToolSearch)", i, got)
		}
	}
}

func TestClaudeAsksForModelsWithGatewayDiscovery(t *testing.T) {
	stub := anthropicStub(t, say("PING"))
	r := Claude(t, ClaudeOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "claude-mock",
		Prompt: "Say PING back", ModelDiscovery: true})
	if r.ExitCode != 0 || r.Text() != "PING" {
		t.Fatalf("exit %d, answer %q\nstderr:\n%s", r.ExitCode, r.Text(), r.Stderr)
	}
	var urls []string
	for _, q := range stub.requests() {
		urls = append(urls, q.Method+" "+q.URL)
	}
	want := []string{"GET /v1/models?limit=1000", "POST /v1/messages?beta=true"}
	if !slices.Equal(urls, want) {
		t.Errorf("requests %v, want %v (as in claude-code-model-discovery)", urls, want)
	}
}

// The guard behind the offline switches: with them unset, Claude Code 2.1.332 tries
// api.anthropic.com, and the proxy trap must see it (and, in every other test, fail it). If a
// release stops honouring HTTPS_PROXY this test says the guard no longer guards.
func TestProxyGuardCatchesClaudeWhenNotHardened(t *testing.T) {
	stub := anthropicStub(t, say("PING"))
	var unset []string
	for _, kv := range ClaudeOfflineEnv {
		k, _, _ := strings.Cut(kv, "=")
		unset = append(unset, k+"=") // empty is unset to Claude Code (JavaScript's falsy "")
	}
	r := Claude(t, ClaudeOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "claude-mock",
		Prompt: "Say PING back", Env: unset, allowEscapes: true})
	if r.ExitCode != 0 || r.Text() != "PING" {
		t.Fatalf("exit %d, answer %q\nstderr:\n%s", r.ExitCode, r.Text(), r.Stderr)
	}
	if !slices.ContainsFunc(r.Escapes, func(e string) bool { return strings.Contains(e, "api.anthropic.com") }) {
		t.Errorf("the proxy trap saw %q; want Claude Code's CONNECT api.anthropic.com:443", r.Escapes)
	}
	onlyMessages(t, stub.requests()) // behind a proxy it skips the HEAD /api/hello preconnect
}

// NoRetries for error tests: one request, and the gateway's error in the result at once
// (without it Claude Code retries a 401 for minutes).
func TestClaudeReportsAnErrorAtOnceWithNoRetries(t *testing.T) {
	stub := anthropicStub(t, func(map[string]any) anthropicTurn {
		return anthropicTurn{ErrorStatus: 401, ErrorType: "authentication_error"}
	})
	r := Claude(t, ClaudeOptions{BaseURL: stub.srv.URL, APIKey: "sk-wrong", Model: "claude-mock",
		Prompt: "Say PING back", NoRetries: true})
	if r.ExitCode == 0 || r.Final == nil || !r.Final.IsError || !strings.Contains(r.Text(), "401") {
		t.Fatalf("exit %d, final %+v; want a failed run naming the 401\nstdout:\n%s", r.ExitCode, r.Final, tail(r.Stdout))
	}
	if n := len(stub.requests()); n != 1 {
		t.Errorf("%d requests, want 1 with CLAUDE_CODE_MAX_RETRIES=0", n)
	}
}

package agents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// reply answers every request with the same text.
func reply(text string) func(map[string]any) responsesTurn {
	return func(map[string]any) responsesTurn { return responsesTurn{Text: text} }
}

// codexTools lists the request's tools as type or type:name.
func codexTools(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		tool, _ := x.(map[string]any)
		kind, _ := tool["type"].(string)
		if name, _ := tool["name"].(string); name != "" {
			kind += ":" + name
		}
		out = append(out, kind)
	}
	return out
}

// onlyResponses fails the test unless every request was Codex's POST /v1/responses.
func onlyResponses(t *testing.T, reqs []request) {
	t.Helper()
	only(t, reqs, "POST", "/v1/responses")
}

func TestCodexPrintsTheAnswerOfAResponsesStream(t *testing.T) {
	stub := responsesStub(t, reply("PONG"))
	r := Codex(t, CodexOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "gpt-mock", Prompt: "Say PONG back"})
	if r.ExitCode != 0 || r.Failure() != "" {
		t.Fatalf("exit %d, failure %q\nstdout:\n%s\nstderr:\n%s\nconfig.toml:\n%s", r.ExitCode, r.Failure(), r.Stdout, r.Stderr, r.ConfigTOML)
	}
	if got := r.Text(); got != "PONG" {
		t.Errorf("answer %q, want the stub's PONG", got)
	}
	if !slices.ContainsFunc(r.Events, func(e CodexEvent) bool { return e.Type == "turn.completed" }) {
		t.Errorf("no turn.completed event in %s", r.Stdout)
	}
	if strings.Contains(r.Stderr, "WARNING") {
		t.Errorf("codex warned:\n%s", r.Stderr)
	}

	reqs := stub.requests()
	onlyResponses(t, reqs)
	q := reqs[0]
	if got := q.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q, want Bearer and the key", got)
	}
	if q.Body["model"] != "gpt-mock" || q.Body["stream"] != true {
		t.Errorf("model %v, stream %v; want gpt-mock, true", q.Body["model"], q.Body["stream"])
	}
	// CodexNoDefaultToolsConfig leaves function tools only, as in the codex-exec recording.
	for _, tool := range codexTools(q.Body) {
		if !strings.HasPrefix(tool, "function:") {
			t.Errorf("tool %s offered; want function tools only", tool)
		}
	}
	// CodexOfflineConfig turned analytics off, and the turn metadata says so.
	if md := q.Header.Get("x-codex-turn-metadata"); !strings.Contains(md, `"analytics_enabled":false`) {
		t.Errorf("x-codex-turn-metadata %s; want analytics_enabled false", md)
	}
}

// DefaultTools shows what CodexNoDefaultToolsConfig removes: the hosted web_search tool and
// the multi_agent_v1 namespace of the codex-exec-default-tools recording.
func TestCodexOffersWebSearchAndNamespaceByDefault(t *testing.T) {
	stub := responsesStub(t, reply("PONG"))
	r := Codex(t, CodexOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "gpt-mock",
		Prompt: "Say PONG back", DefaultTools: true})
	if r.ExitCode != 0 || r.Text() != "PONG" {
		t.Fatalf("exit %d, answer %q\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Text(), r.Stdout, r.Stderr)
	}
	reqs := stub.requests()
	onlyResponses(t, reqs)
	tools := codexTools(reqs[0].Body)
	for _, want := range []string{"web_search", "namespace:multi_agent_v1"} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools %v lack %s", tools, want)
		}
	}
}

// Codex 0.171.0 takes a message from response.output_item.done only: the text deltas and
// the output in response.completed are not enough, and it then ends the turn "successfully"
// with no answer. A Responses door that skips output_item.done looks to Codex like a model
// that said nothing; this pins that down so a door test failing that way is recognisable.
func TestCodexIgnoresTextWithoutOutputItemDone(t *testing.T) {
	stub := responsesStub(t, func(map[string]any) responsesTurn {
		return responsesTurn{Text: "PONG", SkipItemDone: true}
	})
	r := Codex(t, CodexOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "gpt-mock", Prompt: "Say PONG back"})
	if r.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if got := r.Text(); got != "" {
		t.Errorf("answer %q without output_item.done; Codex has changed, update the stub's comment", got)
	}
	onlyResponses(t, stub.requests())
}

// A function tool turn end to end: the stub calls exec_command, Codex runs it in its
// (read-only) sandbox in the working directory and sends a function_call_output back, the
// stub answers with what it got, as in the codex-exec-tool-call recording.
func TestCodexRunsAFunctionCallAndReturnsItsOutput(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("the note says 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stub := responsesStub(t, func(body map[string]any) responsesTurn {
		if out, ok := functionOutput(body); ok {
			if strings.Contains(out, "the note says 42") {
				return responsesTurn{Text: "FOUND 42"}
			}
			return responsesTurn{Text: "MISSING: " + out}
		}
		return responsesTurn{Function: "exec_command", Arguments: `{"cmd":"cat note.txt"}`}
	})
	r := Codex(t, CodexOptions{BaseURL: stub.srv.URL, APIKey: testKey, Model: "gpt-mock-tools",
		Prompt: "Print note.txt", Dir: dir})
	if r.ExitCode != 0 || r.Text() != "FOUND 42" {
		t.Fatalf("exit %d, answer %q\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Text(), r.Stdout, r.Stderr)
	}
	reqs := stub.requests()
	onlyResponses(t, reqs)
	if len(reqs) != 2 {
		t.Errorf("%d requests, want the function_call turn and the function_call_output turn", len(reqs))
	}
	if !slices.ContainsFunc(r.Events, func(e CodexEvent) bool {
		return e.Type == "item.completed" && e.Item != nil && e.Item.Type == "command_execution"
	}) {
		t.Errorf("no command_execution item in %s", r.Stdout)
	}
}

// NoRetries for error tests: one request, and the gateway's error as the failure at once.
func TestCodexReportsAnErrorAtOnceWithNoRetries(t *testing.T) {
	stub := responsesStub(t, func(map[string]any) responsesTurn { return responsesTurn{ErrorStatus: 401} })
	r := Codex(t, CodexOptions{BaseURL: stub.srv.URL, APIKey: "sk-wrong", Model: "gpt-mock",
		Prompt: "Say PONG back", NoRetries: true})
	if r.ExitCode == 0 || !strings.Contains(r.Failure(), "401") {
		t.Fatalf("exit %d, failure %q; want a failed run naming the 401\nstdout:\n%s", r.ExitCode, r.Failure(), r.Stdout)
	}
	if n := len(stub.requests()); n != 1 {
		t.Errorf("%d requests, want 1 with request_max_retries and stream_max_retries 0", n)
	}
}

package clients

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/clients/internal/agents"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/record"
)

// The gateway models Codex is pointed at through a custom provider (wire_api = "responses"):
// names it does not know, as any gateway's are.
const codexConfig = `
keys:
  - {name: codex, value: sk-gw-codex-0123456789}
connections:
  mock: {kind: mock}
models:
  gpt-mock: {routes: [{connection: mock, model: echo}]}
  gpt-mock-tools: {routes: [{connection: mock, model: tools}]}
`

const codexKey = "sk-gw-codex-0123456789"

// responsesOnly fails the test unless the gateway logged at least n requests, every one a
// Responses request it answered with a 200: Codex retries what fails, which could still let
// it answer.
func responsesOnly(t *testing.T, reqs []map[string]any, n int) {
	t.Helper()
	if len(reqs) < n {
		t.Fatalf("the gateway logged %d requests, want at least %d", len(reqs), n)
	}
	for _, r := range reqs {
		if r["endpoint"] != "responses" || r["status"] != float64(200) {
			t.Errorf("the gateway did not serve a request Codex sent: %v", r)
		}
	}
}

// TestCodexAnswersThroughTheGateway: codex exec on a mock model, its answer the echo of the
// prompt, every request a streamed POST /v1/responses the gateway served.
func TestCodexAnswersThroughTheGateway(t *testing.T) {
	url, logs := serve(t, codexConfig)
	run := agents.Codex(t, agents.CodexOptions{BaseURL: url, APIKey: codexKey, Model: "gpt-mock", Prompt: "Say PONG back"})
	if run.ExitCode != 0 || run.Failure() != "" || run.Text() != "Say PONG back" {
		t.Fatalf("exit %d, failure %q, answer %q\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", run.ExitCode, run.Failure(), run.Text(),
			run.Stdout, run.Stderr, logs.String())
	}
	reqs := requests(t, logs)
	responsesOnly(t, reqs, 1)
	for _, r := range reqs {
		if r["model"] != "gpt-mock" || r["stream"] != true {
			t.Errorf("request %v", r)
		}
	}
}

// TestCodexToolCallThroughTheGateway: the mock calls the first tool Codex offers
// (exec_command); Codex runs it (or tells the model why not) and sends the
// function_call_output back, which the mock's answer quotes.
func TestCodexToolCallThroughTheGateway(t *testing.T) {
	url, logs := serve(t, codexConfig)
	run := agents.Codex(t, agents.CodexOptions{BaseURL: url, APIKey: codexKey, Model: "gpt-mock-tools", Prompt: "echo CODEX-TOOL-CHECK"})
	if run.ExitCode != 0 || run.Failure() != "" || !strings.HasPrefix(run.Text(), "The tool returned:") {
		t.Fatalf("exit %d, failure %q, answer %q\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", run.ExitCode, run.Failure(), run.Text(),
			run.Stdout, run.Stderr, logs.String())
	}
	reqs := requests(t, logs)
	responsesOnly(t, reqs, 2)
}

// With its default tools on, Codex offers the hosted web_search tool, which no route but
// OpenAI itself can run, and the multi_agent_v1 namespace, which every route is offered
// flattened: the mock refuses the request naming the hosted tool, and Codex reports it.
func TestCodexDefaultToolsAreRefusedWithTheReason(t *testing.T) {
	url, logs := serve(t, codexConfig)
	run := agents.Codex(t, agents.CodexOptions{BaseURL: url, APIKey: codexKey, Model: "gpt-mock", Prompt: "Say PONG back",
		DefaultTools: true, NoRetries: true})
	if run.ExitCode == 0 || !strings.Contains(run.Failure(), "web search tool") || strings.Contains(run.Failure(), "multi_agent_v1") {
		t.Fatalf("exit %d, failure %q; want the refusal of the web_search tool alone\nstdout:\n%s", run.ExitCode, run.Failure(), run.Stdout)
	}
	for _, r := range requests(t, logs) {
		if r["status"] != float64(400) {
			t.Errorf("request %v, want the 400", r)
		}
	}
}

// TestCodexOverWebSocket: with supports_websockets on its provider, Codex 0.171 speaks the
// Responses API's WebSocket mode to the gateway: a prewarm (generate: false), then the turn,
// whose tool call it runs and answers on the same connection by previous_response_id, store:
// false (the mock's answer quotes the tool output). Every request the gateway logged came
// over the WebSocket and was served.
func TestCodexOverWebSocket(t *testing.T) {
	url, logs := serveWith(t, codexConfig, func(o *gateway.Options) { o.WebSockets = true })
	run := agents.Codex(t, agents.CodexOptions{BaseURL: url, APIKey: codexKey, Model: "gpt-mock-tools", Prompt: "echo CODEX-TOOL-CHECK",
		WebSockets: true})
	if run.ExitCode != 0 || run.Failure() != "" || !strings.HasPrefix(run.Text(), "The tool returned:") {
		t.Fatalf("exit %d, failure %q, answer %q\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", run.ExitCode, run.Failure(), run.Text(),
			run.Stdout, run.Stderr, logs.String())
	}
	reqs := requests(t, logs)
	responsesOnly(t, reqs, 3)
	for _, r := range reqs {
		if r["transport"] != record.TransportWebSocket {
			t.Errorf("a request that did not come over the WebSocket: %v", r)
		}
	}
	if n := len(logs.Lines(t, record.MsgAttempt)); n != len(reqs)-1 {
		t.Errorf("%d attempts for %d requests; want one for each but the prewarm", n, len(reqs))
	}
}

// TestCodexFallsBackToHTTPWithoutWebSocketMode: where the gateway does not serve WebSocket
// mode (Lambda), Codex with supports_websockets gets the handshake's 426 and goes on over
// HTTP streaming.
func TestCodexFallsBackToHTTPWithoutWebSocketMode(t *testing.T) {
	url, logs := serve(t, codexConfig)
	run := agents.Codex(t, agents.CodexOptions{BaseURL: url, APIKey: codexKey, Model: "gpt-mock", Prompt: "Say PONG back", WebSockets: true})
	if run.ExitCode != 0 || run.Failure() != "" || run.Text() != "Say PONG back" {
		t.Fatalf("exit %d, failure %q, answer %q\nstdout:\n%s\nstderr:\n%s\ngateway log:\n%s", run.ExitCode, run.Failure(), run.Text(),
			run.Stdout, run.Stderr, logs.String())
	}
	var refused, streamed int
	for _, r := range requests(t, logs) {
		switch {
		case r["status"] == float64(426):
			refused++
		case r["status"] == float64(200) && r["stream"] == true && r["transport"] == nil:
			streamed++
		default:
			t.Errorf("request %v", r)
		}
	}
	if refused == 0 || streamed == 0 {
		t.Errorf("%d refused handshakes, %d HTTP streams", refused, streamed)
	}
}

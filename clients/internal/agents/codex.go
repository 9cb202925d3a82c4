package agents

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CodexOptions configure one `codex exec` run.
type CodexOptions struct {
	// BaseURL is the server's root URL on loopback, e.g. http://127.0.0.1:8080; the provider's
	// base_url is BaseURL + "/v1" and Codex posts to base_url + "/responses". Required.
	BaseURL string
	// APIKey is sent as Authorization: Bearer, through the provider's env_key.
	APIKey string
	// Model is the model name Codex sends (-m). Required: Codex's default is an OpenAI name.
	Model  string
	Prompt string
	// DefaultTools keeps the tools Codex offers by default on top of its function tools: the
	// hosted web_search tool and the multi_agent_v1 namespace. Off, the config turns both
	// off (CodexNoDefaultToolsConfig), as in the codex-exec recording.
	DefaultTools bool
	// Config is TOML added to the generated config.toml after the harness's top-level keys and
	// before its [model_providers.fngate] table; it may set top-level keys and open tables,
	// but not redefine the harness's (see CodexOfflineConfig).
	Config string
	// Sandbox is passed as --sandbox when set (read-only, workspace-write,
	// danger-full-access); empty leaves Codex's exec default, read-only.
	Sandbox string
	// WebSockets sets the provider's supports_websockets: Codex then speaks the Responses
	// API's WebSocket mode to BaseURL (GET /v1/responses upgraded, a prewarm with generate:
	// false, then each turn as a response.create continuing the last), and falls back to HTTP
	// for the session when the handshake is refused.
	WebSockets bool
	// NoRetries sets the provider's request_max_retries and stream_max_retries to 0, for tests
	// that expect an error: Codex then reports the first failure at once. By default it
	// reconnects five times on a 401 and on a 5xx retries each of those requests too (30
	// requests in 26 s here); a 400 it reports at once.
	NoRetries bool
	// Args are appended after the harness's flags, before the prompt.
	Args []string
	// Env entries (KEY=VALUE) are applied last and override the harness's settings.
	Env []string
	// Dir is the working directory (-C); empty means a fresh t.TempDir().
	Dir string
	// Timeout bounds the run; zero means DefaultTimeout.
	Timeout time.Duration
}

// CodexRun is a finished `codex exec --json` run.
type CodexRun struct {
	Result
	// Events are the JSONL events Codex printed, in order.
	Events []CodexEvent
	// ConfigTOML is the config.toml the run used, for failure messages.
	ConfigTOML string
}

// CodexEvent is one line of `codex exec --json`. Type is thread.started, turn.started,
// item.started, item.updated, item.completed, turn.completed, turn.failed or error; the
// fields present depend on it. Raw keeps the whole line.
type CodexEvent struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id,omitempty"`
	Item     *CodexItem      `json:"item,omitempty"`
	Usage    json.RawMessage `json:"usage,omitempty"`
	Error    *CodexError     `json:"error,omitempty"`
	Message  string          `json:"message,omitempty"` // on type error
	Raw      json.RawMessage `json:"-"`
}

// CodexItem is a thread item: agent_message and reasoning carry Text, error items (warnings
// such as "Model metadata for `gpt-mock` not found") Message; command_execution, file_change,
// mcp_tool_call and the rest carry fields kept only in the event's Raw.
type CodexItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Text    string `json:"text,omitempty"`
	Message string `json:"message,omitempty"`
}

// CodexError is the error of a turn.failed event.
type CodexError struct {
	Message string `json:"message"`
}

// Text is the last agent message of the run: the answer `codex exec` would print.
func (r CodexRun) Text() string {
	for i := len(r.Events) - 1; i >= 0; i-- {
		if e := r.Events[i]; e.Type == "item.completed" && e.Item != nil && e.Item.Type == "agent_message" {
			return e.Item.Text
		}
	}
	return ""
}

// Failure is the message of the turn.failed event, else of the last error event, or "".
// (Codex also prints an error event for each retry, "Reconnecting... 1/5 (...)".)
func (r CodexRun) Failure() string {
	last := ""
	for _, e := range r.Events {
		switch {
		case e.Type == "turn.failed" && e.Error != nil:
			return e.Error.Message
		case e.Type == "error":
			last = e.Message
		}
	}
	return last
}

// codexProvider is the model provider id the generated config defines.
const codexProvider = "fngate"

// codexKeyEnv is the variable the provider's env_key names.
const codexKeyEnv = "FNGATE_API_KEY"

// CodexOfflineConfig is the config.toml part that keeps Codex 0.171.0 on the base URL alone.
// Without it (the codex-exec-not-hardened recording) Codex contacted github.com,
// api.github.com and chatgpt.com. Behind the proxy guard each switch shows what it stops:
//   - features.plugins = false: the plugin marketplace sync (github.com, api.github.com) and
//     the remote plugin list (chatgpt.com);
//   - analytics.enabled = false: analytics events (ab.chatgpt.com; the turn metadata then
//     says "analytics_enabled":false, as in the hardened recordings);
//   - check_for_update_on_startup = false: the release check on api.github.com. codex exec
//     showed no traffic for it either way; set in case a release moves the check into exec.
//
// Dotted keys, so the block can sit among the top-level keys.
const CodexOfflineConfig = `check_for_update_on_startup = false
analytics.enabled = false
features.plugins = false
`

// CodexNoDefaultToolsConfig turns off the two non-function tools Codex offers by default
// (the codex-exec-default-tools recording): web_search = "disabled" drops the hosted
// web_search tool, which no gateway route but OpenAI itself can run, agents.enabled = false
// the multi_agent_v1 namespace (every route is offered its functions flattened; off, the
// tools are the recording's). (features.multi_agent = false drops the namespace too, but 0.171.0
// reports it as deprecated in an error item of every run; tools.web_search = false is
// accepted and does nothing.)
const CodexNoDefaultToolsConfig = `web_search = "disabled"
agents.enabled = false
`

// Codex runs `codex exec --json PROMPT` against opts.BaseURL through a custom model provider
// (wire_api = "responses") written to config.toml in CODEX_HOME=t.TempDir(), offline
// (CodexOfflineConfig, the proxy guard, HOME in a temporary directory), and returns its
// events. It skips the test when Codex is not installed. As with Claude, the caller asserts;
// the harness fails the test only on a timeout or a request that tried to leave loopback.
func Codex(t testing.TB, opts CodexOptions) CodexRun {
	t.Helper()
	bin := requireBinary(t, CodexPath)
	requireLoopback(t, "Codex", opts.BaseURL)
	if opts.Model == "" {
		t.Fatal("agents.Codex: Model is required")
	}
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := opts.Dir
	if dir == "" {
		dir = t.TempDir()
	}

	config := codexConfig(opts)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	args := []string{"exec", "--json", "--skip-git-repo-check", "--strict-config", "-C", dir, "-m", opts.Model}
	if opts.Sandbox != "" {
		args = append(args, "--sandbox", opts.Sandbox)
	}
	args = append(args, opts.Args...)
	args = append(args, "--", opts.Prompt)

	env := []string{
		"CODEX_HOME=" + codexHome,
		codexKeyEnv + "=" + opts.APIKey,
	}
	env = append(env, opts.Env...)

	res := run(t, command{name: "codex", bin: bin, args: args, env: env, dir: dir, home: home, timeout: opts.Timeout})
	out := CodexRun{Result: res, ConfigTOML: config}
	sc := bufio.NewScanner(strings.NewReader(res.Stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e CodexEvent
		if json.Unmarshal(line, &e) != nil || e.Type == "" {
			continue // Codex prints a few plain lines (warnings) beside the JSONL
		}
		e.Raw = append(json.RawMessage(nil), line...)
		out.Events = append(out.Events, e)
	}
	return out
}

// codexConfig is the whole config.toml of a run. Order matters in TOML, where every key after
// a [table] header belongs to that table: the harness's top-level keys, then opts.Config
// (which may open tables of its own), then the provider's table.
func codexConfig(opts CodexOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model = %s\nmodel_provider = %q\n", strconv.Quote(opts.Model), codexProvider)
	b.WriteString(CodexOfflineConfig)
	if !opts.DefaultTools {
		b.WriteString(CodexNoDefaultToolsConfig)
	}
	if opts.Config != "" {
		b.WriteString(strings.TrimSpace(opts.Config) + "\n")
	}
	fmt.Fprintf(&b, `
[model_providers.%s]
name = "fngate"
base_url = %s
env_key = %q
wire_api = "responses"
`, codexProvider, strconv.Quote(strings.TrimRight(opts.BaseURL, "/")+"/v1"), codexKeyEnv)
	if opts.WebSockets {
		b.WriteString("supports_websockets = true\n")
	}
	if opts.NoRetries {
		b.WriteString("request_max_retries = 0\nstream_max_retries = 0\n")
	}
	return b.String()
}

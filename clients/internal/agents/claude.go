package agents

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ClaudeOptions configure one `claude -p` run.
type ClaudeOptions struct {
	// BaseURL is the server's root URL on loopback, e.g. http://127.0.0.1:8080
	// (ANTHROPIC_BASE_URL); Claude Code appends /v1/messages?beta=true itself. Required.
	BaseURL string
	// APIKey is sent as x-api-key (ANTHROPIC_API_KEY); AuthToken as Authorization: Bearer
	// (ANTHROPIC_AUTH_TOKEN). Set one; with neither Claude Code has no credential and stops.
	APIKey    string
	AuthToken string
	// Model is passed as --model. Empty leaves Claude Code's own default, which it sends as a
	// claude-* name.
	Model  string
	Prompt string
	// Tools, if not nil, is the tool set offered to the model (--tools; an empty non-nil slice
	// offers none). Nil leaves Claude Code's default set, which includes a deferred-tool
	// placeholder with defer_loading: true.
	Tools []string
	// AllowedTools run without a permission prompt (--allowedTools). A tool that is offered
	// but not allowed is refused in -p mode, which the model sees as a tool error.
	AllowedTools []string
	// DisableToolSearch sets ENABLE_TOOL_SEARCH=false: the tools are sent whole, up front,
	// instead of behind the ToolSearch tool.
	DisableToolSearch bool
	// ModelDiscovery sets CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1: Claude Code first asks
	// GET /v1/models?limit=1000 and keeps the ids that match claude or anthropic.
	ModelDiscovery bool
	// OutputFormat is "stream-json" (the default: one event a line, parsed into
	// ClaudeRun.Events and ClaudeRun.Final; adds --verbose, which Claude Code requires for it),
	// "json" (only the result object, in ClaudeRun.Final) or "text" (the answer as printed).
	// The format changes the request: with stream-json, as in the recordings, Claude Code
	// 2.1.332 asks for thinking {display: "updates"} with the thinking-display-updates-2026-08-18
	// beta; with json or text it sends display "omitted" and one beta fewer.
	OutputFormat string
	// Args are appended after the harness's flags, before the prompt.
	Args []string
	// NoRetries sets CLAUDE_CODE_MAX_RETRIES=0, for tests that expect an error: Claude Code
	// then reports the first failure at once. By default it retries a 5xx, a 429 and a 401
	// with backoff (a 401 for minutes: eight attempts in 90 s here), and a 400 five more times
	// with fewer anthropic-beta flags each time.
	NoRetries bool
	// Env entries (KEY=VALUE) are applied last and override the harness's settings.
	Env []string
	// Dir is the working directory; empty means a fresh t.TempDir(). Claude Code reads
	// CLAUDE.md and .claude/ from it, so a repository checkout would change the prompt.
	Dir string
	// Timeout bounds the run; zero means DefaultTimeout.
	Timeout time.Duration

	allowEscapes bool // the harness's own test of the proxy guard expects escapes
}

// ClaudeRun is a finished `claude -p` run.
type ClaudeRun struct {
	Result
	Format string // the output format the run used
	// Final is the result object of the stream-json and json formats; nil for text or when
	// stdout held none (Claude Code failed before it could answer).
	Final *ClaudeFinal
	// Events are the stream-json lines in order (system init, assistant and user messages,
	// the result), kept raw: their shapes are Claude Code's, not the gateway's.
	Events []json.RawMessage
}

// ClaudeFinal is the `{"type":"result",...}` object Claude Code prints last.
type ClaudeFinal struct {
	Type         string          `json:"type"`    // "result"
	Subtype      string          `json:"subtype"` // "success", or an error_* kind
	IsError      bool            `json:"is_error"`
	Result       string          `json:"result"` // the final answer's text
	NumTurns     int             `json:"num_turns"`
	SessionID    string          `json:"session_id"`
	StopReason   string          `json:"stop_reason"`
	TotalCostUSD float64         `json:"total_cost_usd"`
	Usage        json.RawMessage `json:"usage"`
}

// Text is the final answer (an error's message when Final.IsError): Final.Result for the JSON
// formats, "" when they printed no result, trimmed stdout for text.
func (r ClaudeRun) Text() string {
	switch {
	case r.Final != nil:
		return r.Final.Result
	case r.Format == "text":
		return strings.TrimSpace(r.Stdout)
	}
	return ""
}

// ClaudeOfflineEnv is the environment that keeps Claude Code 2.1.332 on the base URL alone.
//
// The first switch is the one that does it. Run in a network namespace with only loopback,
// under strace, Claude Code made no DNS lookup and no connection but to the base URL with it
// alone; with every other switch below set and it unset, it still sent HEAD /api/hello to the
// base URL and looked up api.anthropic.com (three CONNECTs to api.anthropic.com:443 behind the
// proxy guard), as the claude-code-not-hardened recording shows. In 2.1.332 it stands for the
// /api/hello preconnect, telemetry, error reporting, feature flags (GrowthBook), the
// auto-updater and the feedback commands at once.
//
// The other three are the traffic switches among the four Anthropic's settings page calls it
// equivalent to (the fourth, DISABLE_BUG_COMMAND, only hides /bug). They are set as well so
// that a later release narrowing the umbrella does not quietly go online: 2.1.332 already
// carries one exception (a download mirror pinned in managed settings keeps auto-updates on).
var ClaudeOfflineEnv = []string{
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	"DISABLE_AUTOUPDATER=1",
	"DISABLE_TELEMETRY=1",
	"DISABLE_ERROR_REPORTING=1",
}

// Claude runs `claude -p PROMPT` headless against opts.BaseURL, offline (ClaudeOfflineEnv, the
// proxy guard, HOME and CLAUDE_CONFIG_DIR in a temporary directory), and returns what it
// printed. It skips the test when Claude Code is not installed. The caller asserts on the
// result; the harness itself fails the test only on a timeout or a request that tried to leave
// loopback.
func Claude(t testing.TB, opts ClaudeOptions) ClaudeRun {
	t.Helper()
	bin := requireBinary(t, ClaudePath)
	requireLoopback(t, "Claude", opts.BaseURL)
	home := t.TempDir()
	dir := opts.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	format := opts.OutputFormat
	if format == "" {
		format = "stream-json"
	}

	args := []string{"-p", "--output-format", format}
	if format == "stream-json" {
		args = append(args, "--verbose")
	}
	if opts.Model != "" {
		args = append(args, "--model", opts.Model)
	}
	if opts.Tools != nil {
		args = append(args, "--tools", strings.Join(opts.Tools, ","))
	}
	if len(opts.AllowedTools) > 0 {
		args = append(args, "--allowedTools", strings.Join(opts.AllowedTools, ","))
	}
	args = append(args, opts.Args...)
	// "--" ends the flags: a prompt starting with "-" (or "/context") stays the prompt.
	args = append(args, "--", opts.Prompt)

	env := append([]string{}, ClaudeOfflineEnv...)
	env = append(env,
		"ANTHROPIC_BASE_URL="+opts.BaseURL,
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
	)
	if opts.APIKey != "" {
		env = append(env, "ANTHROPIC_API_KEY="+opts.APIKey)
	}
	if opts.AuthToken != "" {
		env = append(env, "ANTHROPIC_AUTH_TOKEN="+opts.AuthToken)
	}
	if opts.DisableToolSearch {
		env = append(env, "ENABLE_TOOL_SEARCH=false")
	}
	if opts.ModelDiscovery {
		env = append(env, "CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1")
	}
	if opts.NoRetries {
		env = append(env, "CLAUDE_CODE_MAX_RETRIES=0")
	}
	env = append(env, opts.Env...)

	res := run(t, command{name: "claude", bin: bin, args: args, env: env, dir: dir, home: home, timeout: opts.Timeout, allowEscapes: opts.allowEscapes})
	out := ClaudeRun{Result: res, Format: format}
	switch format {
	case "json":
		var f ClaudeFinal
		if err := json.Unmarshal([]byte(strings.TrimSpace(res.Stdout)), &f); err == nil && f.Type == "result" {
			out.Final = &f
		}
	case "stream-json":
		sc := bufio.NewScanner(strings.NewReader(res.Stdout))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !json.Valid(line) {
				continue
			}
			out.Events = append(out.Events, append(json.RawMessage(nil), line...))
			var f ClaudeFinal
			if json.Unmarshal(line, &f) == nil && f.Type == "result" {
				out.Final = &f
			}
		}
	}
	return out
}

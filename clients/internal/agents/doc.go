// Package agents runs the real agent clients, Claude Code and Codex CLI, headless and offline
// in Go tests, so the gateway's /v1/messages and /v1/responses doors can be tested with the
// clients users point at them.
//
//	r := agents.Claude(t, agents.ClaudeOptions{BaseURL: srv.URL, APIKey: key, Model: "mock", Prompt: "Say PING"})
//	if r.ExitCode != 0 || r.Text() != "PING" { ... }
//
//	c := agents.Codex(t, agents.CodexOptions{BaseURL: srv.URL, APIKey: key, Model: "mock", Prompt: "Say PONG"})
//	if c.ExitCode != 0 || c.Text() != "PONG" { ... }
//
// The clients are the npm packages pinned in clients/package-lock.json; a test skips, naming
// the install command, when they are not installed (and fails instead with
// FNGATE_REQUIRE_CLIENTS=1, which .ci/run sets after installing them). Each run gets a fresh
// HOME, config dir and working directory under t.TempDir(), an environment that inherits
// nothing but PATH, the switches that keep the client off the network (ClaudeOfflineEnv,
// CodexOfflineConfig), and HTTP(S)_PROXY pointed at a loopback trap that fails the test for
// any request that tries to leave loopback. Requests to the base URL go straight to it
// (NO_PROXY=127.0.0.1,localhost).
//
// It lives under clients/ beside the package.json it needs, and is internal, so only tests
// under clients/ can import it: end-to-end tests that start the gateway and drive it with a
// real client belong there, not in the core packages.
//
// Files:
//   - claude.go: Claude, its options, ClaudeOfflineEnv, the parsed stream-json result.
//   - codex.go: Codex, its options, the config.toml it writes, the parsed --json events.
//   - run.go: the shared runner (environment, timeout, process group) and the proxy trap.
//   - locate.go: finding the installed binaries; skip or fail when they are absent.
//   - procgroup_*.go: killing a client with the helpers it started.
//   - stub_test.go: minimal Messages and Responses stubs the self-tests run the clients against.
package agents

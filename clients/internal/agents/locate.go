package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// InstallCommand is what a developer runs to get the clients the tests skip without.
const InstallCommand = "(cd clients && npm ci) from the repository root (.ci/run does it)"

// clientsDir is the repository's clients/ directory (package.json beside node_modules), found
// by walking up from the test's working directory, which `go test` sets to the package's own
// directory somewhere inside the module.
var clientsDir = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) {
			c := filepath.Join(dir, "clients")
			if !fileExists(filepath.Join(c, "package.json")) {
				return "", fmt.Errorf("no clients/package.json beside %s", filepath.Join(dir, "go.mod"))
			}
			return c, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
})

// ClaudePath returns the native Claude Code binary installed under clients/node_modules.
//
// It takes the binary from the platform package (@anthropic-ai/claude-code-linux-x64 and so
// on) rather than the wrapper's bin/claude.exe: the wrapper's copy is put there by its
// postinstall script, and npm 11 warns that it will stop running dependencies' install
// scripts by default, which would leave a placeholder there. The platform package is a plain
// optional dependency, so it is there whenever the install succeeded.
func ClaudePath() (string, error) {
	var cands []string
	for _, p := range claudePlatforms() {
		cands = append(cands, filepath.Join("node_modules", "@anthropic-ai", "claude-code-"+p, "claude"))
	}
	return findBinary("Claude Code (@anthropic-ai/claude-code)", cands)
}

// CodexPath returns the native Codex binary installed under clients/node_modules (what the
// package's bin/codex.js would exec; running it directly keeps Node out of the picture).
func CodexPath() (string, error) {
	triple, pkg := codexTarget()
	if triple == "" {
		return "", fmt.Errorf("Codex ships no binary for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return findBinary("Codex (@openai/codex)", []string{
		filepath.Join("node_modules", "@openai", pkg, "vendor", triple, "bin", "codex"),
	})
}

// claudePlatforms names Claude Code's platform packages for this machine, glibc before musl
// (npm installs the one whose libc matches; the other is absent).
func claudePlatforms() []string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		return nil
	}
	switch runtime.GOOS {
	case "linux":
		return []string{"linux-" + arch, "linux-" + arch + "-musl"}
	case "darwin":
		return []string{"darwin-" + arch}
	}
	return nil
}

// codexTarget mirrors the table in @openai/codex's bin/codex.js (Linux builds are musl).
func codexTarget() (triple, pkg string) {
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64":
		return "x86_64-unknown-linux-musl", "codex-linux-x64"
	case "linux/arm64":
		return "aarch64-unknown-linux-musl", "codex-linux-arm64"
	case "darwin/amd64":
		return "x86_64-apple-darwin", "codex-darwin-x64"
	case "darwin/arm64":
		return "aarch64-apple-darwin", "codex-darwin-arm64"
	}
	return "", ""
}

func findBinary(what string, rel []string) (string, error) {
	dir, err := clientsDir()
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	for _, r := range rel {
		p := filepath.Join(dir, r)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	if len(rel) == 0 {
		return "", fmt.Errorf("%s: no binary is published for %s/%s", what, runtime.GOOS, runtime.GOARCH)
	}
	return "", fmt.Errorf("%s is not installed (looked for %s): %w", what, filepath.Join(dir, rel[0]), fs.ErrNotExist)
}

// RequireEnv, set to 1, turns a missing client from a skip into a failure. .ci/run sets it
// after a successful install, so a client that is installed but not found (a moved path, a
// renamed platform package) cannot pass CI as a skip.
const RequireEnv = "FNGATE_REQUIRE_CLIENTS"

// requireBinary skips the test, naming the install command, when the client is absent.
func requireBinary(t testing.TB, locate func() (string, error)) string {
	t.Helper()
	p, err := locate()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%v (%s=1: the clients should be installed)", err, RequireEnv)
		}
		t.Skipf("%v; install with: %s", err, InstallCommand)
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

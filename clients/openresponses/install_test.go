package openresponses

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/clients/internal/agents"
)

// moduleRoot is the directory holding go.mod, above the test's working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// suiteSource finds the suite's copy beside the repository, skipping the test without it.
func suiteSource(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(root), "shared", "conformance", "openresponses")
	if _, err := os.Stat(filepath.Join(dir, "bin", "compliance-test.ts")); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no Open Responses suite at %s: its copy is kept beside the repository, not in it (../shared/conformance/openresponses/SOURCE.md); this test runs it when present", dir)
	}
	return dir
}

// copySuite copies what the suite runs (bin/compliance-test.ts and src/) into a writable
// directory of its own, with goldens.ts beside the suite's script and node_modules linked
// to the installed packages.
func copySuite(t *testing.T, src, modules string) string {
	t.Helper()
	dst := t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(src, "bin", "compliance-test.ts"), filepath.Join(dst, "bin", "compliance-test.ts"))
	copyFile("goldens.ts", filepath.Join(dst, "bin", "goldens.ts"))
	err := filepath.WalkDir(filepath.Join(src, "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		copyFile(p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	copyFile("package.json", filepath.Join(dst, "package.json"))
	if err := os.Symlink(modules, filepath.Join(dst, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// installed returns the node_modules of package.json and package-lock.json as npm ci
// installs them, from the cache when an earlier run installed the same files, else installed
// now. It skips the test where npm or its registry cannot be reached and fails it when the
// registry is reachable and the install fails anyway.
func installed(t *testing.T) string {
	t.Helper()
	manifest, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile("package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bytes.Join([][]byte{manifest, lock, []byte(runtime.GOOS + "/" + runtime.GOARCH)}, []byte{0}))
	key := hex.EncodeToString(sum[:8])
	base := t.TempDir() // no cache directory: this run only
	if dir, err := os.UserCacheDir(); err == nil {
		if err := os.MkdirAll(filepath.Join(dir, "fngate", "openresponses"), 0o755); err == nil {
			base = filepath.Join(dir, "fngate", "openresponses")
		}
	}
	final := filepath.Join(base, key)
	if fileExists(filepath.Join(final, ".installed")) {
		return filepath.Join(final, "node_modules")
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv(agents.RequireEnv) == "1" {
			t.Fatalf("npm not found (%s=1: the suite's packages should be installable)", agents.RequireEnv)
		}
		t.Skipf("npm not found: the Open Responses suite needs Bun and zod from npm")
	}
	tmp, err := os.MkdirTemp(base, key+".tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp) // gone once renamed; left by a failed install otherwise
	for name, b := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// npm's own cache ($HOME/.npm) makes a repeated install a local copy; --ignore-scripts:
	// bun's postinstall only links the platform package's binary, which installedBun finds.
	out, err := runNPM(npm, tmp, 5*time.Minute, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline",
		"--fetch-timeout=30000", "--fetch-retries=1")
	if err != nil {
		if _, perr := runNPM(npm, tmp, time.Minute, "ping", "--fetch-timeout=15000", "--fetch-retries=1"); perr != nil {
			t.Skipf("the npm registry is unreachable and the suite's packages are not in npm's cache, so the Open Responses suite cannot run: %v\n%s", err, out)
		}
		t.Fatalf("npm ci of clients/openresponses failed with the registry reachable: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), []byte(key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, final); err != nil && !fileExists(filepath.Join(final, ".installed")) {
		t.Fatal(err) // not another test's install that finished first
	}
	return filepath.Join(final, "node_modules")
}

func runNPM(npm, dir string, timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_UPDATE_NOTIFIER=1", "npm_config_update_notifier=false")
	return cmd.CombinedOutput()
}

// installedBun returns Bun's binary from its platform package (npm installs the one whose os,
// cpu and libc match; bun's own install script, which would link it, does not run).
func installedBun(t *testing.T, modules string) string {
	t.Helper()
	osName := map[string]string{"linux": "linux", "darwin": "darwin"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "aarch64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		t.Skipf("Bun publishes no npm platform package this test knows for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	var looked []string
	for _, pkg := range []string{"bun-" + osName + "-" + arch, "bun-" + osName + "-" + arch + "-musl"} {
		p := filepath.Join(modules, "@oven", pkg, "bin", "bun")
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o111 != 0 {
			return p
		}
		looked = append(looked, p)
	}
	t.Fatalf("Bun's binary is not installed: looked for %s", strings.Join(looked, ", "))
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Package proc runs the processes the measurement scripts (bench, soak) drive: the local
// server built from this checkout, and helpers on loopback ports.
package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fngate/fngate/internal/loopback"
)

// BuildLocal builds the local server (functions/local) of the fngate checkout the command
// runs in, into dir, and returns the binary's path.
func BuildLocal(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return build(root, filepath.Join(dir, "fngate-local"))
}

// BuildLocalAt builds the local server as it was at the git revision ref of the checkout
// (a before/after comparison in one run): the tree is exported with git archive into dir,
// so the repository and its worktrees are left as they are.
func BuildLocalAt(dir, ref string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "src-"+strings.NewReplacer("/", "_", ":", "_").Replace(ref))
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("git", "archive", "--format=tar", ref)
	archive.Dir, archive.Stderr = root, os.Stderr
	untar := exec.Command("tar", "-x", "-C", src)
	untar.Stderr = os.Stderr
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return "", err
	}
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %w", ref, err)
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("unpacking %s: %w", ref, err)
	}
	return build(src, filepath.Join(dir, "fngate-local-"+filepath.Base(src)))
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the fngate module")
	}
	return filepath.Dir(mod), nil
}

func build(root, bin string) (string, error) {
	b := exec.Command("go", "build", "-o", bin, "./functions/local")
	b.Dir, b.Stderr = root, os.Stderr
	if err := b.Run(); err != nil {
		return "", fmt.Errorf("building the local server in %s: %w", root, err)
	}
	return bin, nil
}

// FreeAddr returns a loopback address for a child process to listen on. Its port stays
// reserved until this process exits (the reservation is never released), so no other caller
// on the machine is handed it before or after the child binds; see internal/loopback.
func FreeAddr() string {
	p, err := loopback.Reserve()
	if err != nil {
		panic(err)
	}
	return p.Addr()
}

// WaitListening waits until addr accepts connections, or ctx ends.
func WaitListening(ctx context.Context, addr string) error {
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not start listening", addr)
}

// Process is a child process.
type Process struct {
	Cmd *exec.Cmd
}

// Start runs args[0] with the rest as its arguments, its standard error on ours and its
// standard output in the file logTo ("" discards it).
func Start(name, logTo string, args ...string) (*Process, error) {
	return StartEnv(name, logTo, nil, args...)
}

// StartEnv is Start with env (KEY=VALUE) added to this process's environment.
func StartEnv(name, logTo string, env []string, args ...string) (*Process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = os.Stderr
	if logTo != "" {
		f, err := os.Create(logTo)
		if err != nil {
			return nil, err
		}
		cmd.Stdout = f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return &Process{Cmd: cmd}, nil
}

// Stop kills the process and waits for it. A nil Process has nothing to stop.
func (p *Process) Stop() {
	if p != nil && p.Cmd.Process != nil {
		_ = p.Cmd.Process.Kill()
		_ = p.Cmd.Wait()
	}
}

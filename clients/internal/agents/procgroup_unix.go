//go:build unix

package agents

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the client in its own process group and makes the timeout kill the
// whole group: Claude Code and Codex both spawn helpers (shells, Codex's code-mode host) that
// would otherwise keep running, and keep stdout open, after the client itself is killed.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

//go:build !unix

package agents

import "os/exec"

// setProcessGroup leaves the default (kill the client only) where there are no process groups;
// cmd.WaitDelay still bounds how long a helper can hold the pipes open.
func setProcessGroup(cmd *exec.Cmd) {}

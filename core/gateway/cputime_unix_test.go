//go:build unix

package gateway_test

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time the test process has used: client, gateway and
// upstream alike, which is why the benchmarks compare it between variants of the gateway.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Command fngate-remediate is the old name of `fngate remediation` (events/cmd/fngate): the
// route-state commands of self-repair and the counters' current windows, unchanged. It prints
// a one-line notice on stderr and is removed in the next release.
//
//	go run ./events/cmd/fngate-remediate [-store SPEC] [-json] COMMAND [ARGS]
package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/fngate/fngate/events/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return cli.Remediate(ctx, cli.Env{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv})
}

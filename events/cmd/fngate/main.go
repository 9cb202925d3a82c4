// Command fngate is the operator's tool: keys, usage, routes and the audit log through the
// admin API (-url, token in FNGATE_ADMIN_TOKEN) or, with no API to reach, through the same
// admin code against the stores the gateway's config names (-config); and the route-state
// commands of self-repair (fngate remediation). docs/cli.md shows every command.
//
//	go run ./events/cmd/fngate [-url URL | -config PATH] [-json] COMMAND [ARGS]
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/fngate/fngate/events/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(cli.Main(ctx, cli.Env{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}))
}

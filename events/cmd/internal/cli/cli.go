// Package cli is the operator's command, fngate: keys, usage, routes and the audit log through
// the admin API (or, with no API to reach, through the same admin code run in this process
// against the stores the gateway's config names), and the route-state commands of self-repair.
// The old name, fngate-remediate, runs the route-state commands for one more release.
//
//	cli.go          Main and Remediate: flags, dispatch, exit codes, output
//	api.go          connect and print: the one path every API command takes
//	client.go       the admin API client: over HTTP (-url) or in process (direct mode)
//	direct.go       direct mode: the config's stores behind the admin handler, as cli:<user>
//	keys.go         fngate keys list|get|create|update|disable|enable|rotate|delete
//	usage.go        fngate usage: requests, tokens and spend per key, day or month
//	routes.go       fngate routes list|cool|restore
//	audit.go        fngate audit
//	whoami.go       fngate whoami: who the API takes the caller for
//	version.go      fngate version
//	cost.go         fngate cost: dollars per million requests per function size (core/cost)
//	remediation.go  fngate remediation status|actions|rollback|clear|sweep|ingest (route state)
//	routestore.go   the route-state stores those commands (and direct mode) open
//	keystores.go    the key stores direct mode opens
//	windows.go      fngate remediation usage: the counters' current windows beside the limits
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"
)

// Env is what a command reads and writes: the process's, or a test's.
type Env struct {
	Args           []string // without the program's name
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// HTTPClient calls the admin API with -url (nil: a client with a 30 s timeout).
	HTTPClient *http.Client
	// User is the operator's name in direct mode's audit entries, cli:<User> (empty: the OS
	// user's).
	User string
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the API (or a store) refused or failed: its message is printed
	exitUsage = 2 // the command line is wrong: the usage is printed
)

// errUsage is a command line a command refused, after printing its usage.
var errUsage = errors.New("usage")

// Main runs the fngate command and returns its exit code.
func Main(ctx context.Context, env Env) int {
	o := &op{env: &env}
	fs := o.flags("fngate")
	fs.Usage = func() { fmt.Fprint(env.Stderr, mainUsage) }
	if err := fs.Parse(env.Args); err != nil {
		return exitUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	var err error
	switch cmd {
	case "keys":
		err = o.keys(ctx, rest)
	case "usage":
		err = o.usage(ctx, rest)
	case "routes":
		err = o.routes(ctx, rest)
	case "audit":
		err = o.audit(ctx, rest)
	case "whoami":
		err = o.whoami(ctx, rest)
	case "version":
		err = o.version(rest)
	case "cost":
		err = o.cost(rest)
	case "remediation":
		return remediate(ctx, &env, "fngate", "fngate remediation", rest, &o.json)
	case "help", "-h", "-help":
		fmt.Fprint(env.Stdout, mainUsage)
		return exitOK
	default:
		fmt.Fprintf(env.Stderr, "fngate: unknown command %q\n", cmd)
		fs.Usage()
		return exitUsage
	}
	return exitCode(err, env.Stderr, "fngate")
}

// Remediate runs the old command, fngate-remediate: the route-state commands as they were,
// after a notice that the name goes away.
func Remediate(ctx context.Context, env Env) int {
	fmt.Fprintln(env.Stderr, "fngate-remediate: deprecated, use `fngate remediation` (same commands and flags); this name is removed in the next release")
	return remediate(ctx, &env, "fngate-remediate", "fngate-remediate", env.Args, new(bool))
}

const mainUsage = `usage: fngate [-url URL | -config PATH] [-json] COMMAND [ARGS]

Commands:
  keys list [-team T] [-name N] [-q TEXT] [-deleted] [-limit N] [-after CURSOR]
  keys get ID
  keys create -name NAME [-team T] [-owner O] [-description D] [-role R] [-models GLOB,...]
              [-residency R] [-request-profile P] [-rpm N] [-tpm N] [-usd-day X] [-usd-month X]
              [-per-model JSON] [-expires TIME|DURATION]
  keys update [-version N] [the create flags but -name] ID
  keys disable|enable|rotate|delete ID
  usage [-key ID | -team T -after CURSOR -limit N] [-from YYYY-MM-DD] [-to YYYY-MM-DD]
        [-group day|month]
  routes list
  routes cool [-for 15m] [-reason TEXT] ID
  routes restore [-reason TEXT] ID
  audit [-target ID] [-since TIME] [-until TIME] [-after CURSOR] [-limit N]
  cost [-measured FILE] [-requests N] [-profile P,...] [-features F,...] [-cache-hits X]
       [-cold-share X] [-prices]
  whoami        who the API takes the token for
  remediation [-store SPEC] status | actions | rollback | clear | sweep | ingest | usage
              (the route-state commands of self-repair; fngate remediation -h)
  version

Connection:
  -url URL      the control plane's URL (env FNGATE_ADMIN_URL); https, or http on loopback.
                The bearer token is read from the environment variable FNGATE_ADMIN_TOKEN
                only: there is no flag for it, so it is never in shell history or in ps.
  -config PATH  without a URL: the gateway's config (env FNGATE_CONFIG, default fngate.yaml).
                The CLI opens the stores it names (key store, usage history, -store for route
                state) and runs the admin API's own code in this process, with the rules the
                API applies; changes are audited with the actor cli:<os user>.
  -json         print the API's JSON answer as it is, one document (every command takes it)

Exit status: 0 done, 1 refused or failed (the API's message is printed), 2 a usage error.
A created or rotated key's secret is printed once, on stdout; it cannot be shown again.
`

// op is one run of the fngate command: its connection flags and output mode.
type op struct {
	env        *Env
	url, cfg   string
	routeStore string
	json       bool
}

// flags is a flag set carrying the connection and output flags, so they may come before the
// command or after it (fngate keys list -json).
func (o *op) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(o.env.Stderr)
	getenv := o.env.Getenv
	str := func(p *string, name, env, def, usage string) {
		if *p == "" {
			*p = envOr(getenv, env, def)
		}
		fs.StringVar(p, name, *p, usage)
	}
	str(&o.url, "url", "FNGATE_ADMIN_URL", "", "the control plane's URL (env FNGATE_ADMIN_URL); the token is read from FNGATE_ADMIN_TOKEN, never from a flag")
	str(&o.cfg, "config", "FNGATE_CONFIG", "fngate.yaml", "without -url: the gateway's config, whose stores are opened directly (env FNGATE_CONFIG)")
	str(&o.routeStore, "store", "FNGATE_ROUTE_STORE", "", "without -url: the route-state store, file:PATH, dynamodb:TABLE or firestore:PROJECT (env FNGATE_ROUTE_STORE)")
	fs.BoolVar(&o.json, "json", o.json, "print the API's JSON answer, one document")
	return fs
}

// parse reads a subcommand's flags, which may come before or after its arguments
// (fngate keys get ID -json), and checks the number of arguments.
func (o *op) parse(fs *flag.FlagSet, args []string, want int, usage string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, errUsage // the flag package printed what was wrong, and the flags
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != want {
		fmt.Fprintln(o.env.Stderr, "usage: fngate", usage)
		return nil, errUsage
	}
	return pos, nil
}

func exitCode(err error, stderr io.Writer, prog string) int {
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return exitError
	}
	return exitOK
}

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}

// printJSON writes v indented, one document.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes rows aligned under their header.
func table(w io.Writer, header string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// osUser is the operator's login name, for direct mode's audit entries: the environment's
// first (sudo and containers set USER to who is acting), else the account's.
func osUser(getenv func(string) string) string {
	for _, k := range []string{"USER", "LOGNAME", "USERNAME"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// Command fngate-remediate is the operator's tool for route state and key usage: see what
// remediation did, undo it, re-enable a route, run the sweep by hand, feed a local gateway's
// log to the remediation engine, or see what a key has used of its rate limits and budgets.
//
//	go run ./events/cmd/fngate-remediate [-store SPEC] COMMAND [ARGS]
//
//	status                      every route with a record: status, until, reason, last action
//	actions [-n 20]             the latest applied actions, newest first, with their ids
//	rollback [-force] ACTION-ID restore the route as it was before that action
//	clear [-why TEXT] ROUTE     reset a route to active (after fixing its credentials, say)
//	sweep                       re-enable routes whose cooldown ended (honours REMEDIATION_MODE)
//	ingest                      read gateway log lines on stdin and remediate their provider
//	                            errors (honours REMEDIATION_MODE): make run | fngate-remediate ingest
//	usage [-config PATH] [-counters SPEC] [KEY...]
//	                            each key's requests, tokens and spend in the current windows,
//	                            its limits and what remains (usage.go)
//
// SPEC (flag -store, env FNGATE_ROUTE_STORE) is file:PATH (default file:.fngate/routestate.json),
// dynamodb:TABLE (AWS credentials and region from the environment) or firestore:PROJECT
// (-firestore-prefix, -firestore-database; FIRESTORE_EMULATOR_HOST is honoured).
// rollback and clear always apply: they are an operator's explicit decision.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

type cli struct {
	store  routestate.Store
	cfg    remediation.Config
	stdin  io.Reader
	stdout io.Writer
	log    *slog.Logger
	now    func() time.Time
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("fngate-remediate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("store", envOr(getenv, "FNGATE_ROUTE_STORE", "file:"+routestate.DefaultFile), "route-state store: file:PATH, dynamodb:TABLE or firestore:PROJECT (env FNGATE_ROUTE_STORE)")
	prefix := fs.String("firestore-prefix", getenv("ROUTE_STATE_PREFIX"), "Firestore collection prefix (default fngate_)")
	database := fs.String("firestore-database", getenv("ROUTE_STATE_DATABASE"), "Firestore database (default (default))")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fngate-remediate [-store SPEC] status | actions [-n N] | rollback [-force] ACTION-ID | clear [-why TEXT] ROUTE | sweep | ingest | usage [-config PATH] [-counters SPEC] [KEY...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if fs.Arg(0) == "usage" { // counters, not route state
		return exitCode(usage(ctx, fs.Args()[1:], stdout, stderr, getenv, time.Now()), stderr)
	}
	cfg, err := remediation.ConfigFromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "fngate-remediate:", err)
		return 2
	}
	store, closeStore, err := openStore(ctx, *spec, storeOptions{firestorePrefix: *prefix, firestoreDatabase: *database})
	if err != nil {
		fmt.Fprintln(stderr, "fngate-remediate:", err)
		return 1
	}
	defer closeStore()
	c := &cli{store: store, cfg: cfg, stdin: stdin, stdout: stdout, log: slog.New(slog.NewTextHandler(stderr, nil)), now: time.Now}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	switch cmd {
	case "status":
		err = c.status(ctx)
	case "actions":
		err = c.actions(ctx, rest, stderr)
	case "rollback":
		err = c.rollback(ctx, rest, stderr)
	case "clear":
		err = c.clear(ctx, rest, stderr)
	case "sweep":
		err = c.sweep(ctx)
	case "ingest":
		err = c.ingest(ctx)
	default:
		fs.Usage()
		return 2
	}
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "fngate-remediate:", err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}

func (c *cli) engine(mode remediation.Mode) *remediation.Engine {
	cfg := c.cfg
	cfg.Mode = mode
	return remediation.New(c.store, remediation.Options{Config: cfg, Logger: c.log, Now: c.now})
}

func (c *cli) status(ctx context.Context) error {
	states, err := c.store.List(ctx)
	if err != nil {
		return err
	}
	now := c.now()
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUTE\tSTATUS\tUNTIL\tREASON\tCHAT-ONLY\tLAST ACTION\tUPDATED")
	for _, s := range states {
		status := string(s.Effective(now))
		if status != string(s.Status) {
			status += " (" + string(s.Status) + " ended, awaiting sweep)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\t%s\n", s.Route, status, when(s.Until), dash(s.Reason), s.ChatOnly, dash(s.ActionID), when(s.UpdatedAt))
	}
	return tw.Flush()
}

func (c *cli) actions(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("actions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 20, "how many actions to show")
	if err := fs.Parse(args); err != nil {
		return err
	}
	snaps, err := c.store.Snapshots(ctx, *n)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION ID\tAT\tROUTE\tACTION\tFROM\tTO\tEVENT\tWHY")
	for _, s := range snaps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ActionID, when(s.At), s.Route, s.Action,
			brief(s.Before), brief(s.After), dash(s.EventID), dash(s.Why))
	}
	return tw.Flush()
}

func (c *cli) rollback(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rollback", flag.ContinueOnError)
	fs.SetOutput(stderr)
	force := fs.Bool("force", false, "restore even if the route changed after the action")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: fngate-remediate rollback [-force] ACTION-ID (see: fngate-remediate actions)")
		return errUsage
	}
	o, err := c.engine(remediation.Apply).Rollback(ctx, fs.Arg(0), *force)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: %s -> %s (action %s; roll this back with: fngate-remediate rollback %s)\n",
		o.Route, brief(o.From), brief(o.To), o.ActionID, o.ActionID)
	return nil
}

func (c *cli) clear(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("clear", flag.ContinueOnError)
	fs.SetOutput(stderr)
	why := fs.String("why", "cleared by an operator", "reason recorded with the action")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: fngate-remediate clear [-why TEXT] CONNECTION/MODEL")
		return errUsage
	}
	o, err := c.engine(remediation.Apply).Clear(ctx, fs.Arg(0), *why)
	if err != nil {
		return err
	}
	if o.Action == remediation.None {
		fmt.Fprintf(c.stdout, "%s: nothing to clear (%s)\n", o.Route, o.Why)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s: %s -> %s (action %s)\n", o.Route, brief(o.From), brief(o.To), o.ActionID)
	return nil
}

func (c *cli) sweep(ctx context.Context) error {
	e := c.engine(c.cfg.Mode)
	outs, err := e.Sweep(ctx)
	for _, o := range outs {
		verb := "would enable"
		if o.Applied {
			verb = "enabled"
		}
		fmt.Fprintf(c.stdout, "%s: %s (%s)\n", o.Route, verb, o.Why)
	}
	if len(outs) == 0 && err == nil {
		fmt.Fprintf(c.stdout, "no ended cooldowns (mode %s)\n", e.Mode())
	}
	return err
}

// ingest remediates from a gateway's log on stdin. A log line has no delivery id, so the
// line's hash stands in: the same line piped twice is still handled once.
func (c *cli) ingest(ctx context.Context) error {
	e := c.engine(c.cfg.Mode)
	sc := bufio.NewScanner(c.stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	handled := 0
	for sc.Scan() {
		line := sc.Bytes()
		rec, err := remediation.DecodeLogLine(line)
		if errors.Is(err, remediation.ErrNotProviderError) {
			continue
		}
		if err != nil {
			c.log.Warn("skipping an unreadable provider_error line", slog.String("error", err.Error()))
			continue
		}
		sum := sha256.Sum256(line)
		if _, err := e.Handle(ctx, remediation.Delivery{ID: "log:" + hex.EncodeToString(sum[:12]), Record: rec}); err != nil {
			return err
		}
		handled++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%d provider errors handled (mode %s)\n", handled, e.Mode())
	return nil
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

func brief(s routestate.State) string {
	out := string(s.Status)
	if out == "" {
		out = string(routestate.Active)
	}
	if s.Reason != "" {
		out += "(" + s.Reason + ")"
	}
	if !s.Until.IsZero() {
		out += " until " + when(s.Until)
	}
	if s.ChatOnly {
		out += " chat-only"
	}
	return out + " v" + strconv.FormatInt(s.Version, 10)
}

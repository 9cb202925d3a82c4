package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
)

// remediator runs the route-state commands of self-repair: see what remediation did, undo it,
// re-enable a route, run the sweep by hand, feed a gateway's log to the remediation engine.
//
//	status                      every route with a record: status, until, reason, incident, last action
//	actions [-n 20]             the latest applied actions, newest first, with their ids
//	rollback [-force] ACTION-ID restore the route as it was before that action
//	clear [-why TEXT] ROUTE     reset a route to active (after fixing its credentials, say)
//	sweep                       re-enable routes whose cooldown ended (honours REMEDIATION_MODE)
//	ingest                      read gateway log lines on stdin and remediate their provider
//	                            errors (honours REMEDIATION_MODE): ... ingest < gateway.log
//	usage [-config PATH] [-counters SPEC] [KEY...]
//	                            each key's requests, tokens and spend in the current windows,
//	                            its limits and what remains (windows.go)
//
// SPEC (flag -store, env FNGATE_ROUTE_STORE) is file:PATH (default file:.fngate/routestate.json),
// dynamodb:TABLE (AWS credentials and region from the environment) or firestore:PROJECT
// (-firestore-prefix, -firestore-database; FIRESTORE_EMULATOR_HOST is honoured).
// rollback and clear always apply: they are an operator's explicit decision.
//
// Results go to stdout, as text or, with -json (before or after the command), as one JSON
// document. The engine's decision lines go to stderr: key=value text, or with -json the
// same JSON line the remediation functions log.
//
// ingest replays a log: windows, staleness and cooldowns are judged by the log lines' own
// timestamps (the engine's clock follows them), so a saved log decides as it would have when
// it was written, whenever it is ingested.
type remediator struct {
	prog   string // the command group as typed, for messages: "fngate remediation"
	store  routestate.Store
	cfg    remediation.Config
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	json   *bool
	now    func() time.Time
}

const remediationSynopsis = "[-store SPEC] [-json] status | actions [-n N] | rollback [-force] ACTION-ID | clear [-why TEXT] ROUTE | sweep | ingest | usage [-config PATH] [-counters SPEC] [KEY...]"

// remediate runs one route-state command; name prefixes errors ("fngate"), prog is the group
// as typed ("fngate remediation").
func remediate(ctx context.Context, env *Env, name, prog string, args []string, asJSON *bool) int {
	getenv := env.Getenv
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	spec := fs.String("store", envOr(getenv, "FNGATE_ROUTE_STORE", "file:"+routestate.DefaultFile), "route-state store: file:PATH, dynamodb:TABLE or firestore:PROJECT (env FNGATE_ROUTE_STORE)")
	prefix := fs.String("firestore-prefix", getenv("ROUTE_STATE_PREFIX"), "Firestore collection prefix (default fngate_)")
	database := fs.String("firestore-database", getenv("ROUTE_STATE_DATABASE"), "Firestore database (default (default))")
	fs.BoolVar(asJSON, "json", *asJSON, "print results as JSON, and the decision lines (stderr) as the functions' JSON lines")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage:", prog, remediationSynopsis)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	c := &remediator{prog: prog, cfg: remediation.Config{}, stdin: env.Stdin, stdout: env.Stdout, stderr: env.Stderr, json: asJSON, now: env.now}
	if cmd == "usage" { // counters, not route state
		return exitCode(c.windowUsage(ctx, c.subcommand(cmd), rest, getenv, env.now()), env.Stderr, name)
	}
	cfg, err := remediation.ConfigFromEnv(getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	c.cfg = cfg
	commands := map[string]func(*remediator, context.Context, *flag.FlagSet, []string) error{
		"status": (*remediator).status, "actions": (*remediator).actions, "rollback": (*remediator).rollback,
		"clear": (*remediator).clear, "sweep": (*remediator).sweep, "ingest": (*remediator).ingest,
	}
	do, ok := commands[cmd]
	if !ok {
		fs.Usage()
		return exitUsage
	}
	store, closeStore, err := openStore(ctx, *spec, storeOptions{firestorePrefix: *prefix, firestoreDatabase: *database})
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return exitError
	}
	defer closeStore()
	c.store = store
	return exitCode(do(c, ctx, c.subcommand(cmd), rest), env.Stderr, name)
}

// subcommand is a command's flag set; -json is accepted after the command as well as before.
func (c *remediator) subcommand(cmd string) *flag.FlagSet {
	sub := flag.NewFlagSet(cmd, flag.ContinueOnError)
	sub.SetOutput(c.stderr)
	sub.BoolVar(c.json, "json", *c.json, "print results as JSON")
	return sub
}

// parse reads a command's flags and checks its number of arguments.
func (c *remediator) parse(fs *flag.FlagSet, args []string, want int, usage string) error {
	if err := fs.Parse(args); err != nil {
		return errUsage // the flag package printed what was wrong, and the flags
	}
	if fs.NArg() != want {
		fmt.Fprintln(fs.Output(), "usage:", c.prog, usage)
		return errUsage
	}
	return nil
}

// logger is where the engine's decision lines go: text for a person, or the functions' own
// JSON line with -json.
func (c *remediator) logger() *slog.Logger {
	if *c.json {
		return slog.New(slog.NewJSONHandler(c.stderr, nil))
	}
	return slog.New(slog.NewTextHandler(c.stderr, nil))
}

func (c *remediator) engine(mode remediation.Mode, now func() time.Time) *remediation.Engine {
	cfg := c.cfg
	cfg.Mode = mode
	return remediation.New(c.store, remediation.Options{Config: cfg, Logger: c.logger(), Now: now})
}

// emit prints a result: v as JSON with -json, else the text.
func (c *remediator) emit(v any, text func(w io.Writer) error) error {
	if *c.json {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return text(c.stdout)
}

// routeJSON is a route's record with its status now, for status -json.
type routeJSON struct {
	routestate.State
	Effective routestate.Status `json:"effective"`
}

func (c *remediator) status(ctx context.Context, fs *flag.FlagSet, args []string) error {
	if err := c.parse(fs, args, 0, "status"); err != nil {
		return err
	}
	states, err := c.store.List(ctx)
	if err != nil {
		return err
	}
	now := c.now()
	out := make([]routeJSON, 0, len(states))
	for _, s := range states {
		out = append(out, routeJSON{State: s, Effective: s.Effective(now)})
	}
	return c.emit(out, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ROUTE\tSTATUS\tUNTIL\tREASON\tINCIDENT\tCHAT-ONLY\tLAST ACTION\tUPDATED")
		for _, s := range out {
			status := string(s.Effective)
			if status != string(s.Status) {
				status += " (" + string(s.Status) + " ended, awaiting sweep)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\n", s.Route, status, when(s.Until), dash(s.Reason),
				dash(s.Incident), s.ChatOnly, dash(s.ActionID), when(s.UpdatedAt))
		}
		return tw.Flush()
	})
}

func (c *remediator) actions(ctx context.Context, fs *flag.FlagSet, args []string) error {
	n := fs.Int("n", 20, "how many actions to show")
	if err := c.parse(fs, args, 0, "actions [-n N]"); err != nil {
		return err
	}
	snaps, err := c.store.Snapshots(ctx, *n)
	if err != nil {
		return err
	}
	if snaps == nil {
		snaps = []routestate.Snapshot{}
	}
	return c.emit(snaps, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ACTION ID\tAT\tROUTE\tACTION\tFROM\tTO\tEVENT\tWHY")
		for _, s := range snaps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ActionID, when(s.At), s.Route, s.Action,
				brief(s.Before), brief(s.After), dash(s.EventID), dash(s.Why))
		}
		return tw.Flush()
	})
}

func (c *remediator) rollback(ctx context.Context, fs *flag.FlagSet, args []string) error {
	force := fs.Bool("force", false, "restore even if the route changed after the action")
	if err := c.parse(fs, args, 1, "rollback [-force] ACTION-ID (see: "+c.prog+" actions)"); err != nil {
		return err
	}
	id := fs.Arg(0)
	o, err := c.engine(remediation.Apply, c.now).Rollback(ctx, id, *force)
	if errors.Is(err, routestate.ErrChanged) {
		return fmt.Errorf("rollback refused: %w\nto restore anyway: %s rollback -force %s", err, c.prog, id)
	}
	if err != nil {
		return err
	}
	return c.emit(outcomeOf(o), func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: %s -> %s (action %s; roll this back with: %s rollback %s)\n",
			o.Route, brief(o.From), brief(o.To), o.ActionID, c.prog, o.ActionID)
		return err
	})
}

func (c *remediator) clear(ctx context.Context, fs *flag.FlagSet, args []string) error {
	why := fs.String("why", "cleared by an operator", "reason recorded with the action")
	if err := c.parse(fs, args, 1, "clear [-why TEXT] CONNECTION/MODEL"); err != nil {
		return err
	}
	o, err := c.engine(remediation.Apply, c.now).Clear(ctx, fs.Arg(0), *why)
	if errors.Is(err, remediation.ErrUnknownRoute) {
		return fmt.Errorf("%w (%s status lists the routes that have one)", err, c.prog)
	}
	if err != nil {
		return err
	}
	return c.emit(outcomeOf(o), func(w io.Writer) error {
		if o.Action == remediation.None {
			_, err := fmt.Fprintf(w, "%s: nothing to clear (%s)\n", o.Route, o.Why)
			return err
		}
		_, err := fmt.Fprintf(w, "%s: %s -> %s (action %s)\n", o.Route, brief(o.From), brief(o.To), o.ActionID)
		return err
	})
}

func (c *remediator) sweep(ctx context.Context, fs *flag.FlagSet, args []string) error {
	if err := c.parse(fs, args, 0, "sweep"); err != nil {
		return err
	}
	e := c.engine(c.cfg.Mode, c.now)
	outs, err := e.Sweep(ctx)
	if err != nil {
		return err
	}
	js := make([]outcomeJSON, 0, len(outs))
	for _, o := range outs {
		js = append(js, outcomeOf(o))
	}
	return c.emit(js, func(w io.Writer) error {
		for _, o := range outs {
			verb := "would enable"
			if o.Applied {
				verb = "enabled"
			}
			fmt.Fprintf(w, "%s: %s (%s)\n", o.Route, verb, o.Why)
		}
		if len(outs) == 0 {
			fmt.Fprintf(w, "no ended cooldowns (mode %s)\n", e.Mode())
		}
		return nil
	})
}

// ingestJSON is ingest's result.
type ingestJSON struct {
	Mode remediation.Mode `json:"mode"`
	// Clock says how windows were judged: "log", by the lines' own timestamps.
	Clock      string        `json:"clock"`
	First      time.Time     `json:"first,omitzero"`
	Last       time.Time     `json:"last,omitzero"`
	Handled    int           `json:"handled"`
	Duplicates int           `json:"duplicates"`
	Actions    []outcomeJSON `json:"actions"`
}

// ingest remediates from a gateway's log on stdin. A log line has no delivery id, so the
// line's hash stands in: the same line piped twice is still handled once.
//
// The engine's clock is the log's: each line moves it to that line's time (never back), so a
// burst is five errors within a minute of each other in the log, an error is stale when it is
// older than the max age at the time of the last line before it, and a cooldown runs from the
// error that completed the burst. A saved log is judged as it would have been live.
func (c *remediator) ingest(ctx context.Context, fs *flag.FlagSet, args []string) error {
	if err := c.parse(fs, args, 0, "ingest < gateway.log"); err != nil {
		return err
	}
	var logNow time.Time
	e := c.engine(c.cfg.Mode, func() time.Time { return logNow })
	res := ingestJSON{Mode: e.Mode(), Clock: "log", Actions: []outcomeJSON{}}
	var acted []remediation.Outcome
	sc := bufio.NewScanner(c.stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		rec, err := remediation.DecodeLogLine(line)
		if errors.Is(err, remediation.ErrNotProviderError) {
			continue
		}
		if err != nil {
			c.logger().Warn("skipping an unreadable provider_error line", slog.String("error", err.Error()))
			continue
		}
		if rec.Time.IsZero() {
			// A line without a time happened no earlier than the one before it.
			rec.Time = logNow
		}
		if rec.Time.After(logNow) {
			logNow = rec.Time
		}
		if res.First.IsZero() {
			res.First = rec.Time
		}
		res.Last = logNow
		sum := sha256.Sum256(line)
		o, err := e.Handle(ctx, remediation.Delivery{ID: "log:" + hex.EncodeToString(sum[:12]), Record: rec})
		if err != nil {
			return err
		}
		res.Handled++
		if o.Duplicate {
			res.Duplicates++
		}
		if o.Action != remediation.None {
			acted = append(acted, o)
			res.Actions = append(res.Actions, outcomeOf(o))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) error {
		fmt.Fprintf(w, "%d provider errors handled (mode %s)", res.Handled, res.Mode)
		if res.Duplicates > 0 {
			fmt.Fprintf(w, ", %d already handled before", res.Duplicates)
		}
		fmt.Fprintln(w)
		if res.Handled > 0 {
			fmt.Fprintf(w, "windows judged by the log lines' own timestamps (%s to %s), not by this machine's clock\n", when(res.First), when(res.Last))
		}
		now := c.now()
		for _, o := range acted {
			verb := "would " + string(o.Action)
			if o.Applied {
				verb = string(o.Action) + " applied"
			}
			fmt.Fprintf(w, "%s: %s: %s -> %s (%s)", o.Route, verb, brief(o.From), brief(o.To), o.Why)
			if o.To.Status == routestate.Cooling && !o.To.Until.After(now) {
				fmt.Fprint(w, "; that cooldown is already over by this machine's clock")
			}
			fmt.Fprintln(w)
		}
		return nil
	})
}

// outcomeJSON is one decision as -json prints it.
type outcomeJSON struct {
	At         time.Time          `json:"at"`
	EventID    string             `json:"event_id,omitempty"`
	Route      string             `json:"route"`
	ErrorClass string             `json:"error_class,omitempty"`
	Action     remediation.Action `json:"action"`
	Mode       remediation.Mode   `json:"mode"`
	Applied    bool               `json:"applied"`
	Duplicate  bool               `json:"duplicate,omitempty"`
	Why        string             `json:"why"`
	ActionID   string             `json:"action_id,omitempty"`
	From       routestate.State   `json:"from"`
	To         routestate.State   `json:"to"`
}

func outcomeOf(o remediation.Outcome) outcomeJSON {
	return outcomeJSON{At: o.At, EventID: o.EventID, Route: o.Route, ErrorClass: o.ErrorClass, Action: o.Action, Mode: o.Mode,
		Applied: o.Applied, Duplicate: o.Duplicate, Why: o.Why, ActionID: o.ActionID, From: o.From, To: o.To}
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

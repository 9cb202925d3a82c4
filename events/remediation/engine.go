package remediation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/telemetry"
)

// Options wire an Engine.
type Options struct {
	Config Config
	// Logger receives one "remediation" line per decision; nil logs JSON to stdout.
	Logger *slog.Logger
	// Metrics counts actions (EMFMetrics on AWS, CloudLoggingMetrics on GCP); nil counts
	// nothing.
	Metrics Metrics
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Inventory says which routes run where, for provider health news (HandleIncident) and
	// for correlating bursts with it; nil places no route, so incidents cool nothing and
	// every burst counts as uncorrelated.
	Inventory *Inventory
}

// Engine turns deliveries into route-state changes. Safe for concurrent use, and any number
// of engines (handler instances) may share one store: every write is conditional.
type Engine struct {
	store     routestate.Store
	mode      Mode
	policy    Policy
	log       *slog.Logger
	metrics   Metrics
	now       func() time.Time
	inventory *Inventory
}

// New returns an engine on store. A zero Config means dry-run with the default policy.
func New(store routestate.Store, opt Options) *Engine {
	e := &Engine{store: store, mode: opt.Config.Mode, policy: opt.Config.Policy, log: opt.Logger, metrics: opt.Metrics, now: opt.Now, inventory: opt.Inventory}
	if e.mode == "" {
		e.mode = DryRun
	}
	def := DefaultPolicy()
	if e.policy.BurstErrors <= 0 {
		e.policy.BurstErrors = def.BurstErrors
	}
	if e.policy.BurstWindow <= 0 {
		e.policy.BurstWindow = def.BurstWindow
	}
	if e.policy.Cooldown <= 0 {
		e.policy.Cooldown = def.Cooldown
	}
	if e.policy.MaxEventAge <= 0 {
		e.policy.MaxEventAge = def.MaxEventAge
	}
	if e.policy.ClaimTTL <= 0 {
		e.policy.ClaimTTL = def.ClaimTTL
	}
	if e.policy.IncidentCooldown <= 0 {
		e.policy.IncidentCooldown = def.IncidentCooldown
	}
	if e.log == nil {
		e.log = telemetry.NewLogger(os.Stdout, telemetry.FormatFromEnv(""), nil)
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// Mode is the engine's mode.
func (e *Engine) Mode() Mode { return e.mode }

// Policy is the engine's effective policy (defaults filled in).
func (e *Engine) Policy() Policy { return e.policy }

// Outcome is what one decision did (or, in dry-run, would do).
type Outcome struct {
	At         time.Time
	EventID    string
	Route      string
	ErrorClass string
	Action     Action // None when nothing changes
	Mode       Mode
	Applied    bool // the change was written
	Duplicate  bool // the delivery was already claimed
	Why        string
	ActionID   string // the snapshot of an applied change, for rollback
	From, To   routestate.State
	// Correlation is set on a completed burst: CorrelatedIncident when an open provider
	// incident covers the route (Incident names it), else CorrelatedNone.
	Correlation string
	// Incident and IncidentLink name the provider incident the decision is about.
	Incident, IncidentLink string
}

// maxConflicts bounds re-reads when other writers keep winning; each conflict means another
// handler just changed the same record, so a handful is plenty.
const maxConflicts = 8

// Handle decides on one delivery: ignore it, count it toward a burst, or change the route.
// An error means the delivery should be retried (the store failed) unless it wraps
// ErrInvalid; the claim is released first so the retry is not mistaken for a duplicate.
func (e *Engine) Handle(ctx context.Context, d Delivery) (Outcome, error) {
	now := e.now()
	rec := d.Record
	o := Outcome{At: now, EventID: d.ID, Route: rec.Route, ErrorClass: rec.ErrorClass, Action: None, Mode: e.mode}
	if d.ID == "" {
		return o, fmt.Errorf("%w: a delivery without an id cannot be made idempotent", ErrInvalid)
	}
	if err := rec.validate(); err != nil {
		return o, err
	}
	rl, reason := classify(rec)
	if rl == ruleIgnore {
		o.Why = reason
		e.report(ctx, &o)
		return o, nil
	}
	if rec.Time.IsZero() {
		rec.Time = now
	}
	if age := now.Sub(rec.Time); age > e.policy.MaxEventAge {
		o.Why = fmt.Sprintf("stale: the error is %s old (max %s)", age.Round(time.Second), e.policy.MaxEventAge)
		e.report(ctx, &o)
		return o, nil
	}
	claim := e.bookkeeping(d.ID)
	won, err := e.store.Claim(ctx, routestate.Claim{ID: claim, At: now, Expires: now.Add(e.policy.ClaimTTL)})
	if err != nil {
		return o, fmt.Errorf("claim %s: %w", d.ID, err)
	}
	if !won {
		o.Duplicate, o.Why = true, "delivery already handled"
		e.report(ctx, &o)
		return o, nil
	}
	counted := false
	err = e.write(ctx, &o, e.mode, func(cur routestate.State) (Action, routestate.State, string, bool, error) {
		act, to, why, ok := next(rl, reason, rec, cur, d.ID, now, e.policy)
		if !ok || rl != ruleBurst || counted {
			return act, to, why, ok, nil
		}
		// Count once, even when the route write below conflicts and this plan runs again.
		counted = true
		fired, n, err := e.count(ctx, rec, cur.Since, now)
		if err != nil || !fired {
			return None, cur, fmt.Sprintf("%d of %d transient errors within %s", n, e.policy.BurstErrors, e.policy.BurstWindow), false, err
		}
		corr, in, note, err := e.correlate(ctx, rec)
		if err != nil {
			return None, cur, "", false, err
		}
		o.Correlation = corr
		if in != nil {
			o.Incident, o.IncidentLink = in.ID, in.Link
		}
		return act, to, why + "; " + note, ok, nil
	})
	if err != nil {
		if rerr := e.store.Release(ctx, claim); rerr != nil {
			e.log.Warn("remediation could not release a claim; a retry will be taken for a duplicate",
				slog.String("event_id", d.ID), slog.String("error", rerr.Error()))
		}
		return o, err
	}
	e.report(ctx, &o)
	return o, nil
}

// dryRunPrefix keeps a dry run's bookkeeping (delivery claims, burst windows) apart from
// apply's: a dry run must not take the deliveries an apply run will act on, nor leave errors
// in a window an apply run would count a second time.
const dryRunPrefix = "dry_run:"

// bookkeeping is the key of a claim or window in the engine's mode.
func (e *Engine) bookkeeping(key string) string {
	if e.mode == DryRun {
		return dryRunPrefix + key
	}
	return key
}

// count adds the error to the route's stored window (the mode's own, see bookkeeping).
func (e *Engine) count(ctx context.Context, rec Record, since, now time.Time) (fired bool, n int, err error) {
	for range maxConflicts {
		w, err := e.store.Window(ctx, e.bookkeeping(rec.Route))
		if err != nil {
			return false, 0, err
		}
		nw, fired := countBurst(w, rec.Time, since, now, e.policy)
		if _, err := e.store.PutWindow(ctx, nw); errors.Is(err, routestate.ErrConflict) {
			continue
		} else if err != nil {
			return false, 0, err
		}
		if fired {
			return true, e.policy.BurstErrors, nil
		}
		return false, len(nw.Errors), nil
	}
	return false, 0, fmt.Errorf("burst window of %s: %d conflicting writes in a row", rec.Route, maxConflicts)
}

// planFunc computes a change from the route's current record; ok false means no change.
type planFunc func(cur routestate.State) (act Action, to routestate.State, why string, ok bool, err error)

// write plans against the current record and, in Apply mode, writes the plan with its
// snapshot, planning again from a fresh read whenever another writer got there first.
func (e *Engine) write(ctx context.Context, o *Outcome, mode Mode, plan planFunc) error {
	for range maxConflicts {
		cur, err := e.store.Get(ctx, o.Route)
		if err != nil {
			return err
		}
		act, to, why, ok, err := plan(cur)
		if err != nil {
			return err
		}
		o.From, o.To, o.Why, o.Action = cur, cur, why, None
		if !ok {
			return nil
		}
		o.Action, o.To = act, to
		if mode == DryRun {
			return nil
		}
		to.ActionID = routestate.NewActionID(o.At, o.EventID, o.Route, string(act), strconv.FormatInt(cur.Version, 10))
		snap := &routestate.Snapshot{ActionID: to.ActionID, Route: o.Route, Action: string(act), EventID: o.EventID, Why: why, At: o.At, Before: cur}
		stored, err := e.store.Put(ctx, to, snap)
		if errors.Is(err, routestate.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		o.To, o.ActionID, o.Applied = stored, stored.ActionID, true
		return nil
	}
	return fmt.Errorf("route %s: %d conflicting writes in a row", o.Route, maxConflicts)
}

// Sweep re-enables every route whose cooldown has ended. The gateway already treats such a
// route as active (State.Effective); the sweep makes the record say so and restarts the
// route's burst count. It follows the engine's mode.
func (e *Engine) Sweep(ctx context.Context) ([]Outcome, error) {
	now := e.now()
	states, err := e.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	var outs []Outcome
	var errs []error
	for _, st := range states {
		if st.Status != routestate.Cooling || now.Before(st.Until) {
			continue
		}
		o := Outcome{At: now, EventID: "sweep:" + stamp(now), Route: st.Route, Action: None, Mode: e.mode}
		err := e.write(ctx, &o, e.mode, func(cur routestate.State) (Action, routestate.State, string, bool, error) {
			if cur.Status != routestate.Cooling || now.Before(cur.Until) {
				return None, cur, "no longer an ended cooldown: " + describe(cur, now), false, nil
			}
			to := cur
			to.Status, to.Until, to.Reason, to.Incident, to.IncidentLink, to.Source = routestate.Active, time.Time{}, "", "", "", ""
			to.EventID, to.Since, to.UpdatedAt = o.EventID, now, now
			return Enable, to, "the cooldown ended at " + stamp(cur.Until), true, nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", st.Route, err))
			continue
		}
		e.report(ctx, &o)
		outs = append(outs, o)
	}
	return outs, errors.Join(errs...)
}

// ErrUnknownRoute means the store has no record of the route an operator named: a typo, or
// a route remediation never touched (both read as active).
var ErrUnknownRoute = errors.New("no such route in route state")

// Clear resets a route to active with no marks: how an operator re-enables a route disabled
// for credentials once they are fixed. An operator's command always applies. A route the
// store has no record of is ErrUnknownRoute, not a silent success.
func (e *Engine) Clear(ctx context.Context, route, why string) (Outcome, error) {
	now := e.now()
	o := Outcome{At: now, EventID: "clear:" + stamp(now), Route: route, Action: None, Mode: Apply}
	err := e.write(ctx, &o, Apply, func(cur routestate.State) (Action, routestate.State, string, bool, error) {
		if cur.Version == 0 {
			return None, cur, "", false, fmt.Errorf("%w: %s has no record", ErrUnknownRoute, route)
		}
		if cur.Status == routestate.Active && !cur.ChatOnly {
			return None, cur, "already active with no marks", false, nil
		}
		to := routestate.State{Route: route, Status: routestate.Active, EventID: o.EventID, Since: now, UpdatedAt: now, Version: cur.Version}
		return Clear, to, why, true, nil
	})
	if err != nil {
		return o, err
	}
	e.report(ctx, &o)
	return o, nil
}

// Rollback restores the route's record from before the action actionID (see
// routestate.Restore). An operator's command always applies.
func (e *Engine) Rollback(ctx context.Context, actionID string, force bool) (Outcome, error) {
	now := e.now()
	o := Outcome{At: now, EventID: "rollback:" + actionID, Action: None, Mode: Apply}
	snap, err := routestate.Restore(ctx, e.store, actionID, now, force)
	if err != nil {
		return o, err
	}
	o.Route, o.Action, o.Applied, o.ActionID, o.Why = snap.Route, Rollback, true, snap.ActionID, snap.Why
	o.From = snap.Before
	if o.To, err = e.store.Get(ctx, snap.Route); err != nil {
		return o, err
	}
	e.report(ctx, &o)
	return o, nil
}

// report logs the decision and counts an action.
func (e *Engine) report(ctx context.Context, o *Outcome) {
	attrs := []slog.Attr{
		slog.String("event_id", o.EventID),
		slog.String("route", o.Route),
		slog.String("action", string(o.Action)),
		slog.String("mode", string(o.Mode)),
		slog.Bool("applied", o.Applied),
		slog.String("why", o.Why),
	}
	if o.ErrorClass != "" {
		attrs = append(attrs, slog.String("error_class", o.ErrorClass))
	}
	if o.Duplicate {
		attrs = append(attrs, slog.Bool("duplicate", true))
	}
	if o.Correlation != "" {
		attrs = append(attrs, slog.String("correlation", o.Correlation))
	}
	if o.Incident != "" {
		attrs = append(attrs, slog.String("incident", o.Incident), slog.String("incident_link", o.IncidentLink))
	}
	if o.Action != None {
		attrs = append(attrs, slog.String("from", describeMarks(o.From, o.At)), slog.String("to", describeMarks(o.To, o.At)))
	}
	if o.ActionID != "" {
		attrs = append(attrs, slog.String("action_id", o.ActionID))
	}
	e.log.LogAttrs(ctx, slog.LevelInfo, "remediation", attrs...)
	if o.Action == None || e.metrics == nil {
		return
	}
	if err := e.metrics.Count(*o); err != nil {
		e.log.Warn("remediation metric failed", slog.String("error", err.Error()))
	}
}

func describeMarks(s routestate.State, now time.Time) string {
	d := describe(s, now)
	if s.ChatOnly {
		d += ", chat-only"
	}
	return d
}

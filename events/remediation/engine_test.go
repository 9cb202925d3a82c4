package remediation_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const route = "claude/claude-sonnet-4-5"

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// clock is a settable time shared by engines in a test.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.ns.Store(t.UnixNano())
	return c
}
func (c *clock) Now() time.Time                  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Add(d time.Duration)             { c.ns.Add(int64(d)) }
func (c *clock) Set(t time.Time)                 { c.ns.Store(t.UnixNano()) }
func (c *clock) Since(d time.Duration) time.Time { return c.Now().Add(-d) }

type rig struct {
	store   routestate.Store
	clock   *clock
	logs    *gatewaytest.LogBuffer
	metrics *gatewaytest.LogBuffer
}

func newRig(store routestate.Store) *rig {
	return &rig{store: store, clock: newClock(t0), logs: &gatewaytest.LogBuffer{}, metrics: &gatewaytest.LogBuffer{}}
}

func (r *rig) engine(cfg remediation.Config) *remediation.Engine {
	return remediation.New(r.store, remediation.Options{
		Config:  cfg,
		Logger:  slog.New(slog.NewJSONHandler(r.logs, nil)),
		Metrics: remediation.NewEMFMetrics(r.metrics),
		Now:     r.clock.Now,
	})
}

var apply = remediation.Config{Mode: remediation.Apply, Policy: remediation.DefaultPolicy()}

func delivery(id, class string, at time.Time) remediation.Delivery {
	status := map[string]int{"rate_limited": 429, "overloaded": 529, "unavailable": 503, "auth": 401, "not_found": 404, "unsupported": 501}[class]
	return remediation.Delivery{ID: id, Record: remediation.Record{
		Time: at, RequestID: "req_" + id, Endpoint: "chat", Model: "example/chat", Route: route,
		Connection: "claude", Provider: "anthropic", UpstreamModel: "claude-sonnet-4-5", Attempt: 1,
		Outcome: "failover", Status: status, ErrorClass: class, ErrorCode: "e", ErrorMessage: "upstream said no",
	}}
}

func handle(t *testing.T, e *remediation.Engine, d remediation.Delivery) remediation.Outcome {
	t.Helper()
	o, err := e.Handle(context.Background(), d)
	if err != nil {
		t.Fatalf("Handle(%s): %v", d.ID, err)
	}
	return o
}

func get(t *testing.T, s routestate.Store) routestate.State {
	t.Helper()
	st, err := s.Get(context.Background(), route)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// burst sends n transient errors a second apart and returns the last outcome.
func burst(t *testing.T, r *rig, e *remediation.Engine, prefix string, n int) remediation.Outcome {
	t.Helper()
	var o remediation.Outcome
	for i := range n {
		o = handle(t, e, delivery(fmt.Sprintf("%s%d", prefix, i), "rate_limited", r.clock.Now()))
		if i < n-1 && o.Action != remediation.None {
			t.Fatalf("error %d of %d already acted: %+v", i+1, n, o)
		}
		r.clock.Add(time.Second)
	}
	return o
}

func TestDryRunIsTheDefault(t *testing.T) {
	cfg, err := remediation.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(routestate.NewMemory())
	e := r.engine(cfg)
	if e.Mode() != remediation.DryRun {
		t.Fatalf("mode from an empty environment = %s", e.Mode())
	}
	o := burst(t, r, e, "eb:", remediation.DefaultBurstErrors)
	if o.Action != remediation.Cool || o.Applied || o.Mode != remediation.DryRun || o.ActionID != "" {
		t.Fatalf("dry-run burst outcome = %+v; want a planned, unapplied cool", o)
	}
	if o.To.Status != routestate.Cooling || o.From.Status != routestate.Active {
		t.Fatalf("the plan should say from active to cooling: from %+v to %+v", o.From, o.To)
	}
	if st := get(t, r.store); st.Version != 0 || st.Status != routestate.Active {
		t.Fatalf("dry-run wrote the route: %+v", st)
	}
	if snaps, _ := r.store.Snapshots(context.Background(), 0); len(snaps) != 0 {
		t.Fatalf("dry-run wrote snapshots: %+v", snaps)
	}
	if !strings.Contains(r.metrics.String(), `"Action":"cool","Mode":"dry_run","RemediationActions":1`) {
		t.Fatalf("no dry_run metric:\n%s", r.metrics)
	}
	if !strings.Contains(r.logs.String(), `"from":"active","to":"cooling until 2026-11-29T12:05:04Z (rate_limited)"`) {
		t.Fatalf("the plan is not logged from -> to:\n%s", r.logs)
	}
}

func TestBurstCoolsOnceAndSnapshots(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	o := burst(t, r, e, "eb:", remediation.DefaultBurstErrors)
	if o.Action != remediation.Cool || !o.Applied || o.ActionID == "" {
		t.Fatalf("5th error: %+v; want an applied cool", o)
	}
	st := get(t, r.store)
	if st.Status != routestate.Cooling || st.Reason != "rate_limited" || !st.Until.Equal(o.At.Add(remediation.DefaultCooldown)) || st.ActionID != o.ActionID || st.EventID != "eb:4" {
		t.Fatalf("stored %+v", st)
	}
	snap, err := r.store.Snapshot(context.Background(), o.ActionID)
	if err != nil || snap.Before.Status != routestate.Active || snap.After.Version != st.Version || snap.Action != "cool" {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
	// More errors while cooling change nothing.
	if o := handle(t, e, delivery("eb:late", "overloaded", r.clock.Now())); o.Action != remediation.None || !strings.HasPrefix(o.Why, "already cooling") {
		t.Fatalf("error on a cooling route: %+v", o)
	}
	if n := strings.Count(r.metrics.String(), "RemediationActions"); n != 2 { // the directive names it once, the value once
		t.Fatalf("want exactly one metric line, got:\n%s", r.metrics)
	}
}

// Separate engines stand for separate handler invocations (or instances): the burst must be
// counted in the store, not in an engine.
func TestBurstIsCountedAcrossInvocations(t *testing.T) {
	f, err := routestate.OpenFile(filepath.Join(t.TempDir(), "routestate.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(f)
	var o remediation.Outcome
	for i := range remediation.DefaultBurstErrors {
		o = handle(t, r.engine(apply), delivery(fmt.Sprint("cwl:", i), "unavailable", r.clock.Now()))
		r.clock.Add(5 * time.Second)
	}
	if o.Action != remediation.Cool || !o.Applied {
		t.Fatalf("5 errors over 5 invocations: %+v", o)
	}
}

func TestErrorsSpreadBeyondTheWindowNeverCool(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	for i := range 3 * remediation.DefaultBurstErrors {
		o := handle(t, e, delivery(fmt.Sprint("eb:", i), "rate_limited", r.clock.Now()))
		if o.Action != remediation.None {
			t.Fatalf("error %d acted: %+v", i, o)
		}
		r.clock.Add(remediation.DefaultBurstWindow / time.Duration(remediation.DefaultBurstErrors-1))
	}
	if st := get(t, r.store); st.Status != routestate.Active {
		t.Fatalf("route = %+v", st)
	}
}

func TestRedeliveryChangesNothing(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	d := delivery("eb:6f1c2a", "auth", r.clock.Now())
	first := handle(t, e, d)
	if first.Action != remediation.Disable || !first.Applied {
		t.Fatalf("first delivery: %+v", first)
	}
	before := get(t, r.store)
	r.clock.Add(time.Minute)
	again := handle(t, e, d)
	if !again.Duplicate || again.Action != remediation.None || again.Applied {
		t.Fatalf("redelivery: %+v", again)
	}
	if after := get(t, r.store); after != before {
		t.Fatalf("redelivery changed the route: %+v -> %+v", before, after)
	}
	// A different delivery of the same kind finds the route already disabled.
	other := handle(t, e, delivery("eb:other", "auth", r.clock.Now()))
	if other.Action != remediation.None || other.Duplicate || !strings.Contains(other.Why, "already disabled (credentials)") {
		t.Fatalf("second auth error: %+v", other)
	}
	if after := get(t, r.store); after != before {
		t.Fatalf("second auth error changed the route: %+v -> %+v", before, after)
	}
	snaps, _ := r.store.Snapshots(context.Background(), 0)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want 1", len(snaps))
	}
}

// Handlers racing: several engine instances get the same delivery at once (EventBridge
// retried while the first invocation was still running), on each store the handlers use.
func TestRacingHandlersApplyOnce(t *testing.T) {
	stores := map[string]func(t *testing.T) routestate.Store{
		"memory": func(*testing.T) routestate.Store { return routestate.NewMemory() },
		"file": func(t *testing.T) routestate.Store {
			f, err := routestate.OpenFile(filepath.Join(t.TempDir(), "routestate.json"))
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
	}
	for name, open := range stores {
		t.Run(name+"/same event", func(t *testing.T) {
			r := newRig(open(t))
			outs := race(t, r, 6, func(int) remediation.Delivery { return delivery("eb:same", "not_found", t0) })
			applied, dups := 0, 0
			for _, o := range outs {
				if o.Applied {
					applied++
				}
				if o.Duplicate {
					dups++
				}
			}
			if applied != 1 || dups != len(outs)-1 {
				t.Fatalf("applied %d, duplicates %d of %d", applied, dups, len(outs))
			}
			if st := get(t, r.store); st.Status != routestate.Disabled || st.Version != 1 {
				t.Fatalf("route %+v; want disabled at version 1", st)
			}
		})
		t.Run(name+"/different events, same route", func(t *testing.T) {
			r := newRig(open(t))
			outs := race(t, r, 6, func(i int) remediation.Delivery { return delivery(fmt.Sprint("eb:", i), "auth", t0) })
			applied := 0
			for _, o := range outs {
				if o.Applied {
					applied++
				} else if o.Action != remediation.None || o.Duplicate {
					t.Errorf("loser: %+v", o)
				}
			}
			if applied != 1 {
				t.Fatalf("applied %d of %d", applied, len(outs))
			}
			if snaps, _ := r.store.Snapshots(context.Background(), 0); len(snaps) != 1 {
				t.Fatalf("%d snapshots, want 1", len(snaps))
			}
		})
	}
}

func race(t *testing.T, r *rig, n int, d func(int) remediation.Delivery) []remediation.Outcome {
	t.Helper()
	outs := make([]remediation.Outcome, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		e := r.engine(apply)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			o, err := e.Handle(context.Background(), d(i))
			if err != nil {
				t.Error(err)
			}
			outs[i] = o
		}()
	}
	close(start)
	wg.Wait()
	return outs
}

func TestStaleErrorsChangeNothing(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	old := delivery("eb:redrive", "auth", r.clock.Since(remediation.DefaultMaxEventAge+time.Minute))
	if o := handle(t, e, old); o.Action != remediation.None || !strings.HasPrefix(o.Why, "stale") {
		t.Fatalf("stale error: %+v", o)
	}
	if st := get(t, r.store); st.Version != 0 {
		t.Fatalf("a stale error wrote %+v", st)
	}
}

// An operator re-enabled the route; an error that happened before that, delivered after it,
// must not undo the operator's decision.
func TestLateErrorDoesNotUndoAnOperatorsClear(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	handle(t, e, delivery("eb:1", "auth", r.clock.Now()))
	errTime := r.clock.Now().Add(time.Second)
	r.clock.Add(2 * time.Second)
	if o, err := e.Clear(context.Background(), route, "key rotated"); err != nil || o.Action != remediation.Clear || !o.Applied {
		t.Fatalf("Clear: %+v, %v", o, err)
	}
	r.clock.Add(time.Second)
	o := handle(t, e, delivery("eb:2", "auth", errTime))
	if o.Action != remediation.None || !strings.Contains(o.Why, "after this error") {
		t.Fatalf("late error: %+v", o)
	}
	if st := get(t, r.store); st.Status != routestate.Active {
		t.Fatalf("route %+v", st)
	}
}

func TestChatOnlyAndNotFound(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	d := delivery("eb:c", "unsupported", r.clock.Now())
	d.Record.Endpoint = "completions"
	if o := handle(t, e, d); o.Action != remediation.ChatOnly || !o.Applied {
		t.Fatalf("unsupported completions: %+v", o)
	}
	if st := get(t, r.store); !st.ChatOnly || st.Status != routestate.Active {
		t.Fatalf("route %+v", st)
	}
	if o := handle(t, e, delivery("eb:n", "not_found", r.clock.Now())); o.Action != remediation.Disable || o.To.Reason != remediation.ReasonModelNotFound || !o.To.ChatOnly {
		t.Fatalf("not_found: %+v", o)
	}
}

func TestSweepEnablesEndedCooldowns(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	burst(t, r, e, "eb:", remediation.DefaultBurstErrors)
	cooled := get(t, r.store)
	ctx := context.Background()

	outs, err := e.Sweep(ctx)
	if err != nil || len(outs) != 0 {
		t.Fatalf("sweep during the cooldown: %+v, %v", outs, err)
	}
	r.clock.Set(cooled.Until)
	if outs, _ := r.engine(remediation.Config{}).Sweep(ctx); len(outs) != 1 || outs[0].Applied || outs[0].Action != remediation.Enable {
		t.Fatalf("dry-run sweep: %+v", outs)
	}
	if st := get(t, r.store); st != cooled {
		t.Fatalf("dry-run sweep wrote %+v", st)
	}
	outs, err = e.Sweep(ctx)
	if err != nil || len(outs) != 1 || !outs[0].Applied || outs[0].Action != remediation.Enable {
		t.Fatalf("sweep after the cooldown: %+v, %v", outs, err)
	}
	st := get(t, r.store)
	if st.Status != routestate.Active || !st.Until.IsZero() || st.Reason != "" || !st.Since.Equal(r.clock.Now()) {
		t.Fatalf("after sweep: %+v", st)
	}
	if outs, _ := e.Sweep(ctx); len(outs) != 0 {
		t.Fatalf("second sweep: %+v", outs)
	}
	// The burst count restarted: one more error does not cool again.
	if o := handle(t, e, delivery("eb:after", "rate_limited", r.clock.Now())); o.Action != remediation.None {
		t.Fatalf("first error after the sweep: %+v", o)
	}
}

func TestRollbackRestoresThePreviousState(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	ctx := context.Background()
	dis := handle(t, e, delivery("eb:1", "auth", r.clock.Now()))
	r.clock.Add(time.Minute)
	o, err := e.Rollback(ctx, dis.ActionID, false)
	if err != nil || o.Action != remediation.Rollback || !o.Applied || o.Route != route {
		t.Fatalf("Rollback: %+v, %v", o, err)
	}
	if st := get(t, r.store); st.Status != routestate.Active || st.Reason != "" || st.ActionID != o.ActionID {
		t.Fatalf("after rollback: %+v", st)
	}
	if _, err := e.Rollback(ctx, dis.ActionID, false); !errors.Is(err, routestate.ErrChanged) {
		t.Fatalf("second rollback of the same action: %v, want ErrChanged", err)
	}
	if _, err := e.Rollback(ctx, "20000101T000000Z-nope", false); !errors.Is(err, routestate.ErrNotFound) {
		t.Fatalf("rollback of an unknown action: %v", err)
	}
}

// failingStore fails chosen operations, to check what a handler does when the store does.
type failingStore struct {
	routestate.Store
	failPut atomic.Int64 // fail this many Puts
}

func (f *failingStore) Put(ctx context.Context, s routestate.State, snap *routestate.Snapshot) (routestate.State, error) {
	if f.failPut.Add(-1) >= 0 {
		return routestate.State{}, errors.New("ProvisionedThroughputExceededException")
	}
	return f.Store.Put(ctx, s, snap)
}

func TestAFailedWriteIsRetriedNotTakenForADuplicate(t *testing.T) {
	fs := &failingStore{Store: routestate.NewMemory()}
	fs.failPut.Store(1)
	r := newRig(fs)
	e := r.engine(apply)
	d := delivery("eb:retry", "auth", r.clock.Now())
	if _, err := e.Handle(context.Background(), d); err == nil || errors.Is(err, remediation.ErrInvalid) {
		t.Fatalf("Handle over a failing store: err = %v, want a retryable error", err)
	}
	o := handle(t, e, d)
	if o.Duplicate || !o.Applied {
		t.Fatalf("the platform's retry: %+v", o)
	}
}

func TestInvalidDeliveries(t *testing.T) {
	e := newRig(routestate.NewMemory()).engine(apply)
	for name, d := range map[string]remediation.Delivery{
		"no id":    {Record: remediation.Record{Route: route, ErrorClass: "auth"}},
		"no route": {ID: "eb:1", Record: remediation.Record{ErrorClass: "auth"}},
		"no class": {ID: "eb:1", Record: remediation.Record{Route: route}},
	} {
		if _, err := e.Handle(context.Background(), d); !errors.Is(err, remediation.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// The log line carries what an operator needs to act on a dry-run plan.
func TestDecisionLogLine(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	handle(t, e, delivery("eb:1", "auth", r.clock.Now()))
	lines := r.logs.Lines(t, "")
	if len(lines) == 0 {
		t.Fatal("no log line")
	}
	line := lines[0]
	for k, want := range map[string]any{"msg": "remediation", "event_id": "eb:1", "route": route, "action": "disable",
		"mode": "apply", "applied": true, "error_class": "auth", "from": "active", "to": "disabled (credentials)"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v", k, line[k], want)
		}
	}
	if id, _ := line["action_id"].(string); !strings.HasPrefix(id, "20261129T120000Z-") {
		t.Errorf("action_id = %v", line["action_id"])
	}
}

// A dry run takes no delivery an apply run would act on, and leaves no error in the window an
// apply run counts: switching to apply (or applying a log after a dry run of it) acts on the
// same deliveries, once, and dry-run redeliveries are still recognised as such.
func TestDryRunKeepsItsBookkeepingApart(t *testing.T) {
	r := newRig(routestate.NewMemory())
	dry := r.engine(remediation.Config{Mode: remediation.DryRun})
	ds := make([]remediation.Delivery, remediation.DefaultBurstErrors-1)
	for i := range ds {
		ds[i] = delivery(fmt.Sprint("eb:", i), "rate_limited", r.clock.Now())
		handle(t, dry, ds[i])
	}
	if o := handle(t, dry, ds[0]); !o.Duplicate {
		t.Fatalf("a dry-run redelivery: %+v; want a duplicate", o)
	}
	ap := r.engine(apply)
	for i, d := range ds {
		if o := handle(t, ap, d); o.Duplicate || o.Action != remediation.None {
			t.Fatalf("apply of delivery %d after the dry run: %+v; want counted, not a duplicate and no cool yet (the dry run's errors are not in apply's window)", i, o)
		}
	}
	last := handle(t, ap, delivery("eb:last", "rate_limited", r.clock.Now()))
	if last.Action != remediation.Cool || !last.Applied {
		t.Fatalf("the fifth error for apply: %+v", last)
	}
}

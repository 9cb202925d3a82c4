package remediation_test

import (
	"context"
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
)

// putManual writes the record an operator's cool or restore leaves (core/admin).
func putManual(t *testing.T, r *rig, route string, status routestate.Status, until time.Time) {
	t.Helper()
	cur, _ := r.store.Get(context.Background(), route)
	st := routestate.State{Route: route, Status: status, Until: until, Reason: "maintenance", Source: routestate.SourceManual,
		Since: r.clock.Now(), UpdatedAt: r.clock.Now(), Version: cur.Version}
	if _, err := r.store.Put(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
}

// TestManualStatusHoldsAgainstSelfRepair: while an operator's status lasts, neither errors
// (a credentials error included) nor a provider incident change it; the sweep ends a manual
// cooldown when its time is up, and the route is remediation's again.
func TestManualStatusHoldsAgainstSelfRepair(t *testing.T) {
	ctx := context.Background()
	r := newRig(routestate.NewMemory())
	e := r.engine(apply)
	putManual(t, r, route, routestate.Active, r.clock.Now().Add(10*time.Minute))
	r.clock.Add(time.Second)
	if o := handle(t, e, delivery("auth-1", "auth", r.clock.Now())); o.Applied {
		t.Fatalf("a credentials error disabled a route restored by hand: %+v", o)
	}
	r.clock.Add(11 * time.Minute)
	if o := handle(t, e, delivery("auth-2", "auth", r.clock.Now())); !o.Applied || o.To.Status != routestate.Disabled || o.To.Source != "" {
		t.Fatalf("after the hold: %+v", o)
	}

	ie := r.incidentEngine(apply)
	putManual(t, r, bedrockEast, routestate.Cooling, r.clock.Now().Add(time.Hour))
	r.clock.Add(time.Second)
	if o := handleIncident(t, ie, bedrockNews("news-1", true, r.clock.Now()))[bedrockEast]; o.Applied {
		t.Fatalf("an incident took over a manual cooldown: %+v", o)
	}
	r.clock.Add(time.Hour + time.Second)
	outs, err := e.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var swept *remediation.Outcome
	for i := range outs {
		if outs[i].Route == bedrockEast {
			swept = &outs[i]
		}
	}
	if swept == nil || !swept.Applied || swept.From.Source != routestate.SourceManual || swept.To.Status != routestate.Active || swept.To.Source != "" {
		t.Fatalf("sweep: %+v", outs)
	}
}

package routestate_test

import (
	"testing"
	"time"

	"github.com/fngate/fngate/core/routestate"
)

// The planner skips by Effective: a cooldown ends by itself, before any sweep.
func TestEffective(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		s    routestate.State
		want routestate.Status
	}{
		{routestate.State{Status: routestate.Cooling, Until: now.Add(time.Second)}, routestate.Cooling},
		{routestate.State{Status: routestate.Cooling, Until: now}, routestate.Active},
		{routestate.State{Status: routestate.Cooling}, routestate.Active},
		{routestate.State{Status: routestate.Disabled}, routestate.Disabled},
		{routestate.State{Status: routestate.Disabled, Until: now.Add(-time.Hour)}, routestate.Disabled},
		{routestate.State{}, routestate.Active},
	} {
		if got := c.s.Effective(now); got != c.want {
			t.Errorf("%+v at now = %s, want %s", c.s, got, c.want)
		}
	}
}

func TestNewActionIDSortsByTimeAndIsStable(t *testing.T) {
	t1 := time.Date(2026, 11, 29, 12, 0, 4, 0, time.FixedZone("CET", 3600))
	a := routestate.NewActionID(t1, "eb:1", "a/b")
	if a != routestate.NewActionID(t1, "eb:1", "a/b") {
		t.Fatal("the same inputs gave different ids")
	}
	if a == routestate.NewActionID(t1, "eb:2", "a/b") {
		t.Fatal("different events gave the same id")
	}
	if a[:17] != "20261129T110004Z-" || len(a) != 27 {
		t.Fatalf("id %q: want UTC time first, then 10 hex digits", a)
	}
	if later := routestate.NewActionID(t1.Add(time.Second), "eb:0"); later < a {
		t.Fatalf("%s sorts before %s", later, a)
	}
}

package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func routeByID(t *testing.T, body map[string]any, id string) map[string]any {
	t.Helper()
	for _, d := range body["data"].([]any) {
		if r := d.(map[string]any); r["id"] == id {
			return r
		}
	}
	t.Fatalf("no route %s in %v", id, body)
	return nil
}

func TestRoutesShowStateAndRecords(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	// Remediation cooled m/echo; a record remains of a route the config no longer has.
	eng := remediation.New(f.routes, remediation.Options{Config: remediation.Config{Mode: remediation.Apply}, Now: func() time.Time { return f.now }, Logger: quiet})
	for i := range 5 {
		d := remediation.Delivery{ID: "ev" + string(rune('a'+i)), Record: remediation.Record{Time: f.now, Route: "m/echo", ErrorClass: "overloaded", Status: 529}}
		if _, err := eng.Handle(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.routes.Put(ctx, routestate.State{Route: "gone/model", Status: routestate.Disabled, Reason: "credentials"}, nil); err != nil {
		t.Fatal(err)
	}
	code, body, _ := f.do(http.MethodGet, "/admin/v1/routes", viewerSecret, nil)
	if code != http.StatusOK {
		t.Fatalf("%d %v", code, body)
	}
	echo := routeByID(t, body, "m/echo")
	if echo["status"] != "cooled" || echo["source"] != "remediation" || echo["model"] != "team/chat" || echo["upstream_model"] != "echo" || echo["until"] == nil {
		t.Fatalf("m/echo: %v", echo)
	}
	rem := echo["remediations"].([]any)
	if len(rem) != 1 || rem[0].(map[string]any)["action"] != "cool" || rem[0].(map[string]any)["before"].(map[string]any)["status"] != "active" {
		t.Fatalf("m/echo remediations: %v", rem)
	}
	if other := routeByID(t, body, "m/other"); other["status"] != "active" || other["source"] != "" || len(other["remediations"].([]any)) != 0 {
		t.Fatalf("m/other: %v", other)
	}
	if gone := routeByID(t, body, "gone/model"); gone["status"] != "disabled" || gone["in_config"] != false {
		t.Fatalf("gone/model: %v", gone)
	}
}

// TestManualCoolAndRestore: by hand, marked manual, snapshotted, audited, and left alone by
// self-repair while it lasts.
func TestManualCoolAndRestore(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	code, got, _ := f.do(http.MethodPost, "/admin/v1/routes/m%2Fother/cool", adminSecret, map[string]any{"for": "30m", "reason": "provider maintenance"})
	if code != http.StatusOK || got["status"] != "cooled" || got["source"] != "manual" || got["reason"] != "provider maintenance" {
		t.Fatalf("cool: %d %v", code, got)
	}
	st, _ := f.routes.Get(ctx, "m/other")
	if st.Status != routestate.Cooling || st.Source != routestate.SourceManual || !st.Until.Equal(f.now.Add(30*time.Minute)) || st.ActionID == "" {
		t.Fatalf("stored %+v", st)
	}
	if snap, err := f.routes.Snapshot(ctx, st.ActionID); err != nil || snap.Action != "manual_cool" || snap.Before.Status != routestate.Active {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
	page, _ := f.keys.Audit(ctx, keystore.AuditQuery{Target: "m/other"})
	if len(page.Entries) != 1 || page.Entries[0].Action != "route.cool" || page.Entries[0].Actor != "key:ops" {
		t.Fatalf("audit %+v", page.Entries)
	}
	var after map[string]any
	_ = json.Unmarshal(page.Entries[0].After, &after)
	if after["status"] != "cooled" || after["source"] != "manual" {
		t.Fatalf("audit after %s", page.Entries[0].After)
	}

	// Restored by hand with a hold: a burst within the hold does not cool it again.
	f.now = f.now.Add(5 * time.Minute)
	code, got, _ = f.do(http.MethodPost, "/admin/v1/routes/m%2Fother/restore", adminSecret, map[string]any{"for": "20m"})
	if code != http.StatusOK || got["status"] != "active" || got["source"] != "manual" {
		t.Fatalf("restore: %d %v", code, got)
	}
	eng := remediation.New(f.routes, remediation.Options{Config: remediation.Config{Mode: remediation.Apply}, Now: func() time.Time { return f.now }, Logger: quiet})
	burst := func(prefix string) remediation.Outcome {
		var o remediation.Outcome
		for i := range 5 {
			var err error
			o, err = eng.Handle(ctx, remediation.Delivery{ID: prefix + string(rune('a'+i)), Record: remediation.Record{Time: f.now, Route: "m/other", ErrorClass: "overloaded", Status: 529}})
			if err != nil {
				t.Fatal(err)
			}
		}
		return o
	}
	f.now = f.now.Add(time.Minute)
	if o := burst("held"); o.Applied {
		t.Fatalf("self-repair overruled a manual restore: %+v", o)
	}
	if st, _ := f.routes.Get(ctx, "m/other"); st.Status != routestate.Active || st.Source != routestate.SourceManual {
		t.Fatalf("after a burst within the hold: %+v", st)
	}
	// Once the hold has passed, self-repair acts again, and the status is its own.
	f.now = f.now.Add(30 * time.Minute)
	if o := burst("later"); !o.Applied || o.Action != remediation.Cool {
		t.Fatalf("after the hold: %+v", o)
	}
	if st, _ := f.routes.Get(ctx, "m/other"); st.Status != routestate.Cooling || st.Source != "" {
		t.Fatalf("after the hold: %+v", st)
	}
	page, _ = f.keys.Audit(ctx, keystore.AuditQuery{Target: "m/other"})
	if len(page.Entries) != 2 || page.Entries[0].Action != "route.restore" {
		t.Fatalf("audit %+v", page.Entries)
	}
}

func TestCoolUnknownRouteIs404(t *testing.T) {
	f := newFixture(t, "")
	code, got, _ := f.do(http.MethodPost, "/admin/v1/routes/nope%2Fnothing/cool", adminSecret, nil)
	if code != http.StatusNotFound {
		t.Fatalf("%d %v", code, got)
	}
	if st, _ := f.routes.List(context.Background()); len(st) != 0 {
		t.Fatal("a record was written")
	}
}

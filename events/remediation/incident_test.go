package remediation_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
)

// Routes of a gateway on Bedrock in two regions, on Vertex AI, and on Anthropic.
const (
	bedrockEast  = "bedrock-us/us.anthropic.claude-sonnet-4-5-v1:0"
	bedrockEast2 = "bedrock-us/amazon.nova-pro-v1:0"
	bedrockWest  = "bedrock-west/us.anthropic.claude-sonnet-4-5-v1:0"
	vertexEU     = "vertex-eu/gemini-2.5-pro"
)

var inventory = remediation.NewInventory(map[string]remediation.Placement{
	bedrockEast:  {Cloud: "aws", Kind: "bedrock", Region: "us-east-1"},
	bedrockEast2: {Cloud: "aws", Kind: "bedrock", Region: "us-east-1"},
	bedrockWest:  {Cloud: "aws", Kind: "bedrock", Region: "us-west-2"},
	vertexEU:     {Cloud: "gcp", Kind: "vertex", Region: "europe-west4"},
})

const arn = "arn:aws:health:us-east-1::event/BEDROCK/AWS_BEDROCK_OPERATIONAL_ISSUE/AWS_BEDROCK_OPERATIONAL_ISSUE_7D5C3A91E2F4B"

func (r *rig) incidentEngine(cfg remediation.Config) *remediation.Engine {
	return remediation.New(r.store, remediation.Options{
		Config: cfg, Logger: slog.New(slog.NewJSONHandler(r.logs, nil)), Metrics: remediation.NewEMFMetrics(r.metrics),
		Now: r.clock.Now, Inventory: inventory,
	})
}

func bedrockNews(id string, open bool, at time.Time) remediation.IncidentDelivery {
	return remediation.IncidentDelivery{ID: id, Sent: at, Incident: routestate.Incident{
		ID: arn, Cloud: "aws", Services: []string{"BEDROCK"}, Regions: []string{"us-east-1"}, Open: open,
		Title: "AWS_BEDROCK_OPERATIONAL_ISSUE", Link: "https://health.aws.amazon.com/health/home#/account/event-log?eventID=" + arn,
		Updated: at,
	}}
}

func handleIncident(t *testing.T, e *remediation.Engine, d remediation.IncidentDelivery) map[string]remediation.Outcome {
	t.Helper()
	outs, err := e.HandleIncident(context.Background(), d)
	if err != nil {
		t.Fatalf("HandleIncident(%s): %v", d.ID, err)
	}
	byRoute := map[string]remediation.Outcome{}
	for _, o := range outs {
		byRoute[o.Route] = o
	}
	return byRoute
}

func stateOf(t *testing.T, s routestate.Store, route string) routestate.State {
	t.Helper()
	st, err := s.Get(context.Background(), route)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestIncidentCoolsEveryRouteOnItsServiceAndRegion(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.incidentEngine(apply)
	outs := handleIncident(t, e, bedrockNews("eb:open", true, r.clock.Now()))
	if len(outs) != 2 || outs[bedrockEast].Action != remediation.IncidentCool || outs[bedrockEast2].Action != remediation.IncidentCool {
		t.Fatalf("outcomes %+v; want both us-east-1 Bedrock routes cooled, nothing else", outs)
	}
	for _, route := range []string{bedrockEast, bedrockEast2} {
		st := stateOf(t, r.store, route)
		if st.Status != routestate.Cooling || st.Reason != remediation.ReasonProviderIncident || st.Incident != arn ||
			!strings.Contains(st.IncidentLink, "eventID="+arn) || !st.Until.Equal(t0.Add(remediation.DefaultIncidentCooldown)) || st.ActionID == "" {
			t.Fatalf("%s = %+v", route, st)
		}
		if snap, err := r.store.Snapshot(context.Background(), st.ActionID); err != nil || snap.Action != string(remediation.IncidentCool) {
			t.Fatalf("snapshot of %s: %+v, %v", route, snap, err)
		}
	}
	for _, route := range []string{bedrockWest, vertexEU} {
		if st := stateOf(t, r.store, route); st.Version != 0 {
			t.Fatalf("%s is on another region or cloud and was written: %+v", route, st)
		}
	}
	if !strings.Contains(r.metrics.String(), `"Action":"incident_cool","Mode":"apply","RemediationActions":1`) {
		t.Fatalf("no incident_cool metric:\n%s", r.metrics)
	}
	if !strings.Contains(r.logs.String(), `"incident":"`+arn+`"`) {
		t.Fatalf("the decision lines do not name the incident:\n%s", r.logs)
	}

	// The same delivery again changes nothing; an update of the open incident a few minutes
	// later finds the routes already cooling for it.
	again, _ := e.HandleIncident(context.Background(), bedrockNews("eb:open", true, r.clock.Now()))
	if len(again) != 1 || !again[0].Duplicate {
		t.Fatalf("redelivery: %+v", again)
	}
	r.clock.Add(10 * time.Minute)
	if outs := handleIncident(t, e, bedrockNews("eb:update", true, r.clock.Now())); outs[bedrockEast].Action != remediation.None ||
		outs[bedrockEast].Why != "already cooling for this incident" {
		t.Fatalf("early update: %+v", outs)
	}
	// Once half the cooldown has run, an update extends it.
	r.clock.Add(remediation.DefaultIncidentCooldown / 2)
	if outs := handleIncident(t, e, bedrockNews("eb:update2", true, r.clock.Now())); outs[bedrockEast].Action != remediation.IncidentCool ||
		!stateOf(t, r.store, bedrockEast).Until.Equal(r.clock.Now().Add(remediation.DefaultIncidentCooldown)) {
		t.Fatalf("late update: %+v", outs)
	}
}

// Resolution clears what the incident cooled, and never what an operator or another rule set.
func TestResolutionClearsOnlyWhatTheIncidentCooled(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.incidentEngine(apply)
	ctx := context.Background()
	// bedrockEast2 was cooled by a burst before the incident opened.
	if _, err := r.store.Put(ctx, routestate.State{Route: bedrockEast2, Status: routestate.Cooling, Reason: "rate_limited",
		Until: t0.Add(5 * time.Minute), Since: t0}, nil); err != nil {
		t.Fatal(err)
	}
	r.clock.Add(time.Second)
	outs := handleIncident(t, e, bedrockNews("eb:open", true, r.clock.Now()))
	if outs[bedrockEast].Action != remediation.IncidentCool || outs[bedrockEast2].Action != remediation.None {
		t.Fatalf("open: %+v", outs)
	}
	// A second incident covering bedrockEast too (a broader one, all of Bedrock, global).
	r.clock.Add(time.Minute)
	global := remediation.IncidentDelivery{ID: "eb:global", Sent: r.clock.Now(), Incident: routestate.Incident{
		ID: "arn:aws:health:global::event/BEDROCK/AWS_BEDROCK_OPERATIONAL_ISSUE/GLOBAL_1", Cloud: "aws",
		Services: []string{"BEDROCK"}, Regions: []string{"global"}, Open: true, Updated: r.clock.Now(),
	}}
	if outs := handleIncident(t, e, global); outs[bedrockWest].Action != remediation.IncidentCool || outs[bedrockEast].Action != remediation.None {
		t.Fatalf("global incident: %+v", outs)
	}

	r.clock.Add(time.Hour)
	outs = handleIncident(t, e, bedrockNews("eb:closed", false, r.clock.Now()))
	// bedrockEast: handed to the global incident, still open on it.
	if o := outs[bedrockEast]; o.Action != remediation.IncidentCool || !strings.Contains(o.Why, "GLOBAL_1 is still open") {
		t.Fatalf("route also under another open incident: %+v", o)
	}
	if st := stateOf(t, r.store, bedrockEast); st.Incident != global.Incident.ID || st.Status != routestate.Cooling {
		t.Fatalf("bedrockEast after the first resolution: %+v", st)
	}
	// bedrockEast2: the burst's cooldown is left alone (ended by now, the sweep's to rewrite).
	if o := outs[bedrockEast2]; o.Action != remediation.None || !strings.HasPrefix(o.Why, "not cooled by this incident") {
		t.Fatalf("route a burst cooled: %+v", o)
	}
	if st := stateOf(t, r.store, bedrockEast2); st.Reason != "rate_limited" || st.Version != 1 {
		t.Fatalf("bedrockEast2 was written: %+v", st)
	}

	// An operator clears bedrockWest; the global incident's resolution leaves it alone and
	// re-enables bedrockEast, which it now holds.
	if _, err := e.Clear(ctx, bedrockWest, "checked by hand"); err != nil {
		t.Fatal(err)
	}
	cleared := stateOf(t, r.store, bedrockWest)
	r.clock.Add(time.Minute)
	closed := global
	closed.ID, closed.Sent, closed.Incident.Open, closed.Incident.Updated = "eb:global-closed", r.clock.Now(), false, r.clock.Now()
	outs = handleIncident(t, e, closed)
	if o := outs[bedrockEast]; o.Action != remediation.IncidentEnable || o.To.Status != routestate.Active {
		t.Fatalf("resolution of the last incident on the route: %+v", o)
	}
	if st := stateOf(t, r.store, bedrockEast); st.Status != routestate.Active || st.Reason != "" || st.Incident != "" || st.IncidentLink != "" {
		t.Fatalf("bedrockEast after both resolutions: %+v", st)
	}
	if outs[bedrockWest].Action != remediation.None || stateOf(t, r.store, bedrockWest) != cleared {
		t.Fatalf("the operator's clear was overridden: %+v", outs[bedrockWest])
	}
	if !strings.Contains(r.metrics.String(), `"Action":"incident_enable","Mode":"apply"`) {
		t.Fatalf("no incident_enable metric:\n%s", r.metrics)
	}
}

// News arrives out of order and late: older news of an incident changes nothing, a stale
// opening changes nothing, a late resolution still resolves.
func TestIncidentNewsOrderAndAge(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.incidentEngine(apply)
	handleIncident(t, e, bedrockNews("eb:open", true, r.clock.Now()))
	closedAt := r.clock.Now().Add(30 * time.Minute)
	r.clock.Set(closedAt)
	handleIncident(t, e, bedrockNews("eb:closed", false, closedAt))
	// An update sent before the resolution, delivered after it.
	late := bedrockNews("eb:late-update", true, closedAt.Add(-10*time.Minute))
	outs := handleIncident(t, e, late)
	if o := outs[""]; len(outs) != 1 || o.Action != remediation.None || o.Why != "older than the news already recorded for this incident" {
		t.Fatalf("older news: %+v", outs)
	}
	if st := stateOf(t, r.store, bedrockEast); st.Status != routestate.Active {
		t.Fatalf("older news re-cooled the route: %+v", st)
	}
	// An opening older than the max event age (a redrive from the dead-letter queue).
	stale := bedrockNews("eb:stale", true, r.clock.Now().Add(-remediation.DefaultMaxEventAge-time.Minute))
	stale.Incident.ID = arn + "-other"
	if outs := handleIncident(t, e, stale); !strings.HasPrefix(outs[""].Why, "stale:") {
		t.Fatalf("stale opening: %+v", outs)
	}
	if st := stateOf(t, r.store, bedrockEast); st.Status != routestate.Active {
		t.Fatalf("a stale opening cooled the route: %+v", st)
	}
}

// A dry run plans incident cools without writing routes, and correlates bursts with the
// incidents it heard of: a burst on a route under an open incident is counted as the
// provider's, one on a route with no incident is flagged as the deployment's own.
func TestBurstCorrelationInDryRun(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.incidentEngine(remediation.Config{Mode: remediation.DryRun})
	outs := handleIncident(t, e, bedrockNews("eb:open", true, r.clock.Now()))
	if o := outs[bedrockEast]; o.Action != remediation.IncidentCool || o.Applied {
		t.Fatalf("dry-run incident: %+v", o)
	}
	if st := stateOf(t, r.store, bedrockEast); st.Version != 0 {
		t.Fatalf("dry run wrote the route: %+v", st)
	}
	burstOn := func(route, prefix string) remediation.Outcome {
		var o remediation.Outcome
		for i := range remediation.DefaultBurstErrors {
			d := delivery(fmt.Sprint(prefix, i), "unavailable", r.clock.Now())
			d.Record.Route, d.Record.Provider = route, "bedrock"
			o = handle(t, e, d)
			r.clock.Add(time.Second)
		}
		return o
	}
	o := burstOn(bedrockEast, "eb:e")
	if o.Action != remediation.Cool || o.Correlation != remediation.CorrelatedIncident || o.Incident != arn ||
		!strings.Contains(o.Why, "correlated with the open provider incident "+arn) {
		t.Fatalf("burst under an open incident: %+v", o)
	}
	o = burstOn(bedrockWest, "eb:w")
	if o.Correlation != remediation.CorrelatedNone || o.Incident != "" ||
		!strings.Contains(o.Why, "no open provider incident for bedrock in us-west-2: likelier a configuration or quota problem") {
		t.Fatalf("burst with no incident: %+v", o)
	}
	for _, want := range []string{
		`"Correlation":"provider_incident","Mode":"dry_run","RemediationBursts":1`,
		`"Correlation":"none","Mode":"dry_run","RemediationBursts":1`,
	} {
		if !strings.Contains(r.metrics.String(), want) {
			t.Fatalf("no %s in the metrics:\n%s", want, r.metrics)
		}
	}
	if !strings.Contains(r.logs.String(), `"correlation":"provider_incident","incident":"`+arn+`"`) {
		t.Fatalf("the correlated burst's decision line does not say so:\n%s", r.logs)
	}
}

// The sweep re-enables a lapsed incident cooldown and drops the incident from the record.
func TestSweepEndsALapsedIncidentCooldown(t *testing.T) {
	r := newRig(routestate.NewMemory())
	e := r.incidentEngine(apply)
	handleIncident(t, e, bedrockNews("eb:open", true, r.clock.Now()))
	r.clock.Add(remediation.DefaultIncidentCooldown)
	if _, err := e.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := stateOf(t, r.store, bedrockEast); st.Status != routestate.Active || st.Incident != "" || st.Reason != "" {
		t.Fatalf("after the sweep: %+v", st)
	}
}

func TestParseInventory(t *testing.T) {
	env := map[string]string{"AWS_REGION": "eu-west-1"}
	inv, err := remediation.ParseInventory(config.DefaultYAML(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	// The embedded default: Bedrock at ${AWS_REGION:-us-east-1}, Vertex AI at
	// ${GOOGLE_CLOUD_LOCATION:-us-central1}, chat and embedding routes alike; every other kind
	// has no health feed.
	bedrock := remediation.Placement{Cloud: "aws", Kind: "bedrock", Region: "eu-west-1"}
	vertex := remediation.Placement{Cloud: "gcp", Kind: "vertex", Region: "us-central1"}
	want := map[string]remediation.Placement{
		"bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0": bedrock,
		"bedrock/amazon.titan-embed-text-v2:0":                 bedrock,
		"bedrock/cohere.embed-english-v3":                      bedrock,
		"vertex/gemini-2.5-flash":                              vertex,
		"vertex/claude-sonnet-4-5@20250929":                    vertex,
		"vertex/gemini-embedding-001":                          vertex,
		"vertex/text-embedding-005":                            vertex,
	}
	for route, want := range want {
		if got, ok := inv.Place(route); !ok || got != want {
			t.Errorf("%s placed %+v (%v), want %+v", route, got, ok, want)
		}
	}
	if _, ok := inv.Place("mock/echo"); ok || inv.Len() != len(want) {
		t.Errorf("%d routes placed; want the %d Bedrock and Vertex AI routes only", inv.Len(), len(want))
	}

	inv, err = remediation.ParseInventory([]byte(`
connections:
  br: {kind: bedrock, region: "${BEDROCK_REGION}"}
  vx: {kind: vertex, location: europe-west4}
models:
  a: {routes: [{connection: br, model: m1}, {connection: vx, model: gemini-2.5-pro}]}
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(inv.Unplaced) != "[br/m1: ${BEDROCK_REGION} is not set]" {
		t.Errorf("unplaced = %q", inv.Unplaced)
	}
	in := routestate.Incident{Cloud: "gcp", Services: []string{"Vertex Gemini API"}, Regions: []string{"europe-west4"}}
	if got := inv.On(in); fmt.Sprint(got) != "[vx/gemini-2.5-pro]" {
		t.Errorf("a Vertex Gemini API incident in europe-west4 is on %v", got)
	}
	in.Services = []string{"Cloud Run"}
	if got := inv.On(in); len(got) != 0 {
		t.Errorf("a Cloud Run incident is on %v", got)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/golden"
)

// TestDecodeGolden decodes each payload the function is wired to receive and compares the
// deliveries with the reviewed .want.json beside it.
func TestDecodeGolden(t *testing.T) {
	for _, name := range []string{
		"eventbridge_provider_error",
		"cloudwatch_logs_subscription",
		"cloudwatch_logs_control",
		"scheduled_event",
		"scheduler_input",
		// AWS Health events written from the schema and samples in "Reference: AWS Health
		// events Amazon EventBridge schema" (AWS Health User Guide).
		"aws_health_bedrock_open",
		"aws_health_bedrock_closed",
		"aws_health_scheduled_change",
	} {
		t.Run(name, func(t *testing.T) {
			in, err := decode(golden.Read(t, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(in, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".want.json"), append(got, '\n'))
		})
	}
}

// The committed base64 payloads must be exactly the readable .inner.json beside them.
func TestLogsPayloadsMatchTheirReadableSource(t *testing.T) {
	for _, name := range []string{"cloudwatch_logs_subscription", "cloudwatch_logs_control"} {
		var outer events.CloudwatchLogsEvent
		if err := json.Unmarshal(golden.Read(t, name+".json"), &outer); err != nil {
			t.Fatal(err)
		}
		got, err := outer.AWSLogs.Parse()
		if err != nil {
			t.Fatal(err)
		}
		var want events.CloudwatchLogsData
		if err := json.Unmarshal(golden.Read(t, name+".inner.json"), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the payload decodes to\n%+v\nnot\n%+v", name, got, want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, payload := range map[string]string{
		"not json":             `awslogs`,
		"unknown event":        `{"detail-type":"EC2 Instance State-change Notification","source":"aws.ec2","id":"1","detail":{}}`,
		"provider error no id": `{"detail-type":"ProviderError","detail":{"route":"a/b","error_class":"auth"}}`,
		"detail without route": `{"detail-type":"ProviderError","id":"1","detail":{"error_class":"auth"}}`,
		"awslogs not base64":   `{"awslogs":{"data":"%%%"}}`,
		"awslogs not gzip":     `{"awslogs":{"data":"aGVsbG8="}}`,
	} {
		if _, err := decode([]byte(payload)); !errors.Is(err, remediation.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func testHandler(t *testing.T, store routestate.Store, now time.Time) (*handler, *bytes.Buffer) {
	t.Helper()
	return inventoryHandler(t, store, func() time.Time { return now }, nil)
}

func inventoryHandler(t *testing.T, store routestate.Store, now func() time.Time, inv *remediation.Inventory) (*handler, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	e := remediation.New(store, remediation.Options{
		Config:    remediation.Config{Mode: remediation.Apply},
		Logger:    log,
		Now:       now,
		Inventory: inv,
	})
	return &handler{engine: e, log: log}, &logs
}

// AWS Health news for Bedrock in us-east-1, as EventBridge delivers it: the opening cools the
// gateway's routes there (not those elsewhere), a redelivery is a duplicate, the resolution
// re-enables them and leaves a route a burst cooled as it is.
func TestInvokeAWSHealth(t *testing.T) {
	const east, west, burst = "bedrock-us/us.anthropic.claude-sonnet-4-5-v1:0", "bedrock-west/us.anthropic.claude-sonnet-4-5-v1:0", "bedrock-us/amazon.nova-pro-v1:0"
	inv, err := remediation.ParseInventory([]byte(`
connections:
  bedrock-us: {kind: bedrock, region: us-east-1}
  bedrock-west: {kind: bedrock, region: us-west-2}
models:
  claude: {routes: [{connection: bedrock-us, model: us.anthropic.claude-sonnet-4-5-v1:0}, {connection: bedrock-west, model: us.anthropic.claude-sonnet-4-5-v1:0}]}
  nova: {routes: [{connection: bedrock-us, model: amazon.nova-pro-v1:0}]}
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	store := routestate.NewMemory()
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 11, 58, 41, 0, time.UTC)
	if _, err := store.Put(ctx, routestate.State{Route: burst, Status: routestate.Cooling, Reason: "overloaded", Until: now.Add(5 * time.Minute), Since: now.Add(-time.Minute)}, nil); err != nil {
		t.Fatal(err)
	}
	h, logs := inventoryHandler(t, store, func() time.Time { return now }, inv)

	s, err := h.Invoke(ctx, golden.Read(t, "aws_health_bedrock_open.json"))
	if err != nil || s.Kind != "health" || s.Deliveries != 1 || s.Actions != 1 || s.Applied != 1 {
		t.Fatalf("opening: %+v, %v", s, err)
	}
	st, _ := store.Get(ctx, east)
	if st.Status != routestate.Cooling || st.Reason != remediation.ReasonProviderIncident ||
		st.Incident != "arn:aws:health:us-east-1::event/BEDROCK/AWS_BEDROCK_OPERATIONAL_ISSUE/AWS_BEDROCK_OPERATIONAL_ISSUE_7D5C3A91E2F4B" ||
		!strings.HasPrefix(st.IncidentLink, "https://health.aws.amazon.com/health/home#/account/event-log?eventID=arn:aws:health:us-east-1::event/BEDROCK/") {
		t.Fatalf("%s after the opening: %+v", east, st)
	}
	if st, _ := store.Get(ctx, west); st.Version != 0 {
		t.Fatalf("a us-west-2 route was touched by a us-east-1 incident: %+v", st)
	}
	if s, err := h.Invoke(ctx, golden.Read(t, "aws_health_bedrock_open.json")); err != nil || s.Duplicates != 1 || s.Actions != 0 {
		t.Fatalf("redelivered opening: %+v, %v", s, err)
	}
	if s, err := h.Invoke(ctx, golden.Read(t, "aws_health_scheduled_change.json")); err != nil || s.Skipped != 1 || s.Deliveries != 0 {
		t.Fatalf("a scheduled change is not an incident: %+v, %v", s, err)
	}

	now = time.Date(2026, 11, 29, 13, 41, 8, 0, time.UTC)
	if s, err := h.Invoke(ctx, golden.Read(t, "aws_health_bedrock_closed.json")); err != nil || s.Applied != 1 {
		t.Fatalf("resolution: %+v, %v", s, err)
	}
	if st, _ := store.Get(ctx, east); st.Status != routestate.Active || st.Incident != "" {
		t.Fatalf("%s after the resolution: %+v", east, st)
	}
	if st, _ := store.Get(ctx, burst); st.Reason != "overloaded" || st.Version != 1 {
		t.Fatalf("the resolution touched a route a burst cooled: %+v", st)
	}
	if !strings.Contains(logs.String(), `"action":"incident_enable"`) {
		t.Fatalf("no incident_enable decision line:\n%s", logs)
	}
}

func TestInvokeEventBridgeOnceOnly(t *testing.T) {
	store := routestate.NewMemory()
	h, _ := testHandler(t, store, time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC))
	payload := golden.Read(t, "eventbridge_provider_error.json")
	s, err := h.Invoke(context.Background(), payload)
	if err != nil || s.Kind != "eventbridge" || s.Deliveries != 1 || s.Duplicates != 0 {
		t.Fatalf("first invoke: %+v, %v", s, err)
	}
	s, err = h.Invoke(context.Background(), payload)
	if err != nil || s.Duplicates != 1 {
		t.Fatalf("redelivered event: %+v, %v; want a duplicate", s, err)
	}
	w, _ := store.Window(context.Background(), "claude/claude-sonnet-4-5")
	if len(w.Errors) != 1 {
		t.Fatalf("the 429 was counted %d times, want once", len(w.Errors))
	}
}

func TestInvokeCloudWatchLogs(t *testing.T) {
	store := routestate.NewMemory()
	h, logs := testHandler(t, store, time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC))
	s, err := h.Invoke(context.Background(), golden.Read(t, "cloudwatch_logs_subscription.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := summary{Kind: "cloudwatch_logs", Deliveries: 2, Actions: 1, Applied: 1, Skipped: 2, Invalid: 1}
	if s != want {
		t.Fatalf("summary %+v, want %+v", s, want)
	}
	st, _ := store.Get(context.Background(), "openai/gpt-4.1-mini")
	if st.Status != routestate.Disabled || st.Reason != remediation.ReasonCredentials || st.EventID != "cwl:38621504123478264381920374628374619283746123456789015" {
		t.Fatalf("auth route: %+v", st)
	}
	if !strings.Contains(logs.String(), `"msg":"remediation input rejected"`) {
		t.Fatalf("the unreadable line was not logged:\n%s", logs)
	}
	// The control message CloudWatch sends when the subscription is created is a no-op.
	if s, err := h.Invoke(context.Background(), golden.Read(t, "cloudwatch_logs_control.json")); err != nil || s.Kind != "control" || s.Deliveries != 0 {
		t.Fatalf("control message: %+v, %v", s, err)
	}
}

func TestInvokeSweep(t *testing.T) {
	store := routestate.NewMemory()
	now := time.Date(2026, 11, 29, 12, 5, 0, 0, time.UTC)
	if _, err := store.Put(context.Background(), routestate.State{Route: "a/b", Status: routestate.Cooling, Until: now.Add(-time.Second)}, nil); err != nil {
		t.Fatal(err)
	}
	h, _ := testHandler(t, store, now)
	for _, name := range []string{"scheduled_event.json", "scheduler_input.json"} {
		if _, err := h.Invoke(context.Background(), golden.Read(t, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if st, _ := store.Get(context.Background(), "a/b"); st.Status != routestate.Active || st.Version != 2 {
		t.Fatalf("after the sweeps: %+v; want active, written once", st)
	}
}

func TestInvokeAcknowledgesWhatNoRetryCanFix(t *testing.T) {
	h, logs := testHandler(t, routestate.NewMemory(), time.Now())
	s, err := h.Invoke(context.Background(), json.RawMessage(`{"detail-type":"Something Else"}`))
	if err != nil || s.Invalid != 1 {
		t.Fatalf("unknown payload: %+v, %v; want acknowledged and counted", s, err)
	}
	if !strings.Contains(logs.String(), `"payload":"{\"detail-type\":\"Something Else\"}"`) {
		t.Fatalf("the payload is not in the rejection log:\n%s", logs)
	}
}

type brokenStore struct{ routestate.Store }

func (brokenStore) Claim(context.Context, routestate.Claim) (bool, error) {
	return false, errors.New("RequestLimitExceeded")
}

func TestInvokeReturnsStoreFailuresForRetry(t *testing.T) {
	h, _ := testHandler(t, brokenStore{routestate.NewMemory()}, time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC))
	if _, err := h.Invoke(context.Background(), golden.Read(t, "eventbridge_provider_error.json")); err == nil {
		t.Fatal("a store failure was swallowed; Lambda would not retry")
	}
}

func TestSetup(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	log := slog.New(slog.DiscardHandler)
	if _, err := setup(context.Background(), log, io.Discard, env(nil)); err == nil || !strings.Contains(err.Error(), EnvTable) {
		t.Fatalf("no table: %v", err)
	}
	if _, err := setup(context.Background(), log, io.Discard, env(map[string]string{EnvTable: "t", remediation.EnvMode: "yes"})); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	if _, err := setup(context.Background(), log, io.Discard, env(map[string]string{EnvTable: "fngate-routestate"})); err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("started without credentials: %v", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	h, err := setup(context.Background(), log, io.Discard, env(map[string]string{EnvTable: "fngate-routestate"}))
	if err != nil {
		t.Fatal(err)
	}
	if h.engine.Mode() != remediation.DryRun {
		t.Fatalf("the function starts in %s without REMEDIATION_MODE; want dry_run", h.engine.Mode())
	}
}

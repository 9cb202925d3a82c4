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

	"github.com/fngate/fngate/core/golden"
	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/remediation"
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
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	e := remediation.New(store, remediation.Options{
		Config: remediation.Config{Mode: remediation.Apply},
		Logger: log,
		Now:    func() time.Time { return now },
	})
	return &handler{engine: e, log: log}, &logs
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

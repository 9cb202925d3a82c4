package eventarc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/events/eventarc"
	"github.com/fngate/fngate/events/remediation"
	"github.com/fngate/fngate/internal/golden"
)

func loadEvent(t *testing.T, name string) event.Event {
	t.Helper()
	var e event.Event
	if err := json.Unmarshal(golden.Read(t, name), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDecodeGolden(t *testing.T) {
	for _, name := range []string{"message_published", "sweep",
		// Service Health log entries written from "Query, export, and store Service Health
		// logs" (its sample entry) and the google.cloud.servicehealth.logging.v1 EventLog
		// reference, wrapped as Eventarc delivers a Pub/Sub message.
		"service_health_vertex_open", "service_health_vertex_closed",
	} {
		t.Run(name, func(t *testing.T) {
			in, err := eventarc.Decode(loadEvent(t, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(in, "", "  ")
			golden.Check(t, filepath.Join("testdata", name+".want.json"), append(got, '\n'))
		})
	}
}

// The committed base64 message data must be exactly the readable LogEntry beside it.
func TestMessageDataMatchesItsReadableSource(t *testing.T) {
	for event, inner := range map[string]string{
		"message_published.json":            "log_entry.inner.json",
		"service_health_vertex_open.json":   "service_health_vertex_open.inner.json",
		"service_health_vertex_closed.json": "service_health_vertex_closed.inner.json",
	} {
		var data struct {
			Message struct {
				Data []byte `json:"data"`
			} `json:"message"`
		}
		if err := json.Unmarshal(loadEvent(t, event).Data(), &data); err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := json.Unmarshal(data.Message.Data, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(golden.Read(t, inner), &want); err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Fatalf("%s message data\n%s\nis not %s\n%s", event, g, inner, w)
		}
	}
}

// Eventarc posts in binary content mode: ce-* headers and the data as the body. The
// cloudevents SDK (what the functions framework uses) must turn that into the same event.
func TestBinaryModeRequest(t *testing.T) {
	e := loadEvent(t, "message_published.json")
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(e.Data()))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Ce-Id", e.ID())
	req.Header.Set("Ce-Source", e.Source())
	req.Header.Set("Ce-Type", e.Type())
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Time", e.Time().Format(time.RFC3339Nano))
	got, err := cehttp.NewEventFromHTTPRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	in, err := eventarc.Decode(*got)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := eventarc.Decode(e)
	if in.Delivery == nil || in.Delivery.ID != want.Delivery.ID || in.Delivery.Record != want.Delivery.Record {
		t.Fatalf("binary mode decoded to %+v, structured to %+v", in.Delivery, want.Delivery)
	}
}

func TestDecodeRejects(t *testing.T) {
	wrongType := loadEvent(t, "message_published.json")
	wrongType.SetType("google.cloud.storage.object.v1.finalized")
	notEntry := loadEvent(t, "message_published.json")
	_ = notEntry.SetData("application/json", map[string]any{"message": map[string]any{"data": []byte("[1,2]")}})
	otherLine := loadEvent(t, "message_published.json")
	_ = otherLine.SetData("application/json", map[string]any{"message": map[string]any{
		"data": []byte(`{"insertId":"x","jsonPayload":{"message":"request","route":"a/b"}}`)}})
	for name, c := range map[string]struct {
		e    event.Event
		want error
	}{
		"not messagePublished": {wrongType, remediation.ErrInvalid},
		"not a LogEntry":       {notEntry, remediation.ErrInvalid},
		"not a provider error": {otherLine, remediation.ErrNotProviderError},
	} {
		if _, err := eventarc.Decode(c.e); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}

func newHandler(store routestate.Store, now time.Time) (*eventarc.Handler, *bytes.Buffer) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	e := remediation.New(store, remediation.Options{
		Config: remediation.Config{Mode: remediation.Apply},
		Logger: log,
		Now:    func() time.Time { return now },
	})
	return eventarc.NewHandler(e, log), &logs
}

func TestHandleBurstRedeliveryAndSweep(t *testing.T) {
	store := routestate.NewMemory()
	now := time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC)
	h, _ := newHandler(store, now)
	ctx := context.Background()
	base := loadEvent(t, "message_published.json")
	for i := range remediation.DefaultBurstErrors {
		e := base.Clone()
		e.SetID(fmt.Sprint("1187396027509341", i))
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
		// Pub/Sub redelivers the same message id: counted once.
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	const route = "vertex-eu/gemini-2.5-pro"
	st, _ := store.Get(ctx, route)
	if st.Status != routestate.Cooling || st.Reason != "rate_limited" {
		t.Fatalf("after %d distinct messages, each delivered twice: %+v", remediation.DefaultBurstErrors, st)
	}

	later, _ := newHandler(store, st.Until.Add(time.Second))
	if err := later.Handle(ctx, loadEvent(t, "sweep.json")); err != nil {
		t.Fatal(err)
	}
	if st, _ := store.Get(ctx, route); st.Status != routestate.Active {
		t.Fatalf("after the sweep: %+v", st)
	}
}

func TestHandleAcknowledgesWhatNoRetryCanFix(t *testing.T) {
	h, logs := newHandler(routestate.NewMemory(), time.Now())
	e := loadEvent(t, "message_published.json")
	e.SetType("google.cloud.storage.object.v1.finalized")
	if err := h.Handle(context.Background(), e); err != nil {
		t.Fatalf("an event no retry can fix returned %v (Pub/Sub would redeliver it forever)", err)
	}
	if !strings.Contains(logs.String(), "remediation input rejected") {
		t.Fatalf("not logged:\n%s", logs)
	}
}

type brokenStore struct{ routestate.Store }

func (brokenStore) Claim(context.Context, routestate.Claim) (bool, error) {
	return false, errors.New("rpc error: code = Unavailable")
}

func TestHandleReturnsStoreFailuresForRedelivery(t *testing.T) {
	h, _ := newHandler(brokenStore{routestate.NewMemory()}, time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC))
	if err := h.Handle(context.Background(), loadEvent(t, "message_published.json")); err == nil {
		t.Fatal("a store failure was swallowed; Pub/Sub would not redeliver")
	}
}

// FromEnv needs no reachable Firestore to start (the client dials lazily); it must start in
// dry-run unless told otherwise.
func TestFromEnvStartsInDryRun(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:1")
	env := map[string]string{eventarc.EnvProject: "acme-llm"}
	var logs bytes.Buffer
	h, closeFn, err := eventarc.FromEnv(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if h == nil || !strings.Contains(logs.String(), `"msg":"remediation function ready","mode":"dry_run"`) {
		t.Fatalf("handler %v, startup log:\n%s", h, logs.String())
	}
	env[remediation.EnvMode] = "now"
	if _, _, err := eventarc.FromEnv(context.Background(), slog.New(slog.DiscardHandler), func(k string) string { return env[k] }); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}

// Service Health news for Vertex AI in europe-west4, as the log sink and Eventarc deliver it:
// the opening cools the gateway's routes there, the resolution re-enables them; an incident
// about another product changes nothing.
func TestHandleServiceHealth(t *testing.T) {
	inv, err := remediation.ParseInventory([]byte(`
connections:
  vertex-eu: {kind: vertex, project: acme-llm, location: europe-west4}
  vertex-us: {kind: vertex, project: acme-llm, location: us-central1}
models:
  gemini: {routes: [{connection: vertex-eu, model: gemini-2.5-pro}, {connection: vertex-us, model: gemini-2.5-pro}]}
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	store := routestate.NewMemory()
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 11, 58, 13, 0, time.UTC)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	h := eventarc.NewHandler(remediation.New(store, remediation.Options{
		Config: remediation.Config{Mode: remediation.Apply}, Logger: log, Now: func() time.Time { return now }, Inventory: inv,
	}), log)

	if err := h.Handle(ctx, loadEvent(t, "service_health_vertex_open.json")); err != nil {
		t.Fatal(err)
	}
	const id = "projects/481516234200/locations/global/events/Rq2XvT9kLm4sNw7yZb1D-A"
	st, _ := store.Get(ctx, "vertex-eu/gemini-2.5-pro")
	if st.Status != routestate.Cooling || st.Reason != remediation.ReasonProviderIncident || st.Incident != id ||
		st.IncidentLink != "https://console.cloud.google.com/servicehealth?project=481516234200" {
		t.Fatalf("europe-west4 route after the opening: %+v", st)
	}
	if st, _ := store.Get(ctx, "vertex-us/gemini-2.5-pro"); st.Version != 0 {
		t.Fatalf("a us-central1 route was touched by a europe-west4 incident: %+v", st)
	}
	// Another product's incident in the same location is not Vertex AI's.
	other := loadEvent(t, "service_health_vertex_open.json")
	var mp map[string]any
	_ = json.Unmarshal(other.Data(), &mp)
	entry := golden.Read(t, "service_health_vertex_open.inner.json")
	entry = bytes.ReplaceAll(entry, []byte("Vertex Gemini API"), []byte("Cloud Run"))
	entry = bytes.ReplaceAll(entry, []byte("Rq2XvT9kLm4sNw7yZb1D-A"), []byte("Other-Event"))
	mp["message"].(map[string]any)["data"] = entry
	_ = other.SetData("application/json", mp)
	other.SetID("13000560100000000")
	if err := h.Handle(ctx, other); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"why":"no route of this gateway is on Cloud Run in europe-west4"`) {
		t.Fatalf("a Cloud Run incident should touch nothing:\n%s", logs.String())
	}

	now = time.Date(2026, 11, 29, 13, 12, 46, 0, time.UTC)
	if err := h.Handle(ctx, loadEvent(t, "service_health_vertex_closed.json")); err != nil {
		t.Fatal(err)
	}
	if st, _ := store.Get(ctx, "vertex-eu/gemini-2.5-pro"); st.Status != routestate.Active || st.Incident != "" {
		t.Fatalf("after the resolution: %+v", st)
	}
	in, _ := store.Incident(ctx, id)
	if in.Open || in.Version != 2 {
		t.Fatalf("incident record after the resolution: %+v", in)
	}
}

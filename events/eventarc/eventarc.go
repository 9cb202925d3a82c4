// Package eventarc is the GCP remediation function: a CloudEvent function (functions-framework)
// triggered through Eventarc by Pub/Sub messagePublished events. A log sink publishes each of
// the gateway's provider_error log entries to the topic; Cloud Scheduler publishes
// {"fngate":"sweep"} to it on a schedule. See docs/remediation.md.
package eventarc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/fngate/fngate/events/remediation"
)

// EventType is the CloudEvent type Eventarc delivers for a Pub/Sub message.
const EventType = "google.cloud.pubsub.topic.v1.messagePublished"

// messagePublished is the CloudEvent data of a Pub/Sub message.
type messagePublished struct {
	Message struct {
		Data        []byte            `json:"data"` // base64 in JSON, decoded by encoding/json
		Attributes  map[string]string `json:"attributes"`
		MessageID   string            `json:"messageId"`
		PublishTime time.Time         `json:"publishTime"`
	} `json:"message"`
	Subscription string `json:"subscription"`
}

// logEntry is the part of a Cloud Logging LogEntry the handler reads.
type logEntry struct {
	LogName     string          `json:"logName"`
	InsertID    string          `json:"insertId"`
	Timestamp   time.Time       `json:"timestamp"`
	Severity    string          `json:"severity"`
	JSONPayload json.RawMessage `json:"jsonPayload"`
	TextPayload string          `json:"textPayload"`
	Resource    struct {
		Type   string            `json:"type"`
		Labels map[string]string `json:"labels"`
	} `json:"resource"`
}

// Input is one CloudEvent, decoded: a sweep, a provider error, or Service Health news.
type Input struct {
	Sweep    bool
	Delivery *remediation.Delivery
	Incident *remediation.IncidentDelivery `json:",omitempty"`
	// Skipped says why a well-formed event needs nothing done (Service Health news that is
	// not an incident).
	Skipped string `json:",omitempty"`
}

// Decode reads a messagePublished event: a sweep request, a LogEntry whose payload is a
// gateway provider_error line, or a Service Health log entry (servicehealth.go). Cloud
// Logging lifts the line's time out of the payload into the entry's timestamp, so that is
// where the record's time comes from.
func Decode(e event.Event) (Input, error) {
	if e.Type() != EventType {
		return Input{}, fmt.Errorf("%w: event type %q, want %s", remediation.ErrInvalid, e.Type(), EventType)
	}
	var mp messagePublished
	if err := json.Unmarshal(e.Data(), &mp); err != nil {
		return Input{}, fmt.Errorf("%w: messagePublished data: %v", remediation.ErrInvalid, err)
	}
	var probe struct {
		Fngate string `json:"fngate"`
	}
	if json.Unmarshal(mp.Message.Data, &probe) == nil && probe.Fngate == "sweep" {
		return Input{Sweep: true}, nil
	}
	var le logEntry
	if err := json.Unmarshal(mp.Message.Data, &le); err != nil {
		return Input{}, fmt.Errorf("%w: the message is not a LogEntry: %v", remediation.ErrInvalid, err)
	}
	// The CloudEvent id is the Pub/Sub message id, which a redelivery keeps.
	id := e.ID()
	if id == "" {
		id = mp.Message.MessageID
	}
	if isServiceHealth(le) {
		return decodeServiceHealth(le, "ps:"+id)
	}
	payload := []byte(le.JSONPayload)
	if len(payload) == 0 {
		payload = []byte(le.TextPayload)
	}
	rec, err := remediation.DecodeLogLine(payload)
	if err != nil {
		return Input{}, fmt.Errorf("log entry %s: %w", le.InsertID, err)
	}
	if rec.Time.IsZero() {
		rec.Time = le.Timestamp
	}
	return Input{Delivery: &remediation.Delivery{ID: "ps:" + id, Record: rec}}, nil
}

// Handler is the CloudEvent function.
type Handler struct {
	engine *remediation.Engine
	log    *slog.Logger
}

// NewHandler returns the function over an engine.
func NewHandler(engine *remediation.Engine, log *slog.Logger) *Handler {
	return &Handler{engine: engine, log: log}
}

// Handle returns an error only when a retry can help (the store failed): Pub/Sub then
// redelivers and the claim makes the retry safe. Events no retry can fix are logged and
// acknowledged.
func (h *Handler) Handle(ctx context.Context, e event.Event) error {
	in, err := Decode(e)
	switch {
	case errors.Is(err, remediation.ErrNotProviderError):
		return nil // the sink filter let another line through; nothing to do
	case err != nil:
		h.log.LogAttrs(ctx, slog.LevelError, "remediation input rejected", slog.String("error", err.Error()),
			slog.String("event_id", e.ID()), slog.String("data", string(e.Data()[:min(len(e.Data()), 2048)])))
		return nil
	case in.Sweep:
		_, err := h.engine.Sweep(ctx)
		return err
	case in.Skipped != "":
		return nil
	case in.Incident != nil:
		_, err := h.engine.HandleIncident(ctx, *in.Incident)
		if errors.Is(err, remediation.ErrInvalid) {
			h.log.LogAttrs(ctx, slog.LevelError, "remediation input rejected", slog.String("error", err.Error()), slog.String("event_id", e.ID()))
			return nil
		}
		return err
	}
	_, err = h.engine.Handle(ctx, *in.Delivery)
	if errors.Is(err, remediation.ErrInvalid) {
		h.log.LogAttrs(ctx, slog.LevelError, "remediation input rejected", slog.String("error", err.Error()), slog.String("event_id", e.ID()))
		return nil
	}
	return err
}

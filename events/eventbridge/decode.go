package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/fngate/fngate/events/remediation"
)

// What the function is invoked with.
const (
	detailTypeProviderError = "ProviderError"    // the gateway's PutEvents, through a rule
	detailTypeScheduled     = "Scheduled Event"  // an EventBridge schedule rule
	detailTypeHealth        = "AWS Health Event" // AWS Health, through a rule on the default bus
	sourceHealth            = "aws.health"
	controlMessage          = "CONTROL_MESSAGE" // CloudWatch Logs checking the subscription
)

// input is one invocation, decoded.
type input struct {
	Kind       string // "eventbridge", "cloudwatch_logs", "health", "sweep" or "control"
	Deliveries []remediation.Delivery
	// Incidents is AWS Health news (Kind "health").
	Incidents []remediation.IncidentDelivery `json:",omitempty"`
	// Skipped counts log lines that are not provider errors; Invalid those that could not be
	// read. Neither is retried.
	Skipped int
	Invalid []string
}

// decode recognises the payloads the function is wired to: an EventBridge event whose detail
// is the gateway's error record, a CloudWatch Logs subscription batch (base64 gzip), an AWS
// Health event, and a schedule (an EventBridge "Scheduled Event", or the EventBridge
// Scheduler input {"fngate":"sweep"}).
func decode(payload []byte) (input, error) {
	var probe struct {
		AWSLogs    *events.CloudwatchLogsRawData `json:"awslogs"`
		DetailType string                        `json:"detail-type"`
		Source     string                        `json:"source"`
		Fngate     string                        `json:"fngate"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return input{}, fmt.Errorf("%w: the payload is not JSON: %v", remediation.ErrInvalid, err)
	}
	switch {
	case probe.AWSLogs != nil:
		return decodeLogs(*probe.AWSLogs)
	case probe.DetailType == detailTypeProviderError:
		return decodeEvent(payload)
	case probe.DetailType == detailTypeHealth && probe.Source == sourceHealth:
		return decodeHealth(payload)
	case probe.DetailType == detailTypeScheduled, probe.Fngate == "sweep":
		return input{Kind: "sweep"}, nil
	}
	return input{}, fmt.Errorf("%w: not an EventBridge ProviderError, an AWS Health event, a CloudWatch Logs subscription or a sweep schedule", remediation.ErrInvalid)
}

func decodeEvent(payload []byte) (input, error) {
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return input{}, fmt.Errorf("%w: EventBridge envelope: %v", remediation.ErrInvalid, err)
	}
	if ev.ID == "" {
		return input{}, fmt.Errorf("%w: EventBridge event without an id", remediation.ErrInvalid)
	}
	in := input{Kind: "eventbridge"}
	rec, err := remediation.DecodeDetail(ev.Detail)
	if err != nil {
		return input{}, fmt.Errorf("event %s: %w", ev.ID, err)
	}
	if rec.Time.IsZero() {
		rec.Time = ev.Time
	}
	// The id survives the target's retries, so a retried delivery is recognised.
	in.Deliveries = append(in.Deliveries, remediation.Delivery{ID: "eb:" + ev.ID, Record: rec})
	return in, nil
}

func decodeLogs(raw events.CloudwatchLogsRawData) (input, error) {
	data, err := raw.Parse()
	if err != nil {
		return input{}, fmt.Errorf("%w: CloudWatch Logs data: %v", remediation.ErrInvalid, err)
	}
	if data.MessageType == controlMessage {
		return input{Kind: "control"}, nil
	}
	in := input{Kind: "cloudwatch_logs"}
	for _, le := range data.LogEvents {
		rec, err := remediation.DecodeLogLine([]byte(le.Message))
		switch {
		case errors.Is(err, remediation.ErrNotProviderError):
			in.Skipped++
			continue
		case err != nil:
			in.Invalid = append(in.Invalid, fmt.Sprintf("log event %s: %v", le.ID, err))
			continue
		}
		if rec.Time.IsZero() {
			rec.Time = time.UnixMilli(le.Timestamp).UTC()
		}
		// Log event ids are unique within a log group and repeat on redelivery.
		in.Deliveries = append(in.Deliveries, remediation.Delivery{ID: "cwl:" + le.ID, Record: rec})
	}
	return in, nil
}

// Package remediation repairs route state from logged provider errors and from the providers'
// own health news, on any platform: classify the error -> plan a change -> dry-run it (the
// default) or apply it once -> snapshot the previous state -> emit a metric. The platform
// handlers (events/eventbridge, events/eventarc) only decode their envelopes into Deliveries
// and IncidentDeliveries.
//
//	record.go      the error record and its decoders
//	decide.go      classes, rules and the change each asks of a route
//	engine.go      Handle (errors), Sweep, Clear, Rollback: claim once, write with a snapshot
//	incident.go    HandleIncident (provider incidents) and the correlation of bursts with them
//	inventory.go   which of the gateway's routes run where, read from its config
//	healthfeeds.go the subscriptions to AWS Health and Service Health the templates create
//	metric.go      RemediationActions and RemediationBursts (EMF, Cloud Logging)
//	config.go      mode and policy from the environment
package remediation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fngate/fngate/core/record"
)

// Record is one failed attempt, as the gateway logs it and as the publisher sends it as the
// EventBridge detail. The keys are the gateway's attempt-log keys.
type Record struct {
	Time          time.Time `json:"time"`
	RequestID     string    `json:"request_id,omitempty"`
	Endpoint      string    `json:"endpoint,omitempty"` // one of record's Endpoint names
	Model         string    `json:"model,omitempty"`
	Route         string    `json:"route"`
	Connection    string    `json:"connection,omitempty"`
	Provider      string    `json:"provider,omitempty"`
	UpstreamModel string    `json:"upstream_model,omitempty"`
	Residency     string    `json:"residency,omitempty"`
	Attempt       int       `json:"attempt,omitempty"`
	Outcome       string    `json:"outcome,omitempty"`
	Status        int       `json:"status,omitempty"`
	ErrorClass    string    `json:"error_class"`
	ErrorCode     string    `json:"error_code,omitempty"`
	ErrorMessage  string    `json:"error_message,omitempty"`
}

// Delivery is one record as a platform delivered it. ID is the platform's idempotency key,
// prefixed by its source (eb:, cwl:, ps:) so ids from different paths never collide.
type Delivery struct {
	ID     string
	Record Record
}

// Errors from decoding.
var (
	// ErrNotProviderError marks a log line that is not a provider error (a subscription
	// filter or sink may pass others); handlers skip it.
	ErrNotProviderError = errors.New("not a provider_error line")
	// ErrInvalid marks a payload no retry can fix; handlers log it and acknowledge.
	ErrInvalid = errors.New("invalid remediation input")
)

// DecodeDetail reads a record from an EventBridge event's detail.
func DecodeDetail(b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("%w: detail: %v", ErrInvalid, err)
	}
	return r, r.validate()
}

// DecodeLogLine reads a record from one gateway log line, in either flavour (msg, or Cloud
// Logging's message), or from a Cloud Logging jsonPayload. Other lines of the same log
// (requests, successful attempts, EMF, platform text) are ErrNotProviderError. Text before the first "{" is ignored, for
// pipelines that prefix lines.
func DecodeLogLine(b []byte) (Record, error) {
	i := bytes.IndexByte(b, '{')
	if i < 0 {
		return Record{}, fmt.Errorf("%w: not JSON", ErrNotProviderError)
	}
	var line struct {
		Record
		Msg     *string `json:"msg"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(b[i:], &line); err != nil {
		return Record{}, fmt.Errorf("%w: not a JSON object: %v", ErrNotProviderError, err)
	}
	msg := line.Msg
	if msg == nil {
		msg = line.Message
	}
	switch {
	case msg != nil && *msg == record.MsgProviderError:
	case msg == nil && line.ErrorClass != "":
		// A log pipeline that lifted the message out of the payload; only failed attempt
		// lines carry an error_class.
	default:
		return Record{}, ErrNotProviderError
	}
	if err := line.Record.validate(); err != nil {
		return Record{}, err
	}
	return line.Record, nil
}

func (r *Record) validate() error {
	switch {
	case r.Route == "":
		return fmt.Errorf("%w: the record has no route", ErrInvalid)
	case r.ErrorClass == "":
		return fmt.Errorf("%w: the record for %s has no error_class", ErrInvalid, r.Route)
	}
	return nil
}

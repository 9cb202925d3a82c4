package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/fngate/fngate/events/remediation"
)

// handler is the Lambda function: decode, then hand each delivery to the engine.
type handler struct {
	engine *remediation.Engine
	log    *slog.Logger
}

// summary is the invocation's result, visible to whoever invoked synchronously (an operator
// testing with `aws lambda invoke`); asynchronous sources ignore it.
type summary struct {
	Kind       string `json:"kind"`
	Deliveries int    `json:"deliveries"`
	Actions    int    `json:"actions"` // planned (dry-run) or applied
	Applied    int    `json:"applied"`
	Duplicates int    `json:"duplicates"`
	Skipped    int    `json:"skipped"`
	Invalid    int    `json:"invalid"`
}

// Invoke returns an error only when a retry can help (the store failed); Lambda then retries
// the invocation and the claims make the deliveries that did succeed no-ops. Payloads no
// retry can fix are logged and acknowledged, so they do not loop into the dead-letter queue.
func (h *handler) Invoke(ctx context.Context, payload json.RawMessage) (summary, error) {
	in, err := decode(payload)
	if err != nil {
		h.invalid(ctx, err.Error(), payload)
		return summary{Kind: "invalid", Invalid: 1}, nil
	}
	s := summary{Kind: in.Kind, Deliveries: len(in.Deliveries), Skipped: in.Skipped, Invalid: len(in.Invalid)}
	for _, msg := range in.Invalid {
		h.invalid(ctx, msg, nil)
	}
	switch in.Kind {
	case "control":
		return s, nil
	case "sweep":
		outs, err := h.engine.Sweep(ctx)
		for _, o := range outs {
			s.count(o)
		}
		return s, err
	case "health":
		return h.incidents(ctx, in.Incidents, s)
	}
	var errs []error
	for _, d := range in.Deliveries {
		o, err := h.engine.Handle(ctx, d)
		switch {
		case errors.Is(err, remediation.ErrInvalid):
			s.Invalid++
			h.invalid(ctx, err.Error(), nil)
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", d.ID, err))
		default:
			s.count(o)
		}
	}
	return s, errors.Join(errs...)
}

// incidents hands AWS Health news to the engine, as Invoke does with errors.
func (h *handler) incidents(ctx context.Context, news []remediation.IncidentDelivery, s summary) (summary, error) {
	s.Deliveries = len(news)
	var errs []error
	for _, d := range news {
		outs, err := h.engine.HandleIncident(ctx, d)
		switch {
		case errors.Is(err, remediation.ErrInvalid):
			s.Invalid++
			h.invalid(ctx, err.Error(), nil)
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", d.ID, err))
		}
		for _, o := range outs {
			s.count(o)
		}
	}
	return s, errors.Join(errs...)
}

func (s *summary) count(o remediation.Outcome) {
	if o.Action != remediation.None {
		s.Actions++
	}
	if o.Applied {
		s.Applied++
	}
	if o.Duplicate {
		s.Duplicates++
	}
}

// invalid logs an input that will not be retried, with the start of the payload to debug it.
func (h *handler) invalid(ctx context.Context, msg string, payload []byte) {
	attrs := []slog.Attr{slog.String("error", msg)}
	if len(payload) > 0 {
		attrs = append(attrs, slog.String("payload", string(payload[:min(len(payload), 2048)])))
	}
	h.log.LogAttrs(ctx, slog.LevelError, "remediation input rejected", attrs...)
}

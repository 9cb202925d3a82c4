// Package guardrail is what the gateway checks requests and answers with: one interface over
// the clouds' content services (Amazon Bedrock Guardrails, Google Cloud Model Armor) and the
// gateway's own local masker, the verdicts they give, and what the gateway does with them.
//
//	guardrail.go  Checker, Source, Verdict: one service's assessment of some texts
//	guard.go      Guard: a configured guardrail, its mode, on_error and time bound applied
//	verdicts.go   the verdict cache: texts already checked are not sent again
//	request.go    the texts of a request (system, messages, tool results), masks put back
//	images.go     the images of a request, for the services that take them (ImageChecker)
//	stream.go     a stream checked in overlapping windows, held back by at most one
//
// The kinds live in packages of their own (local, bedrockguard, modelarmor), so a binary
// that configures no cloud guardrail does not carry its client.
package guardrail

import (
	"context"
	"errors"
	"strconv"
)

// Source is which way the checked text goes: into a model, or out of one.
type Source uint8

const (
	Input Source = iota
	Output
)

func (s Source) String() string {
	if s == Output {
		return "output"
	}
	return "input"
}

// Action is what a service's assessment calls for.
type Action uint8

const (
	// Pass: nothing matched, or nothing the service acts on.
	Pass Action = iota
	// Mask: what matched can be masked; Verdict.Masked has the texts as masked.
	Mask
	// Block: the text must not go on.
	Block
)

func (a Action) String() string {
	switch a {
	case Mask:
		return "mask"
	case Block:
		return "block"
	}
	return "pass"
}

// Checker is one guardrail service. Check assesses texts, the segments of one request or
// answer (a message's text, a tool result, a window of a stream), in order. It must be safe
// for concurrent use and honour ctx: the gateway bounds every call.
type Checker interface {
	Check(ctx context.Context, src Source, texts []string) (Verdict, error)
}

// Verdict is a service's assessment of the texts of one Check.
type Verdict struct {
	Action Action
	// Masked, when Action is Mask, holds each text as masked, one per text checked, in
	// order; a text with nothing to mask is as it was.
	Masked []string
	// Categories name what matched (a policy, filter, entity or pattern name such as
	// "EMAIL", "card", "PROMPT_ATTACK", "pi_and_jailbreak"), never the matched text.
	Categories []string
	// Units is what the service metered for the call (Bedrock's text units, summed over its
	// policies; Model Armor's characters), 0 for the local kind.
	Units int
	// CostUSD is what the call costs at the service's published price, 0 when free.
	CostUSD float64
}

// Error is a Checker's failure to give a verdict: the service refused the call, failed, was
// throttled or did not answer in time. The gateway applies the guardrail's on_error to it.
type Error struct {
	// Kind names the failure for logs and metrics: throttled, timeout, unavailable, auth,
	// invalid (a configuration the service refuses: unknown guardrail or template), or
	// malformed (an answer the gateway cannot read).
	Kind    string
	Status  int // the service's HTTP status, 0 when none came
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return e.Kind + " (" + strconv.Itoa(e.Status) + "): " + e.Message
	}
	return e.Kind + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Failure kinds.
const (
	ErrThrottled   = "throttled"
	ErrTimeout     = "timeout"
	ErrUnavailable = "unavailable"
	ErrAuth        = "auth"
	ErrInvalid     = "invalid"
	ErrMalformed   = "malformed"
)

// KindOf is the failure kind of err: an *Error's, timeout for a deadline, else unavailable.
func KindOf(err error) string {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, context.DeadlineExceeded):
		return ErrTimeout
	}
	return ErrUnavailable
}

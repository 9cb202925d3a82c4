package providers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
)

// Class is the kind of an upstream failure. It decides failover, the client's status and what
// the remediation handlers do. The classes are defined in core/record, beside the records
// that log them, so the handlers that act on them read the same names.
type Class = record.ErrorClass

// The classes, as the providers classify their failures.
const (
	RateLimited  = record.RateLimited
	Overloaded   = record.Overloaded
	Unavailable  = record.Unavailable
	Timeout      = record.Timeout
	Auth         = record.Auth
	NotFound     = record.NotFound
	Unsupported  = record.Unsupported
	BadRequest   = record.BadRequest
	StreamBroken = record.StreamBroken
)

// Error is an upstream failure, classified.
type Error struct {
	Class      Class
	Status     int    // upstream HTTP status; 0 when none arrived
	Code       string // upstream error code or type, when it gave one
	Message    string // upstream message (or ours when it gave none), whole: see Scrubbed
	Param      string // the upstream's param for a bad_request, when it named one
	RetryAfter string // upstream Retry-After
	Provider   string // display name, for messages
	Err        error  // cause, for connection-level failures
}

func (e *Error) Error() string {
	s := string(e.Class)
	if e.Status != 0 {
		s += " (" + strconv.Itoa(e.Status) + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Scrubbed returns a copy of e with clean applied to every text the upstream wrote (code,
// message, param, retry hint). Providers keep those texts whole, because a text cut before
// its secrets are blanked shows the head of a secret the cut split; the gateway passes every
// failure through Scrubbed, with a clean that redacts and then cuts, before a client or a
// log line sees it.
func (e *Error) Scrubbed(clean func(string) string) *Error {
	c := *e
	c.Code, c.Message, c.Param, c.RetryAfter = clean(e.Code), clean(e.Message), clean(e.Param), clean(e.RetryAfter)
	return &c
}

// Failover reports whether another route should be tried (when nothing reached the client
// yet). A provider 400 is the client's mistake and would fail the same way elsewhere.
func (e *Error) Failover() bool {
	return e.Class != BadRequest
}

// ClientError maps the failure to what the client receives: upstream failures never look like
// the client's fault (no 4xx but 429 and a genuine 400), and the status drives SDK retries.
func (e *Error) ClientError() *llm.Error {
	prov := e.Provider
	if prov == "" {
		prov = "the provider"
	}
	switch e.Class {
	case BadRequest:
		msg := e.Message
		if msg == "" {
			msg = "the request was rejected"
		}
		return &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Param: e.Param,
			Code: "upstream_bad_request", Message: prov + " rejected the request: " + msg}
	case RateLimited:
		return &llm.Error{Status: http.StatusTooManyRequests, Type: llm.TypeRateLimit, Code: "rate_limit_exceeded",
			RetryAfter: e.RetryAfter, Message: prov + " is rate limiting requests; retry later"}
	case Overloaded:
		return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "upstream_overloaded",
			RetryAfter: e.RetryAfter, Message: prov + " is overloaded; retry later"}
	case Timeout:
		return &llm.Error{Status: http.StatusGatewayTimeout, Type: llm.TypeTimeout, Code: "upstream_timeout",
			Message: prov + " did not answer in time"}
	case Auth:
		// The gateway's own provider credentials failed: not the client's key, so not a 401.
		return &llm.Error{Status: http.StatusBadGateway, Type: llm.TypeServer, Code: "upstream_auth_failed", NoRetry: true,
			Message: prov + " refused the gateway's credentials for this route"}
	case NotFound:
		return &llm.Error{Status: http.StatusBadGateway, Type: llm.TypeServer, Code: "upstream_model_not_found", NoRetry: true,
			Message: prov + " does not know the model this route names"}
	case Unsupported:
		return &llm.Error{Status: http.StatusNotImplemented, Type: llm.TypeInvalidRequest, Code: "unsupported_endpoint", NoRetry: true,
			Message: prov + " does not support this operation: " + e.Message}
	case StreamBroken:
		return &llm.Error{Status: http.StatusBadGateway, Type: llm.TypeServer, Code: "upstream_stream_broken",
			Message: prov + " broke off the answer: " + e.Message}
	}
	if e.Status == http.StatusServiceUnavailable {
		return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "upstream_unavailable",
			RetryAfter: e.RetryAfter, Message: prov + " is unavailable; retry later"}
	}
	return &llm.Error{Status: http.StatusBadGateway, Type: llm.TypeServer, Code: "upstream_error",
		Message: prov + " failed to answer"}
}

// ClassifyStatus maps an upstream HTTP status to a failure class.
func ClassifyStatus(status int) Class {
	switch {
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == 529:
		return Overloaded
	case status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusPaymentRequired:
		return Auth
	case status == http.StatusNotFound:
		return NotFound
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return Timeout
	case status == http.StatusNotImplemented:
		return Unsupported
	case status >= 500:
		return Unavailable
	case status >= 400:
		return BadRequest
	}
	return Unavailable
}

// AsError converts any error from a provider call into an *Error. When the gateway itself
// cancelled the attempt (first-byte, idle or total timeout) that cause wins over whatever the
// interrupted read reported. The result is never one of the shared sentinels.
func AsError(ctx context.Context, err error, provider string) *Error {
	if cause := context.Cause(ctx); cause != nil {
		var pe *Error
		if errors.As(cause, &pe) {
			c := *pe
			c.Provider, c.Err = provider, err
			return &c
		}
	}
	var pe *Error
	if errors.As(err, &pe) {
		if pe.Provider == "" || pe == ErrFirstByteTimeout || pe == ErrIdleTimeout {
			c := *pe
			if c.Provider == "" {
				c.Provider = provider
			}
			return &c
		}
		return pe
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return &Error{Class: Timeout, Message: "the attempt exceeded its time limit", Provider: provider, Err: err}
	}
	return &Error{Class: Unavailable, Message: "connection failed: " + err.Error(), Provider: provider, Err: err}
}

// ErrFirstByteTimeout and ErrIdleTimeout are the causes the gateway cancels attempts with.
var (
	ErrFirstByteTimeout = &Error{Class: Timeout, Message: "no output before the first-byte timeout"}
	ErrIdleTimeout      = &Error{Class: Timeout, Message: "the stream stalled past the idle timeout"}
)

// BrokenStream is the error of a stream whose reading failed: a provider error the reader
// already classified stays as it is; otherwise it is StreamBroken, with unterminated (what the
// wire's missing end is called) when the upstream simply stopped.
func BrokenStream(err error, provider, unterminated string) error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	msg := unterminated
	if err != io.EOF {
		msg = "reading the stream: " + err.Error()
	}
	return &Error{Class: StreamBroken, Provider: provider, Message: msg, Err: err}
}

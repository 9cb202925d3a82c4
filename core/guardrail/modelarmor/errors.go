package modelarmor

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fngate/fngate/core/guardrail"
)

// maxMessage bounds what is kept of a message from the service: it goes into logs and error
// answers, and an upstream could otherwise put megabytes there.
const maxMessage = 512

// googleError is Google's REST error body: {"error":{"code","message","status"}}
// (https://cloud.google.com/apis/design/errors#http_mapping).
type googleError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

// statusError is the failure a non-200 answer stands for, with Google's message when the
// body carries one.
func statusError(code int, body []byte) *guardrail.Error {
	kind := guardrail.ErrUnavailable
	switch {
	case code == http.StatusTooManyRequests:
		kind = guardrail.ErrThrottled
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		kind = guardrail.ErrAuth
	case code == http.StatusBadRequest || code == http.StatusNotFound:
		kind = guardrail.ErrInvalid
	}
	message := "Model Armor answered HTTP " + strconv.Itoa(code)
	var ge googleError
	if json.Unmarshal(body, &ge) == nil && ge.Error.Message != "" {
		message = ge.Error.Message
		if ge.Error.Status != "" {
			message = ge.Error.Status + ": " + message
		}
	}
	return &guardrail.Error{Kind: kind, Status: code, Message: bounded(message)}
}

// failure is the failure of a call that got no answer: the Check's deadline (a timeout), a
// cancelled Check, or a connection that failed (unavailable).
func failure(ctx context.Context, err error) *guardrail.Error {
	var timeout interface{ Timeout() bool }
	switch {
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &guardrail.Error{Kind: guardrail.ErrTimeout, Message: "Model Armor did not answer in time", Err: err}
	case errors.As(err, &timeout) && timeout.Timeout():
		// The HTTP client's own bound (dial, TLS handshake, response header).
		return &guardrail.Error{Kind: guardrail.ErrTimeout, Message: "Model Armor did not answer in time: " + bounded(err.Error()), Err: err}
	}
	return &guardrail.Error{Kind: guardrail.ErrUnavailable, Message: "cannot reach Model Armor: " + bounded(err.Error()), Err: err}
}

// malformed is an answer the checker cannot read.
func malformed(message string, err error) *guardrail.Error {
	return &guardrail.Error{Kind: guardrail.ErrMalformed, Message: bounded(message), Err: err}
}

// bounded cuts s to maxMessage bytes, on a rune boundary, and drops control characters a
// log line should not carry.
func bounded(s string) string {
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

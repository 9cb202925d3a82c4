package bedrockguard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/guardrail"
)

// exceptionKinds maps the exceptions of ApplyGuardrail (API Reference, "Errors") and the
// common AWS ones to failure kinds. Keys are lower case: Bedrock has sent both spellings.
var exceptionKinds = map[string]string{
	"throttlingexception":                 guardrail.ErrThrottled,
	"servicequotaexceededexception":       guardrail.ErrThrottled,
	"accessdeniedexception":               guardrail.ErrAuth,
	"unrecognizedclientexception":         guardrail.ErrAuth,
	"expiredtokenexception":               guardrail.ErrAuth,
	"invalidsignatureexception":           guardrail.ErrAuth,
	"incompletesignatureexception":        guardrail.ErrAuth,
	"missingauthenticationtokenexception": guardrail.ErrAuth,
	"validationexception":                 guardrail.ErrInvalid,
	"resourcenotfoundexception":           guardrail.ErrInvalid,
	"serviceunavailableexception":         guardrail.ErrUnavailable,
	"internalserverexception":             guardrail.ErrUnavailable,
}

// maxMessage bounds the service's message kept in an Error.
const maxMessage = 512

// classify turns any error of an ApplyGuardrail call into a *guardrail.Error.
func (c *Checker) classify(ctx context.Context, err error) *guardrail.Error {
	e := &guardrail.Error{Err: err}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		e.Status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	var de *smithy.DeserializationError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Kind, e.Message = guardrail.ErrTimeout, "no answer within the time limit"
	case errors.Is(err, errAnswerTooLarge):
		e.Kind, e.Message = guardrail.ErrMalformed, errAnswerTooLarge.Error()
	case errors.As(err, &ae):
		e.Message = ae.ErrorCode() + ": " + ae.ErrorMessage()
		kind, ok := exceptionKinds[strings.ToLower(ae.ErrorCode())]
		if !ok {
			kind = kindOfStatus(e.Status)
		}
		e.Kind = kind
		if kind == guardrail.ErrInvalid {
			e.Message = fmt.Sprintf("guardrail %s version %s: %s", c.id, c.version, e.Message)
		}
	case e.Status >= 500 || e.Status == http.StatusTooManyRequests:
		// An error answer whose body the SDK could not read still says what failed.
		e.Kind, e.Message = kindOfStatus(e.Status), err.Error()
	case errors.As(err, &de):
		e.Kind, e.Message = guardrail.ErrMalformed, "an answer that cannot be read: "+err.Error()
	default:
		// Connection refused, reset, DNS, TLS, credentials the chain could not get.
		e.Kind, e.Message = guardrail.ErrUnavailable, err.Error()
	}
	e.Message = bound(e.Message)
	return e
}

func kindOfStatus(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return guardrail.ErrThrottled
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return guardrail.ErrAuth
	case status >= 400 && status < 500:
		return guardrail.ErrInvalid
	}
	return guardrail.ErrUnavailable
}

func bound(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	s = s[:maxMessage]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}

func malformed(format string, args ...any) *guardrail.Error {
	return &guardrail.Error{Kind: guardrail.ErrMalformed, Message: bound(fmt.Sprintf(format, args...))}
}

// maxAnswer bounds an ApplyGuardrail answer, which the SDK reads whole into memory: its
// outputs are at most the texts sent, which the gateway bounds well below this.
var maxAnswer int64 = 4 << 20

var errAnswerTooLarge = errors.New("the answer is larger than 4 MiB")

// limitAnswer caps the answer before the SDK reads it whole.
var limitAnswer = awsconf.LimitAnswers("fngate.GuardrailAnswerLimit", &maxAnswer, errAnswerTooLarge)

package bedrock

import (
	"context"
	"errors"
	"net/http"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/fngate/fngate/core/providers"
)

// exception is how one Bedrock exception is classified. status is the HTTP status Bedrock
// documents for it: exceptions inside a stream arrive after the 200, so the log still gets the
// status that names the failure.
type exception struct {
	name   string // canonical spelling, for logs and remediation rules
	class  providers.Class
	status int
}

// exceptions follows the Bedrock runtime API reference (Converse, ConverseStream) and
// wire-formats.md section 3.7. Keys are lower case: the SDK matches stream exception types
// case-insensitively, and Bedrock has sent both spellings.
var exceptions = map[string]exception{
	"throttlingexception":           {"ThrottlingException", providers.RateLimited, http.StatusTooManyRequests},
	"servicequotaexceededexception": {"ServiceQuotaExceededException", providers.RateLimited, http.StatusBadRequest},
	"serviceunavailableexception":   {"ServiceUnavailableException", providers.Unavailable, http.StatusServiceUnavailable},
	// The model is loading: busy rather than broken, so the client gets a 503 to retry.
	"modelnotreadyexception":              {"ModelNotReadyException", providers.Overloaded, http.StatusTooManyRequests},
	"modeltimeoutexception":               {"ModelTimeoutException", providers.Timeout, http.StatusRequestTimeout},
	"internalserverexception":             {"InternalServerException", providers.Unavailable, http.StatusInternalServerError},
	"modelerrorexception":                 {"ModelErrorException", providers.Unavailable, http.StatusFailedDependency},
	"modelstreamerrorexception":           {"ModelStreamErrorException", providers.Unavailable, http.StatusFailedDependency},
	"accessdeniedexception":               {"AccessDeniedException", providers.Auth, http.StatusForbidden},
	"unrecognizedclientexception":         {"UnrecognizedClientException", providers.Auth, http.StatusForbidden},
	"expiredtokenexception":               {"ExpiredTokenException", providers.Auth, http.StatusForbidden},
	"invalidsignatureexception":           {"InvalidSignatureException", providers.Auth, http.StatusForbidden},
	"incompletesignatureexception":        {"IncompleteSignatureException", providers.Auth, http.StatusForbidden},
	"missingauthenticationtokenexception": {"MissingAuthenticationTokenException", providers.Auth, http.StatusForbidden},
	"resourcenotfoundexception":           {"ResourceNotFoundException", providers.NotFound, http.StatusNotFound},
	"validationexception":                 {"ValidationException", providers.BadRequest, http.StatusBadRequest},
}

// classify turns any error of a Bedrock call into a *providers.Error.
func classify(ctx context.Context, err error) *providers.Error {
	var pe *providers.Error
	if errors.As(err, &pe) {
		return pe
	}
	if errors.Is(err, errAnswerTooLarge) {
		return &providers.Error{Class: providers.Unavailable, Provider: displayName, Err: err, Message: errAnswerTooLarge.Error()}
	}
	var ce *credentialsError
	if errors.As(err, &ce) {
		return &providers.Error{Class: providers.Auth, Code: "credentials", Provider: displayName, Err: err,
			Message: "no usable AWS credentials: " + ce.err.Error()}
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return providers.AsError(ctx, err, displayName)
	}
	code := ae.ErrorCode()
	e := &providers.Error{Code: code, Message: ae.ErrorMessage(), Provider: displayName, Err: err}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		e.Status = re.HTTPStatusCode()
		if re.Response != nil {
			e.RetryAfter = providers.RetryAfter(re.Response.Header)
		}
	}
	if x, ok := exceptions[strings.ToLower(code)]; ok {
		// Exceptions outside the stream union arrive with the frame's own spelling.
		e.Code, e.Class = x.name, x.class
		if e.Status == 0 {
			e.Status = x.status
		}
		if e.Class == providers.BadRequest && unknownModel(e.Message) {
			e.Class = providers.NotFound
		}
	} else if e.Status != 0 {
		e.Class = providers.ClassifyStatus(e.Status)
	} else {
		// An unknown exception inside a stream: the answer broke off.
		e.Class = providers.StreamBroken
	}
	if e.Message == "" {
		e.Message = code
	}
	return e
}

// unknownModel reports whether a ValidationException says the model id does not exist.
// Bedrock answers an unknown model (a typo, a model not offered in the region, a bare name
// instead of an inference profile id) with 400 ValidationException "The provided model
// identifier is invalid." rather than ResourceNotFoundException. That is the route's fault,
// not the client's: the gateway fails over and self-repair disables the route.
func unknownModel(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "model identifier is invalid")
}

// credentialsError marks a failure to obtain AWS credentials, which the SDK reports as a plain
// wrapped error: it is the gateway's configuration at fault (class auth), not the network.
type credentialsError struct{ err error }

func (e *credentialsError) Error() string { return e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

package vertex

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// grpcFailure is what a gRPC status means for the gateway: the HTTP status Google's REST
// surface sends for it (logged as the upstream status) and the failure class.
type grpcFailure struct {
	name   string // Google's canonical name, logged as the error code
	status int
	class  providers.Class
}

// grpcFailures follows Google's status-to-HTTP table (wire-formats.md 4b). PERMISSION_DENIED
// and UNAUTHENTICATED are the gateway's own credentials or IAM binding failing, and
// NOT_FOUND a model the project cannot use: all worth another route. ABORTED and CANCELLED
// (when the gateway did not cancel) are transient on Google's side.
var grpcFailures = map[codes.Code]grpcFailure{
	codes.Canceled:           {"CANCELLED", 499, providers.Unavailable},
	codes.Unknown:            {"UNKNOWN", http.StatusInternalServerError, providers.Unavailable},
	codes.InvalidArgument:    {"INVALID_ARGUMENT", http.StatusBadRequest, providers.BadRequest},
	codes.DeadlineExceeded:   {"DEADLINE_EXCEEDED", http.StatusGatewayTimeout, providers.Timeout},
	codes.NotFound:           {"NOT_FOUND", http.StatusNotFound, providers.NotFound},
	codes.AlreadyExists:      {"ALREADY_EXISTS", http.StatusConflict, providers.BadRequest},
	codes.PermissionDenied:   {"PERMISSION_DENIED", http.StatusForbidden, providers.Auth},
	codes.ResourceExhausted:  {"RESOURCE_EXHAUSTED", http.StatusTooManyRequests, providers.RateLimited},
	codes.FailedPrecondition: {"FAILED_PRECONDITION", http.StatusBadRequest, providers.BadRequest},
	codes.Aborted:            {"ABORTED", http.StatusConflict, providers.Unavailable},
	codes.OutOfRange:         {"OUT_OF_RANGE", http.StatusBadRequest, providers.BadRequest},
	codes.Unimplemented:      {"UNIMPLEMENTED", http.StatusNotImplemented, providers.Unsupported},
	codes.Internal:           {"INTERNAL", http.StatusInternalServerError, providers.Unavailable},
	codes.Unavailable:        {"UNAVAILABLE", http.StatusServiceUnavailable, providers.Unavailable},
	codes.DataLoss:           {"DATA_LOSS", http.StatusInternalServerError, providers.Unavailable},
	codes.Unauthenticated:    {"UNAUTHENTICATED", http.StatusUnauthorized, providers.Auth},
}

// callError classifies a failed gRPC call or stream receive. status.Code reads both shapes
// the client returns (apierror.APIError from unary calls, plain status errors from Recv).
// When the gateway cancelled the attempt (first-byte, idle or total timeout), its cause wins
// over the Canceled status the interrupted call reports. afterOutput marks a failure once
// the answer began: the request was accepted then, so a complaint about it is a broken
// stream, not the client's 400 (which would also stop the failover).
func callError(ctx context.Context, err error, fam Family, afterOutput bool) *providers.Error {
	if context.Cause(ctx) != nil {
		return providers.AsError(ctx, err, Name)
	}
	var pe *providers.Error
	if errors.As(err, &pe) {
		return pe
	}
	st, ok := status.FromError(err)
	if !ok {
		return providers.AsError(ctx, err, Name)
	}
	if tooLarge(st) {
		// gRPC's own refusal of an answer above maxRecv: Vertex AI did answer, with more
		// than the gateway reads, which is no quota (RESOURCE_EXHAUSTED would say so).
		return &providers.Error{Class: providers.Unavailable, Status: http.StatusBadGateway, Provider: Name, Err: err,
			Message: "the answer is larger than the gateway reads: " + st.Message()}
	}
	f, known := grpcFailures[st.Code()]
	if !known {
		f = grpcFailure{st.Code().String(), http.StatusBadGateway, providers.Unavailable}
	}
	msg := st.Message()
	if fam == Claude {
		// Failures of the model itself reach the client as the Anthropic error body, the
		// front end's own (quota, IAM) in Google's shape: both parse, and an overloaded_error
		// under UNAVAILABLE is as busy as Anthropic's 529.
		if body := bytes.TrimSpace([]byte(msg)); len(body) > 0 && body[0] == '{' {
			pe = anthropic.ErrorFromResponse(f.status, nil, body, Name)
			if pe.Class == providers.ClassifyStatus(f.status) {
				pe.Class = f.class // the status class, where the table is more precise
			}
		}
	}
	if pe == nil {
		if msg == "" {
			msg = f.name
		}
		pe = &providers.Error{Class: f.class, Status: f.status, Code: f.name, Message: msg, Provider: Name}
	}
	pe.Err = err
	pe.RetryAfter = retryAfter(st)
	if afterOutput && pe.Class == providers.BadRequest {
		pe.Class = providers.StreamBroken
	}
	return pe
}

// retryAfter reads google.rpc.RetryInfo, which quota errors carry, as whole seconds for the
// client's Retry-After.
func retryAfter(st *status.Status) string {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			s := ri.GetRetryDelay().AsDuration().Seconds()
			if s < 0 || s > 86400 {
				return ""
			}
			return strconv.Itoa(int(math.Ceil(s)))
		}
	}
	return ""
}

// tooLarge reports the status grpc-go gives a received message above the call's limit (its
// rpc_util.go: "grpc: received message larger than max", "... after decompression larger
// than max").
func tooLarge(st *status.Status) bool {
	m := st.Message()
	return st.Code() == codes.ResourceExhausted && strings.HasPrefix(m, "grpc: ") && strings.Contains(m, "larger than max")
}

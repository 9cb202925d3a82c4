package vertex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/vertexfake"
)

// TestCallError: Google's statuses as classes and HTTP statuses, read from plain status
// errors (stream receives) and from apierror.APIError (unary calls) alike.
func TestCallError(t *testing.T) {
	for _, tt := range []struct {
		code   codes.Code
		class  providers.Class
		status int
	}{
		{codes.ResourceExhausted, providers.RateLimited, 429},
		{codes.Unavailable, providers.Unavailable, 503},
		{codes.DeadlineExceeded, providers.Timeout, 504},
		{codes.PermissionDenied, providers.Auth, 403},
		{codes.Unauthenticated, providers.Auth, 401},
		{codes.NotFound, providers.NotFound, 404},
		{codes.InvalidArgument, providers.BadRequest, 400},
		{codes.FailedPrecondition, providers.BadRequest, 400},
		{codes.Internal, providers.Unavailable, 500},
		{codes.Unknown, providers.Unavailable, 500},
		{codes.Aborted, providers.Unavailable, 409},
		{codes.Canceled, providers.Unavailable, 499},
		{codes.Unimplemented, providers.Unsupported, 501},
	} {
		st := status.New(tt.code, "upstream says no")
		wrapped, ok := apierror.FromError(st.Err())
		if !ok {
			t.Fatal("not wrapped")
		}
		for _, err := range []error{st.Err(), wrapped} {
			pe := callError(context.Background(), err, Gemini, false)
			if pe.Class != tt.class || pe.Status != tt.status || pe.Code != grpcFailures[tt.code].name || pe.Message != "upstream says no" || pe.Provider != Name {
				t.Errorf("%v (%T): %+v", tt.code, err, pe)
			}
			if !errors.Is(pe, err) {
				t.Errorf("%v: the cause is lost", tt.code)
			}
		}
	}
}

// TestCallErrorDetails: the retry delay of a quota error, Claude's two body shapes, a
// complaint after output, a gateway cancellation and a failure that is no status at all.
func TestCallErrorDetails(t *testing.T) {
	if pe := callError(context.Background(), vertexfake.Exhausted(1500*time.Millisecond), Gemini, false); pe.RetryAfter != "2" {
		t.Errorf("retry after %q, want 2 (rounded up)", pe.RetryAfter)
	}
	overloaded := status.Error(codes.Unavailable, anthropicfake.ErrorBody("overloaded_error", "Overloaded"))
	if pe := callError(context.Background(), overloaded, Claude, false); pe.Class != providers.Overloaded || pe.Code != "overloaded_error" ||
		pe.Status != 503 || pe.Message != "Overloaded (request-id req_fake_0001)" {
		t.Errorf("Anthropic shape: %+v", pe)
	}
	quota := status.Error(codes.ResourceExhausted, vertexfake.GoogleErrorBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded"))
	if pe := callError(context.Background(), quota, Claude, false); pe.Class != providers.RateLimited || pe.Code != "RESOURCE_EXHAUSTED" || pe.Message != "Quota exceeded" {
		t.Errorf("Google shape: %+v", pe)
	}
	aborted := status.Error(codes.Aborted, anthropicfake.ErrorBody("api_error", "try again"))
	if pe := callError(context.Background(), aborted, Claude, false); pe.Class != providers.Unavailable {
		t.Errorf("ABORTED with a body: %+v", pe)
	}
	if pe := callError(context.Background(), overloaded, Gemini, false); pe.Class != providers.Unavailable || pe.Code != "UNAVAILABLE" {
		t.Errorf("a Gemini status message is not parsed as a body: %+v", pe)
	}
	invalid := status.Error(codes.InvalidArgument, "bad")
	if pe := callError(context.Background(), invalid, Gemini, true); pe.Class != providers.StreamBroken {
		t.Errorf("after output: %+v", pe)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(providers.ErrFirstByteTimeout)
	if pe := callError(ctx, status.Error(codes.Canceled, "context canceled"), Gemini, false); pe.Class != providers.Timeout || pe.Message != providers.ErrFirstByteTimeout.Message {
		t.Errorf("gateway cancellation: %+v", pe)
	}
	if pe := callError(context.Background(), errors.New("dial tcp: connection refused"), Gemini, false); pe.Class != providers.Unavailable {
		t.Errorf("no status: %+v", pe)
	}
	own := &providers.Error{Class: providers.Auth, Message: "no credentials", Provider: Name}
	if pe := callError(context.Background(), own, Gemini, false); pe != own {
		t.Errorf("a classified error was reclassified: %+v", pe)
	}
}

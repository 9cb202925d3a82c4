package record

import (
	"context"
	"net/http"

	"github.com/fngate/fngate/core/llm"
)

// Tracer sees the gateway's requests and attempts as they happen, for a tracing system:
// core/telemetry/otel turns them into OpenTelemetry spans and metrics. A gateway without one
// starts no span and allocates nothing for it.
//
// The hooks sit where the log lines are written: a request's trace ends with its request line
// and an attempt's with its attempt line, with the very records those lines are made of, so a
// span says what the log says, on every door.
type Tracer interface {
	// Request begins the trace of one inbound request (endpoint: one of the Endpoint names).
	// r's headers carry the client's trace context, if it sent one.
	Request(r *http.Request, endpoint string) RequestTrace
	// Transport wraps the transport the HTTP providers share, so that every attempt's trace
	// context goes upstream with its call.
	Transport(next http.RoundTripper) http.RoundTripper
}

// RequestTrace is the trace of one request.
type RequestTrace interface {
	// Decoded gives the request as its door decoded it: the model and the settings asked
	// for, and (only if the tracer records content) the conversation. req is read-only.
	Decoded(req *llm.Request)
	// Attempt begins an attempt, whose record names its route. The context returned, derived
	// from ctx, is the attempt's: it carries the attempt's trace context to the provider.
	Attempt(ctx context.Context, rec *Attempt) (context.Context, AttemptTrace)
	// TraceID is the trace's id for the request's log line, "" when the trace is not
	// recorded.
	TraceID() string
	// End closes the request with what its log line says.
	End(rec *Request)
}

// AttemptTrace is the trace of one attempt.
type AttemptTrace interface {
	// Answer sees the whole answer of an attempt that succeeded without streaming.
	Answer(a *llm.Answer)
	// Delta sees each delta of a streamed attempt that its client was sent.
	Delta(d *llm.Delta)
	// End closes the attempt with its record, as logged.
	End(rec *Attempt)
}

// ToolCallTracer is what a RequestTrace also implements to trace /mcp's forwarded calls:
// ToolCall begins the span of one (its method and namespaced name known) under the request's,
// and the function it returns ends it with the call's record.
type ToolCallTracer interface {
	ToolCall(ctx context.Context, method, name string) (context.Context, func(*ToolCall))
}

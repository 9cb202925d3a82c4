package main

import (
	"context"
	"io"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// flushTimeout bounds a flush to a collector on this host, which answers in a millisecond or
// two (otel.FlushTimeout; this file builds without the exporter).
const flushTimeout = 2 * time.Second

// urlHandler is what lambdaurl.Wrap makes of the gateway.
type urlHandler = func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error)

// flushAfter exports each invoke's spans and metrics after its response has reached the
// client and before the invoke ends. Lambda freezes the process once the runtime asks for
// the next event, and a frozen process's batch waits, possibly for good; flushed inside the
// handler, it would hold back the end of every response.
//
// Where: aws-lambda-go posts a streamed response (the body lambdaurl pipes from the gateway)
// to the Runtime API and only then closes it, before it polls for the next event
// (lambda/invoke_loop.go: "ensure it's closed before the next invoke"). By then the gateway
// has returned, so every span of the request has ended. Closing the body is therefore the
// moment: the client has everything, the invoke has not ended. The flush goes to a collector
// on this host (the OpenTelemetry or ADOT Lambda layer, on localhost:4318), a millisecond or
// two of the invoke's billed time; the layer's collector sends on to the backend after the
// invoke, on its own time. It never waits past flushTimeout or the invoke's deadline.
func flushAfter(next urlHandler, flush func(context.Context) error) urlHandler {
	return func(ctx context.Context, req *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
		deadline, _ := ctx.Deadline()
		resp, err := next(ctx, req)
		if err != nil {
			flushBefore(deadline, flush)
			return nil, err
		}
		resp.Body = &flushOnClose{Reader: resp.Body, deadline: deadline, flush: flush}
		return resp, nil
	}
}

// flushOnClose is a response body that flushes telemetry once the runtime closes it.
type flushOnClose struct {
	io.Reader
	deadline time.Time
	flush    func(context.Context) error
}

func (f *flushOnClose) Close() error {
	var err error
	if c, ok := f.Reader.(io.Closer); ok {
		err = c.Close()
	}
	flushBefore(f.deadline, f.flush)
	return err
}

// flushBefore flushes within flushTimeout and before deadline (when there is one). An
// export that fails is the exporter's to report (it logs to stderr); the invoke goes on.
func flushBefore(deadline time.Time, flush func(context.Context) error) {
	limit := time.Now().Add(flushTimeout)
	if !deadline.IsZero() && deadline.Before(limit) {
		limit = deadline
	}
	ctx, cancel := context.WithDeadline(context.Background(), limit)
	defer cancel()
	_ = flush(ctx)
}

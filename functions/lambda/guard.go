package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/llm"
)

// guard adapts the gateway to two facts of lambdaurl:
//
//   - Its handler runs in a goroutine without recover, so a panic that escapes the gateway
//     (or http.ErrAbortHandler, which the gateway re-raises by net/http convention) would end
//     the process: the next request pays a cold start and the current client may read a
//     truncated stream that looks complete. guard answers 500 before any output and an SSE
//     error event after it.
//   - Lambda kills the invoke hard at the function timeout, which also recycles the
//     execution environment. guard cancels the request (and with it the upstream call)
//     shortly before the invoke deadline and ends the answer in-band, so the client learns
//     why and the warm instance survives.
type guard struct {
	next http.Handler
	log  *slog.Logger
	// margin is how long before the invoke deadline the request is cut off.
	margin time.Duration
}

// errTimeLimit is the cause of a request cancelled for the function's time limit.
var errTimeLimit = errors.New("the function's time limit is near")

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := g.withTimeLimit(r.Context())
	defer cancel(nil)
	tw := &trackingWriter{ResponseWriter: w}
	defer g.finish(ctx, tw, r)
	g.next.ServeHTTP(tw, r.WithContext(ctx))
}

// withTimeLimit ends the request margin before the invoke deadline (or a quarter of the
// remaining time, when that is less).
func (g *guard) withTimeLimit(parent context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	deadline, ok := parent.Deadline()
	if !ok {
		return ctx, cancel
	}
	cut := deadline.Add(-min(g.margin, time.Until(deadline)/4))
	t := time.AfterFunc(time.Until(cut), func() { cancel(errTimeLimit) })
	return ctx, func(cause error) {
		t.Stop()
		cancel(cause)
	}
}

// finish recovers a panic and closes an answer the time limit cut short.
func (g *guard) finish(ctx context.Context, tw *trackingWriter, r *http.Request) {
	v := recover()
	var e *llm.Error
	switch {
	case v == http.ErrAbortHandler && tw.wrote:
		// The handler aborted a response on purpose: end it as it stands.
		return
	case v == http.ErrAbortHandler:
		// Nothing was sent; lambdaurl would answer an empty 200, which reads as success.
		e = &llm.Error{Status: http.StatusBadGateway, Type: llm.TypeServer, Code: "aborted",
			Message: "the gateway aborted this request before answering"}
	case v != nil:
		g.log.Error("panic", slog.String("path", r.URL.Path), slog.String("panic", fmt.Sprint(v)),
			slog.String("stack", string(debug.Stack())))
		e = &llm.Error{Status: http.StatusInternalServerError, Type: llm.TypeServer, Code: "internal_error",
			Message: "the gateway failed while handling this request"}
	case errors.Is(context.Cause(ctx), errTimeLimit) && !tw.ended:
		g.log.Warn("function time limit", slog.String("path", r.URL.Path), slog.Bool("output_started", tw.wrote))
		e = &llm.Error{Status: http.StatusGatewayTimeout, Type: llm.TypeTimeout, Code: "function_timeout",
			Message: "the gateway function reached its time limit before the answer was complete"}
	default:
		return
	}
	if !tw.wrote {
		gateway.WriteError(tw, r, e)
		return
	}
	if tw.sse && !tw.ended {
		_, _ = tw.Write(gateway.AppendErrorEvent(nil, r, e))
	}
	// A JSON body that was cut off cannot be repaired; the client's parser reports it.
}

// trackingWriter records what the client has been sent. The gateway writes each SSE event
// (or the events of one delta) with one Write, so the last Write tells whether the stream
// already ended: OpenAI's [DONE] or error event, Anthropic's message_stop or error event, a
// Responses stream's terminal event or error event.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
	sse   bool
	ended bool // the last event was [DONE] or an error event
}

var (
	doneEvent      = []byte("data: [DONE]")
	errorEvent     = []byte(`data: {"error"`)
	messageStop    = []byte("event: message_stop\n")
	anthropicError = []byte("event: error\n") // and the Responses door's
	// responsesEnds are the terminal events of a Responses stream.
	responsesEnds = [][]byte{[]byte("event: response.completed\n"), []byte("event: response.incomplete\n"), []byte("event: response.failed\n")}
)

func (t *trackingWriter) WriteHeader(code int) {
	if !t.wrote {
		t.wrote = true
		t.sse = bytes.HasPrefix([]byte(t.Header().Get("Content-Type")), []byte("text/event-stream"))
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.WriteHeader(http.StatusOK)
	}
	if t.sse {
		t.ended = bytes.HasPrefix(b, doneEvent) || bytes.HasPrefix(b, errorEvent) ||
			bytes.Contains(b, messageStop) || bytes.HasPrefix(b, anthropicError)
		for _, end := range responsesEnds {
			t.ended = t.ended || bytes.Contains(b, end)
		}
	}
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach lambdaurl's writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

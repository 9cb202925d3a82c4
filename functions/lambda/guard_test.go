package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
)

// serveWrapped runs h behind guard exactly as the bootstrap does, through lambdaurl.Wrap,
// whose handler goroutine has no recover: a panic that got past guard would crash the test
// binary.
func serveWrapped(t *testing.T, h http.HandlerFunc, timeout time.Duration) (int, map[string]string, string) {
	t.Helper()
	return serveWrappedPath(t, "/v1/chat/completions", h, timeout)
}

func serveWrappedPath(t *testing.T, path string, h http.HandlerFunc, timeout time.Duration) (int, map[string]string, string) {
	t.Helper()
	var logs bytes.Buffer
	g := &guard{next: h, log: slog.New(slog.NewJSONHandler(&logs, nil)), margin: 200 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := lambdaurl.Wrap(g)(ctx, &events.LambdaFunctionURLRequest{
		RawPath: path,
		RequestContext: events.LambdaFunctionURLRequestContext{DomainName: "x.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Headers, string(body)
}

func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

func TestGuardRecoversBeforeOutput(t *testing.T) {
	status, headers, body := serveWrapped(t, func(http.ResponseWriter, *http.Request) { panic("boom") }, 5*time.Second)
	if status != 500 || headers["Content-Type"] != "application/json" || !strings.Contains(body, `"code":"internal_error"`) {
		t.Fatalf("got %d %v %s; want a 500 JSON internal_error", status, headers, body)
	}
}

func TestGuardRecoversMidStream(t *testing.T) {
	status, _, body := serveWrapped(t, func(w http.ResponseWriter, _ *http.Request) {
		sseHeaders(w)
		_, _ = w.Write([]byte("data: {\"choices\":[]}\n\n"))
		panic("boom")
	}, 5*time.Second)
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	if !strings.HasSuffix(body, "data: {\"error\":{\"message\":\"the gateway failed while handling this request\",\"type\":\"server_error\",\"param\":null,\"code\":\"internal_error\"}}\n\n") {
		t.Fatalf("a panic after output must end the stream with an error event, got %q", body)
	}
}

func TestGuardEndsAbortedResponses(t *testing.T) {
	status, _, body := serveWrapped(t, func(w http.ResponseWriter, _ *http.Request) {
		sseHeaders(w)
		_, _ = w.Write([]byte("data: x\n\n"))
		panic(http.ErrAbortHandler)
	}, 5*time.Second)
	if status != 200 || body != "data: x\n\n" {
		t.Fatalf("got %d %q; an aborted response ends as it stands", status, body)
	}
	status, _, body = serveWrapped(t, func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }, 5*time.Second)
	if status != http.StatusBadGateway || !strings.Contains(body, `"code":"aborted"`) {
		t.Fatalf("an abort before output: got %d %q; want a 502, not lambdaurl's empty 200", status, body)
	}
}

// waitForCancel is a handler that streams (or not) and then blocks until its request is
// cancelled, as the gateway does while an upstream is slow.
func waitForCancel(stream bool, lastEvent string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if stream {
			sseHeaders(w)
			_, _ = w.Write([]byte(lastEvent))
		}
		<-r.Context().Done()
	}
}

// The guard ends the request before the invoke deadline: function_timeout is its own cause,
// which a request the deadline itself ended could not carry (its context would say
// DeadlineExceeded). No clock is read: the machine may be slow.
func TestGuardTimeLimitBeforeOutput(t *testing.T) {
	status, _, body := serveWrapped(t, waitForCancel(false, ""), time.Second)
	if status != http.StatusGatewayTimeout || !strings.Contains(body, `"code":"function_timeout"`) {
		t.Fatalf("got %d %s; want a 504 function_timeout", status, body)
	}
}

func TestGuardTimeLimitMidStream(t *testing.T) {
	_, _, body := serveWrapped(t, waitForCancel(true, "data: {\"choices\":[]}\n\n"), time.Second)
	if !strings.Contains(body, `"code":"function_timeout"`) || strings.Contains(body, "[DONE]") {
		t.Fatalf("got %q; want the stream closed with a function_timeout event", body)
	}
}

func TestGuardLeavesFinishedStreamsAlone(t *testing.T) {
	for _, last := range []string{"data: [DONE]\n\n", "data: {\"error\":{\"message\":\"upstream\"}}\n\n"} {
		_, _, body := serveWrapped(t, waitForCancel(true, last), time.Second)
		if body != last {
			t.Errorf("a stream that already ended with %q got more: %q", last, body)
		}
	}
}

// A Responses stream ends at its terminal event, which the guard leaves alone; one the time
// limit cuts ends with the Responses door's error event, and no response.completed.
func TestGuardResponsesStreams(t *testing.T) {
	for _, last := range []string{
		"event: response.output_item.done\ndata: {}\n\nevent: response.completed\ndata: {}\n\n",
		"event: response.incomplete\ndata: {}\n\n",
		"event: error\ndata: {}\n\nevent: response.failed\ndata: {}\n\n",
	} {
		_, _, body := serveWrappedPath(t, "/v1/responses", waitForCancel(true, last), time.Second)
		if body != last {
			t.Errorf("a stream that already ended with %q got more: %q", last, body)
		}
	}
	_, _, body := serveWrappedPath(t, "/v1/responses", waitForCancel(true, "event: response.output_text.delta\ndata: {}\n\n"), time.Second)
	if !strings.HasSuffix(body, "event: error\ndata: {\"type\":\"error\",\"code\":\"function_timeout\",\"message\":\"the gateway function reached its time limit before the answer was complete\",\"param\":null}\n\n") {
		t.Errorf("a cut Responses stream ends %q", body)
	}
}

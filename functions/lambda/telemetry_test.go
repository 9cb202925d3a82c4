package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/fakeruntime"
	"github.com/fngate/fngate/internal/otlpfake"
)

const tracedConfig = `
auth: none
connections: {mock: {kind: mock}}
models: {mock/echo: {routes: [{connection: mock, model: echo}]}}
telemetry: {otlp: {endpoint: "%s"}}
`

// TestSpansLeaveAfterTheResponseWithinTheInvoke: built with -tags otel, the bootstrap sends
// each invoke's spans and metrics after the response's last byte reached the Runtime API
// (the client's latency does not include them) and before it asks for the next event (after
// which Lambda may freeze it); the batch's own schedule (5 s) would have been too late.
func TestSpansLeaveAfterTheResponseWithinTheInvoke(t *testing.T) {
	rcv := otlpfake.New(t)
	in := startBin(t, bootstrapWith(t, "lambda.norpc,otel"), "FNGATE_CONFIG_YAML="+strings.Replace(tracedConfig, "%s", rcv.URL, 1), "FNGATE_URL_AUTH_TYPE=AWS_IAM")
	for _, stream := range []bool{true, false} {
		inv := in.rt.Invoke(fakeruntime.Request{Event: chat("mock/echo", stream)})
		res, err := inv.Wait(20 * time.Second)
		if err != nil || res.Kind != "response" {
			t.Fatalf("invoke: %v %v\n%s", err, res, in.out.String())
		}
		spans := rcv.WaitSpans(t, 2*(map[bool]int{true: 1, false: 2}[stream]), 5*time.Second)
		last := spans[len(spans)-1]
		// The poll after the one that delivered this invoke comes once the flush is done.
		var next time.Time
		for deadline := time.Now().Add(5 * time.Second); next.IsZero() && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			for _, p := range in.rt.Polls() {
				if p.After(inv.Delivered) {
					next = p
					break
				}
			}
		}
		if next.IsZero() {
			t.Fatal("the bootstrap did not ask for the next event")
		}
		if last.Received.Before(res.Finished) {
			t.Errorf("stream=%v: spans arrived %v before the response ended: the flush held back the client", stream, res.Finished.Sub(last.Received))
		}
		if last.Received.After(next) {
			t.Errorf("stream=%v: spans arrived %v after the next poll: outside the invoke", stream, last.Received.Sub(next))
		}
		if len(otlpfake.Find(spans, "SERVER", "chat mock/echo")) == 0 || last.Resource["faas.name"] != "fngate-test" || last.Resource["cloud.provider"] != "aws" {
			t.Errorf("spans:%s\nresource %v", otlpfake.Describe(spans), last.Resource)
		}
	}
	if len(rcv.Points("fngate.attempts")) == 0 {
		t.Error("no metrics flushed")
	}
	if !strings.Contains(in.out.String(), `"telemetry":"traces+metrics over OTLP"`) {
		t.Errorf("the ready line does not say where telemetry goes:\n%s", in.out.String())
	}
}

// TestWithoutTheExporterTelemetryIsRefused: the default bootstrap has no exporter; asked for
// telemetry, it refuses to start and says how to build one that has it, rather than sending
// nothing.
func TestWithoutTheExporterTelemetryIsRefused(t *testing.T) {
	for _, env := range [][]string{
		{"FNGATE_CONFIG_YAML=" + strings.Replace(tracedConfig, "%s", "http://127.0.0.1:1", 1)},
		{"FNGATE_CONFIG_YAML=auth: none\nconnections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n",
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318"},
	} {
		in := start(t, append(env, "FNGATE_URL_AUTH_TYPE=AWS_IAM")...)
		select {
		case <-in.exited:
		case <-time.After(10 * time.Second):
			t.Fatal("the bootstrap started without an exporter")
		}
		if in.cmd.ProcessState.ExitCode() == 0 || !strings.Contains(in.out.String(), "LAMBDA_TAGS=lambda.norpc,otel") {
			t.Errorf("exit %d, output %q", in.cmd.ProcessState.ExitCode(), in.out.String())
		}
	}
}

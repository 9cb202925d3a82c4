// Package otel exports the gateway's traces and metrics with the OpenTelemetry Go SDK over
// OTLP (http/protobuf or gRPC), in the GenAI semantic conventions: one SERVER span per
// inbound request, one CLIENT span per upstream attempt under it, and the
// gen_ai.client.* and gen_ai.server.* metrics plus fngate's own attempts, failovers and
// cost. It implements record.Tracer; the gateway knows nothing of OpenTelemetry.
//
//	otel.go       New: the settings (config, then the OTEL_* variables), exporters, providers; Flush, Shutdown
//	spans.go      the request and attempt spans and their attributes
//	metrics.go    the instruments and what each measurement carries
//	content.go    the conversation on the spans, only when capture_content is on
//	propagate.go  W3C trace context: from the client's traceparent, to the upstream's request
//	names.go      gen_ai.provider.name and gen_ai.operation.name of the gateway's kinds and doors
//
// Telemetry is off unless the config has a telemetry.otlp block or the environment sets
// OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ or _METRICS_ variant); OTEL_SDK_DISABLED=true
// turns it off whatever the config says, and OTEL_TRACES_EXPORTER=none or
// OTEL_METRICS_EXPORTER=none drop one signal. A config setting wins over its variable; the
// exporters read every OTEL_EXPORTER_OTLP_* variable the config leaves unset (timeouts,
// compression, certificates, per-signal endpoints and headers).
//
// Spans and metrics are batched and leave in the background, never on a client's time: a
// platform whose process may freeze between requests (Lambda) calls Flush once each response
// has been sent.
package otel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/record"
)

// scope names the instrumentation in every span and metric.
const scope = "github.com/fngate/fngate/core/gateway"

// Options are what a platform adds to the config's settings.
type Options struct {
	// Getenv reads the OTEL_* variables that decide whether telemetry is on and how; nil
	// means os.Getenv. (The exporters read their own variables from the process.)
	Getenv func(string) string
	// Resource describes the process beyond service.name (fngate, or OTEL_SERVICE_NAME) and
	// a fresh service.instance.id: cloud.provider, faas.name and the like. OTEL_RESOURCE_ATTRIBUTES
	// overrides them.
	Resource []attribute.KeyValue
	// HTTPClient, when set, sends the http/protobuf exports (one that adds credentials, for
	// a collector that wants them); nil uses the exporters' own.
	HTTPClient *http.Client
}

// Telemetry is a running export. A nil *Telemetry is telemetry turned off: its methods do
// nothing and Tracer returns nil.
type Telemetry struct {
	tp      *sdktrace.TracerProvider // nil: no traces
	mp      *sdkmetric.MeterProvider // nil: no metrics
	tracer  trace.Tracer
	m       func() *instruments // built on first use (lazyInstruments)
	prop    propagation.TextMapPropagator
	capture bool
}

// settings is what New decided, for its tests and the start-up log line.
type settings struct {
	protocol       string
	endpoint       string // "" leaves it to the exporters' variables
	headers        map[string]string
	ratio          *float64
	traces         bool
	metrics        bool
	captureContent bool
}

// New starts the export the config and the environment ask for, or returns nil when they
// ask for none.
func New(ctx context.Context, cfg *config.Config, opt Options) (*Telemetry, error) {
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s, on, err := decide(cfg, getenv)
	if err != nil || !on {
		return nil, err
	}
	res, err := newResource(ctx, opt.Resource)
	if err != nil {
		return nil, err
	}
	t := &Telemetry{prop: propagation.TraceContext{}, capture: s.captureContent}
	if s.traces {
		exp, err := traceExporter(ctx, s, opt.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("telemetry: traces exporter: %w", err)
		}
		topts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
		if s.ratio != nil {
			// A client's sampled traceparent is followed whatever the ratio: its trace is
			// already being recorded, and a hole in it would help nobody.
			topts = append(topts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*s.ratio))))
		}
		t.tp = sdktrace.NewTracerProvider(topts...)
		t.tracer = t.tp.Tracer(scope)
	} else {
		t.tracer = tracenoop.NewTracerProvider().Tracer(scope)
	}
	if s.metrics {
		exp, err := metricExporter(ctx, s, opt.HTTPClient)
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, fmt.Errorf("telemetry: metrics exporter: %w", err)
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	t.m = lazyInstruments(t.mp)
	return t, nil
}

// decide reads the settings: the config's block, else the environment's endpoint, turns
// telemetry on (config.TelemetryRequested).
func decide(cfg *config.Config, getenv func(string) string) (s settings, on bool, err error) {
	if !cfg.TelemetryRequested(getenv) {
		return s, false, nil
	}
	envEndpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" ||
		getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
	o := cfg.Telemetry.OTLP
	if o == nil {
		o = &config.OTLP{}
	}
	s = settings{protocol: o.Protocol, endpoint: o.Endpoint, headers: o.Headers, ratio: o.SampleRatio, captureContent: o.CaptureContent,
		traces: exporterOn(getenv("OTEL_TRACES_EXPORTER")), metrics: exporterOn(getenv("OTEL_METRICS_EXPORTER"))}
	if s.protocol == "" {
		s.protocol = firstSet(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), config.ProtocolHTTP)
	}
	if s.protocol != config.ProtocolHTTP && s.protocol != config.ProtocolGRPC {
		return s, false, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_PROTOCOL is %q; fngate exports http/protobuf or grpc", s.protocol)
	}
	if s.endpoint == "" && !envEndpoint {
		// The block alone means a collector on this host: the OpenTelemetry and ADOT Lambda
		// layers listen there, in plaintext.
		s.endpoint = "http://localhost:4318"
		if s.protocol == config.ProtocolGRPC {
			s.endpoint = "http://localhost:4317"
		}
	}
	return s, s.traces || s.metrics, nil
}

// exporterOn reads OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER: unset or otlp exports,
// none does not.
func exporterOn(v string) bool { return v == "" || strings.Contains(v, "otlp") }

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func newResource(ctx context.Context, attrs []attribute.KeyValue) (*resource.Resource, error) {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	base := append([]attribute.KeyValue{
		attribute.String("service.name", "fngate"),
		// Each process reports its own cumulative counts; without an id of its own, two
		// instances' series would be one to the backend.
		attribute.String("service.instance.id", hex.EncodeToString(id)),
	}, attrs...)
	res, err := resource.New(ctx, resource.WithAttributes(base...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

// signalURL appends a signal's path to a base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT does.
func signalURL(endpoint, path string) string {
	return strings.TrimSuffix(endpoint, "/") + path
}

func traceExporter(ctx context.Context, s settings, client *http.Client) (sdktrace.SpanExporter, error) {
	if s.protocol == config.ProtocolGRPC {
		var opts []otlptracegrpc.Option
		if s.endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(s.endpoint))
		}
		if len(s.headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(s.headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if s.endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(signalURL(s.endpoint, "/v1/traces")))
	}
	if len(s.headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(s.headers))
	}
	if client != nil {
		opts = append(opts, otlptracehttp.WithHTTPClient(client))
	}
	return otlptracehttp.New(ctx, opts...)
}

func metricExporter(ctx context.Context, s settings, client *http.Client) (sdkmetric.Exporter, error) {
	if s.protocol == config.ProtocolGRPC {
		var opts []otlpmetricgrpc.Option
		if s.endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(s.endpoint))
		}
		if len(s.headers) > 0 {
			opts = append(opts, otlpmetricgrpc.WithHeaders(s.headers))
		}
		return otlpmetricgrpc.New(ctx, opts...)
	}
	var opts []otlpmetrichttp.Option
	if s.endpoint != "" {
		opts = append(opts, otlpmetrichttp.WithEndpointURL(signalURL(s.endpoint, "/v1/metrics")))
	}
	if len(s.headers) > 0 {
		opts = append(opts, otlpmetrichttp.WithHeaders(s.headers))
	}
	if client != nil {
		opts = append(opts, otlpmetrichttp.WithHTTPClient(client))
	}
	return otlpmetrichttp.New(ctx, opts...)
}

// Tracer is the gateway's view of t: nil when t is.
func (t *Telemetry) Tracer() record.Tracer {
	if t == nil {
		return nil
	}
	return t
}

// Describe says where telemetry goes, for the start-up log line.
func (t *Telemetry) Describe() string {
	if t == nil {
		return "off"
	}
	var on []string
	if t.tp != nil {
		on = append(on, "traces")
	}
	if t.mp != nil {
		on = append(on, "metrics")
	}
	return strings.Join(on, "+") + " over OTLP"
}

// Flush exports what is batched, within ctx: a platform that freezes its process between
// requests (Lambda) calls it after each response.
func (t *Telemetry) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.ForceFlush(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.ForceFlush(ctx))
	}
	return errors.Join(errs...)
}

// Shutdown flushes and stops the export.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// FlushTimeout bounds a Flush to a collector on the same host, which answers in a
// millisecond or two; a collector that does not answer costs at most this.
const FlushTimeout = 2 * time.Second

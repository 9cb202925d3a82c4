package main

import (
	"context"
	"errors"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/record"
)

// exporter is the running OpenTelemetry export of a bootstrap built with -tags otel
// (telemetry_otel.go). The SDK and its OTLP exporters bring gRPC and protobuf along, about
// 5 MB of the bootstrap, so only deployments that trace pay for them; nil is no export.
type exporter struct {
	tracer record.Tracer
	flush  func(context.Context) error
	about  string
}

func (e *exporter) describe() string {
	if e == nil {
		return "off"
	}
	return e.about
}

// newExporter is set by telemetry_otel.go; nil in a bootstrap built without the exporter.
var newExporter func(ctx context.Context, cfg *config.Config, getenv func(string) string) (*exporter, error)

// errNoExporter refuses a config that asks for telemetry a bootstrap cannot send: silently
// sending nothing would look like a broken collector.
var errNoExporter = errors.New("the config or OTEL_EXPORTER_OTLP_ENDPOINT asks for OpenTelemetry export, and this bootstrap was built without it: build it with `make build-lambda LAMBDA_TAGS=lambda.norpc,otel` (or `LAMBDA_TAGS=lambda.norpc,otel sam build`), or remove the telemetry block and the OTEL_EXPORTER_OTLP_* variables")

// startTelemetry starts the export the config asks for, if any.
func startTelemetry(ctx context.Context, cfg *config.Config, getenv func(string) string) (*exporter, error) {
	if !cfg.TelemetryRequested(getenv) {
		return nil, nil
	}
	if newExporter == nil {
		return nil, errNoExporter
	}
	return newExporter(ctx, cfg, getenv)
}

//go:build otel

package main

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/telemetry/otel"
)

func init() { newExporter = otelExporter }

func otelExporter(ctx context.Context, cfg *config.Config, getenv func(string) string) (*exporter, error) {
	t, err := otel.New(ctx, cfg, otel.Options{Getenv: getenv, Resource: lambdaResource(getenv)})
	if err != nil || t == nil {
		return nil, err
	}
	return &exporter{tracer: t.Tracer(), flush: t.Flush, about: t.Describe()}, nil
}

// lambdaResource describes the function to the telemetry backend.
func lambdaResource(getenv func(string) string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("cloud.provider", "aws"),
		attribute.String("cloud.platform", "aws_lambda"),
	}
	for _, kv := range [][2]string{
		{"cloud.region", "AWS_REGION"}, {"faas.name", "AWS_LAMBDA_FUNCTION_NAME"},
		{"faas.version", "AWS_LAMBDA_FUNCTION_VERSION"}, {"faas.instance", "AWS_LAMBDA_LOG_STREAM_NAME"},
	} {
		if v := getenv(kv[1]); v != "" {
			attrs = append(attrs, attribute.String(kv[0], v))
		}
	}
	return attrs
}

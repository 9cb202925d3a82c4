package gcf

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/oauth2/google"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/telemetry/otel"
)

// googleTelemetryHost is Google Cloud's Telemetry (OTLP) API: OTLP/HTTP to it lands traces in
// Cloud Trace, authenticated with the function's own service account.
const googleTelemetryHost = "telemetry.googleapis.com"

// traceAppendScope is the OAuth scope the Telemetry API wants for traces.
const traceAppendScope = "https://www.googleapis.com/auth/trace.append"

// startTelemetry starts the OpenTelemetry export the config or the OTEL_* variables ask for;
// nil when none. An endpoint on telemetry.googleapis.com gets the function's credentials
// (Application Default Credentials), so spans go straight to Cloud Trace with no collector.
//
// Spans leave in batches in the background. Under request-based billing Cloud Run throttles
// an instance's CPU between requests, so a batch may wait for the next request or the
// instance's shutdown: deploy with CPU always allocated (instance-based billing) when every
// trace must arrive promptly (docs/observability.md, "Where the spans go").
func startTelemetry(ctx context.Context, cfg *config.Config, getenv func(string) string) (*otel.Telemetry, error) {
	opt := otel.Options{Getenv: getenv, Resource: gcpResource(getenv)}
	if toGoogle(cfg, getenv) {
		client, err := google.DefaultClient(ctx, traceAppendScope)
		if err != nil {
			return nil, fmt.Errorf("telemetry to %s: the function's credentials: %w", googleTelemetryHost, err)
		}
		opt.HTTPClient = client
	}
	return otel.New(ctx, cfg, opt)
}

// toGoogle reports whether the export goes to the Telemetry API: the config's endpoint, else
// the OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT variable, names its host.
func toGoogle(cfg *config.Config, getenv func(string) string) bool {
	endpoint := ""
	if o := cfg.Telemetry.OTLP; o != nil {
		endpoint = o.Endpoint
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if endpoint == "" {
			endpoint = getenv(v)
		}
	}
	u, err := url.Parse(endpoint)
	return err == nil && u.Hostname() == googleTelemetryHost
}

// gcpResource describes the function to the telemetry backend, from the variables Cloud Run
// sets (K_SERVICE, K_REVISION).
func gcpResource(getenv func(string) string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("cloud.provider", "gcp"),
		attribute.String("cloud.platform", "gcp_cloud_functions"),
	}
	for _, kv := range [][2]string{{"faas.name", "K_SERVICE"}, {"faas.version", "K_REVISION"}, {"cloud.account.id", "GOOGLE_CLOUD_PROJECT"}} {
		if v := getenv(kv[1]); v != "" {
			attrs = append(attrs, attribute.String(kv[0], v))
		}
	}
	return attrs
}

package otel

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fngate/fngate/core/record"
)

// Bucket boundaries the GenAI conventions advise.
var (
	durationBuckets   = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	firstChunkBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	tokenBuckets      = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// instruments are the metrics. Per attempt, as a client of the providers:
// gen_ai.client.operation.duration, gen_ai.client.token.usage,
// gen_ai.client.operation.time_to_first_chunk, fngate.attempts, fngate.failovers. Per
// request, as the server its clients call: gen_ai.server.request.duration,
// gen_ai.server.time_to_first_token, fngate.cost. Per guardrail decision:
// fngate.guardrail.decisions, fngate.guardrail.duration.
type instruments struct {
	duration   metric.Float64Histogram
	tokens     metric.Int64Histogram
	firstChunk metric.Float64Histogram
	attempts   metric.Int64Counter
	failovers  metric.Int64Counter
	server     metric.Float64Histogram
	serverTTFT metric.Float64Histogram
	cost       metric.Float64Counter
	guardrails metric.Int64Counter
	guardTime  metric.Float64Histogram
	toolCall   metric.Float64Histogram
}

// lazyInstruments builds the instruments when the first request records them, at its end:
// built in New they cost every cold start 0.12 ms (eleven instruments, six histograms'
// aggregators) before the first response byte. Their names and options are constants, so
// newInstruments fails only on a mistake of this file, which its tests catch; should it
// fail anyway, the error goes to OpenTelemetry's handler and metrics are dropped.
func lazyInstruments(mp *sdkmetric.MeterProvider) func() *instruments {
	return sync.OnceValue(func() *instruments {
		in, err := newInstruments(mp)
		if err != nil {
			otel.Handle(fmt.Errorf("telemetry: instruments: %w", err))
			in, _ = newInstruments(nil)
		}
		return in
	})
}

func newInstruments(mp *sdkmetric.MeterProvider) (*instruments, error) {
	var p metric.MeterProvider = metricnoop.NewMeterProvider()
	if mp != nil {
		p = mp
	}
	m := p.Meter(scope)
	in := &instruments{}
	var errs [11]error
	in.duration, errs[0] = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of one upstream attempt, to its last byte."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.tokens, errs[1] = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Input and output tokens of one attempt, as the upstream reported them."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	in.firstChunk, errs[2] = m.Float64Histogram("gen_ai.client.operation.time_to_first_chunk", metric.WithUnit("s"),
		metric.WithDescription("Time from an attempt's start to its first content chunk (streams)."), metric.WithExplicitBucketBoundaries(firstChunkBuckets...))
	in.attempts, errs[3] = m.Int64Counter("fngate.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Upstream attempts by route and outcome (ok, failover, error, client_closed)."))
	in.failovers, errs[4] = m.Int64Counter("fngate.failovers", metric.WithUnit("{failover}"),
		metric.WithDescription("Attempts that failed before any output and passed the request to the next route."))
	in.server, errs[5] = m.Float64Histogram("gen_ai.server.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of one request to the gateway, to its last byte."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.serverTTFT, errs[6] = m.Float64Histogram("gen_ai.server.time_to_first_token", metric.WithUnit("s"),
		metric.WithDescription("Time from a streamed request's arrival to its first content event."), metric.WithExplicitBucketBoundaries(firstChunkBuckets...))
	in.cost, errs[7] = m.Float64Counter("fngate.cost", metric.WithUnit("{USD}"),
		metric.WithDescription("Cost of the requests of priced models, in US dollars, by model and key."))
	in.guardrails, errs[8] = m.Int64Counter("fngate.guardrail.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("Guardrail decisions by guardrail, direction and action (pass, mask, block, log, error_open, error_closed)."))
	in.guardTime, errs[9] = m.Float64Histogram("fngate.guardrail.duration", metric.WithUnit("s"),
		metric.WithDescription("Time one request waited on a guardrail in one direction."), metric.WithExplicitBucketBoundaries(firstChunkBuckets...))
	in.toolCall, errs[10] = m.Float64Histogram("mcp.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of one call /mcp forwarded to an upstream MCP server."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// attempt records one attempt's measurements.
func (in *instruments) attempt(a *attempt, rec *record.Attempt, host string) {
	ctx := context.Background()
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs,
		keyOperation.String(a.op),
		keyProvider.String(a.provider),
		keyRequestModel.String(rec.UpstreamModel),
		keyRoute.String(rec.Route),
	)
	if rec.ResponseModel != "" {
		attrs = append(attrs, keyResponseModel.String(rec.ResponseModel))
	}
	if host != "" {
		attrs = append(attrs, keyServerAddress.String(host))
	}
	if rec.Failed() {
		attrs = append(attrs, keyErrorType.String(rec.ErrorClass))
	}
	set := attribute.NewSet(attrs...)
	in.duration.Record(ctx, rec.Latency.Seconds(), metric.WithAttributeSet(set))
	if rec.TTFT > 0 {
		in.firstChunk.Record(ctx, rec.TTFT.Seconds(), metric.WithAttributeSet(set))
	}
	if v := rec.Usage.InputTokens; v != nil {
		in.tokens.Record(ctx, int64(*v), metric.WithAttributeSet(attribute.NewSet(append(attrs, keyTokenType.String("input"))...)))
	}
	if v := rec.Usage.OutputTokens; v != nil {
		in.tokens.Record(ctx, int64(*v), metric.WithAttributeSet(attribute.NewSet(append(attrs, keyTokenType.String("output"))...)))
	}
	counted := []attribute.KeyValue{keyRoute.String(rec.Route), keyModel.String(rec.Model), keyProvider.String(a.provider), keyOutcome.String(rec.Outcome)}
	if rec.Failed() {
		counted = append(counted, keyErrorType.String(rec.ErrorClass))
	}
	in.attempts.Add(ctx, 1, metric.WithAttributes(counted...))
	if rec.Outcome == record.OutcomeFailover {
		in.failovers.Add(ctx, 1, metric.WithAttributes(keyRoute.String(rec.Route), keyModel.String(rec.Model), keyErrorType.String(rec.ErrorClass)))
	}
}

// request records one request's measurements.
func (in *instruments) request(q *request, rec *record.Request, errType string) {
	ctx := context.Background()
	attrs := []attribute.KeyValue{keyOperation.String(q.op), keyRequestModel.String(rec.Model), keyHTTPStatus.Int(rec.Status)}
	if rec.Route != "" {
		attrs = append(attrs, keyRoute.String(rec.Route))
	}
	if errType != "" {
		attrs = append(attrs, keyErrorType.String(errType))
	}
	set := attribute.NewSet(attrs...)
	in.server.Record(ctx, rec.Latency.Seconds(), metric.WithAttributeSet(set))
	if rec.TTFT > 0 {
		in.serverTTFT.Record(ctx, rec.TTFT.Seconds(), metric.WithAttributeSet(set))
	}
	if rec.CostUSD != nil {
		in.cost.Add(ctx, *rec.CostUSD, metric.WithAttributes(keyModel.String(rec.Model), keyKey.String(rec.Key)))
	}
	for i := range rec.Guardrails {
		g := &rec.Guardrails[i]
		set := metric.WithAttributes(keyGuardrail.String(g.Name), keyGuardrailOn.String(g.On), keyGuardrailAction.String(g.Action))
		in.guardrails.Add(ctx, 1, set)
		in.guardTime.Record(ctx, g.Latency.Seconds(), set)
	}
}

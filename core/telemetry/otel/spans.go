package otel

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/record"
)

// Attribute keys: the GenAI semantic conventions (semconv 1.41: gen_ai.provider.name, the
// cache token counts, time to first chunk), HTTP's, and fngate's own under fngate.*.
const (
	keyOperation      = attribute.Key("gen_ai.operation.name")
	keyProvider       = attribute.Key("gen_ai.provider.name")
	keyRequestModel   = attribute.Key("gen_ai.request.model")
	keyResponseModel  = attribute.Key("gen_ai.response.model")
	keyMaxTokens      = attribute.Key("gen_ai.request.max_tokens")
	keyTemperature    = attribute.Key("gen_ai.request.temperature")
	keyTopP           = attribute.Key("gen_ai.request.top_p")
	keyTopK           = attribute.Key("gen_ai.request.top_k")
	keyStream         = attribute.Key("gen_ai.request.stream")
	keyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheWrite     = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyReasoning      = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	keyFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	keyFirstChunk     = attribute.Key("gen_ai.response.time_to_first_chunk")
	keyTokenType      = attribute.Key("gen_ai.token.type")
	keyErrorType      = attribute.Key("error.type")
	keyServerAddress  = attribute.Key("server.address")
	keyServerPort     = attribute.Key("server.port")
	keyHTTPMethod     = attribute.Key("http.request.method")
	keyHTTPRoute      = attribute.Key("http.route")
	keyHTTPStatus     = attribute.Key("http.response.status_code")
	keyURLPath        = attribute.Key("url.path")
	keyUserAgent      = attribute.Key("user_agent.original")
	keyRequestID      = attribute.Key("fngate.request_id")
	keyModel          = attribute.Key("fngate.model") // the gateway model, beside the upstream's
	keyRoute          = attribute.Key("fngate.route")
	keyConnection     = attribute.Key("fngate.connection")
	keyResidency      = attribute.Key("fngate.residency")
	keyAttempt        = attribute.Key("fngate.attempt")
	keyAttempts       = attribute.Key("fngate.attempts")
	keyOutcome        = attribute.Key("fngate.outcome")
	keyCost           = attribute.Key("fngate.cost_usd")
	keyKey            = attribute.Key("fngate.key")
	keyKeyID          = attribute.Key("fngate.key_id") // a stored key's id, beside its name
	keyErrorCode      = attribute.Key("fngate.error.code")
	keyOverhead       = attribute.Key("fngate.overhead")
	keyUpstreamStatus = attribute.Key("fngate.upstream.status_code")
	keyTransport      = attribute.Key("fngate.transport") // websocket: a response.create of the Responses API's WebSocket mode
	keyCache          = attribute.Key("fngate.cache")     // the response cache's result: hit, miss, bypass
	// A hit's saved tokens: what the cached answer had used, which serving it again did not.
	keySavedInput  = attribute.Key("fngate.cache.saved.input_tokens")
	keySavedOutput = attribute.Key("fngate.cache.saved.output_tokens")
	// A guardrail's decision: an event on the request's span and the metrics' attributes.
	keyGuardrail           = attribute.Key("fngate.guardrail.name")
	keyGuardrailOn         = attribute.Key("fngate.guardrail.on") // input or output
	keyGuardrailMode       = attribute.Key("fngate.guardrail.mode")
	keyGuardrailAction     = attribute.Key("fngate.guardrail.action")
	keyGuardrailWouldBe    = attribute.Key("fngate.guardrail.would_be") // what mode log did not do
	keyGuardrailCategories = attribute.Key("fngate.guardrail.categories")
	keyGuardrailError      = attribute.Key("fngate.guardrail.error")
	keyGuardrailChecks     = attribute.Key("fngate.guardrail.checks")
	keyGuardrailCached     = attribute.Key("fngate.guardrail.cached")
	keyGuardrailDuration   = attribute.Key("fngate.guardrail.duration")
	keyGuardrailUnits      = attribute.Key("fngate.guardrail.units")
)

// guardrailEvents adds one event per guardrail decision: what was decided and what it cost,
// never the text it was about.
func guardrailEvents(span trace.Span, gs []record.Guardrail) {
	for i := range gs {
		g := &gs[i]
		attrs := []attribute.KeyValue{keyGuardrail.String(g.Name), keyGuardrailOn.String(g.On), keyGuardrailMode.String(g.Mode),
			keyGuardrailAction.String(g.Action), keyGuardrailChecks.Int(g.Checks), keyGuardrailDuration.Float64(g.Latency.Seconds())}
		if g.WouldBe != "" {
			attrs = append(attrs, keyGuardrailWouldBe.String(g.WouldBe))
		}
		if len(g.Categories) > 0 {
			attrs = append(attrs, keyGuardrailCategories.StringSlice(g.Categories))
		}
		if g.Error != "" {
			attrs = append(attrs, keyGuardrailError.String(g.Error))
		}
		if g.Cached > 0 {
			attrs = append(attrs, keyGuardrailCached.Int(g.Cached))
		}
		if g.Units > 0 {
			attrs = append(attrs, keyGuardrailUnits.Int(g.Units), keyCost.Float64(g.CostUSD))
		}
		span.AddEvent("fngate.guardrail", trace.WithAttributes(attrs...))
	}
}

// appendSaved appends a cache hit's saved tokens.
func appendSaved(attrs []attribute.KeyValue, u *llm.Usage) []attribute.KeyValue {
	if u.InputTokens != nil {
		attrs = append(attrs, keySavedInput.Int(*u.InputTokens))
	}
	if u.OutputTokens != nil {
		attrs = append(attrs, keySavedOutput.Int(*u.OutputTokens))
	}
	return attrs
}

// Request begins the SERVER span of an inbound request, a child of the client's span when
// its traceparent names one.
func (t *Telemetry) Request(r *http.Request, endpoint string) record.RequestTrace {
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	route := r.Pattern
	if route == "" {
		route = r.URL.Path
	}
	op := operationName(endpoint)
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs,
		keyHTTPMethod.String(r.Method),
		keyHTTPRoute.String(route),
		keyURLPath.String(r.URL.Path),
		keyUserAgent.String(r.UserAgent()),
		keyOperation.String(op),
	)
	// server.address is the host the client asked for, its port apart (as HTTP's conventions
	// have it); Host carries both.
	host, portText, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, portText = r.Host, ""
	}
	attrs = append(attrs, keyServerAddress.String(host))
	if p, err := strconv.Atoi(portText); err == nil {
		attrs = append(attrs, keyServerPort.Int(p))
	}
	_, span := t.tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return &request{t: t, span: span, start: time.Now(), endpoint: endpoint, op: op}
}

// request is the trace of one inbound request.
type request struct {
	t        *Telemetry
	span     trace.Span
	start    time.Time
	endpoint string
	op       string
	// params are the settings the client asked for, put on every attempt's span too.
	params []attribute.KeyValue
	output attribute.KeyValue // the answer's content, when captured, from the attempt that gave it
}

func (q *request) Decoded(req *llm.Request) {
	q.params = q.params[:0]
	if req.MaxTokens != nil {
		q.params = append(q.params, keyMaxTokens.Int(*req.MaxTokens))
	}
	if req.Temperature != nil {
		q.params = append(q.params, keyTemperature.Float64(*req.Temperature))
	}
	if req.TopP != nil {
		q.params = append(q.params, keyTopP.Float64(*req.TopP))
	}
	if req.TopK != nil {
		q.params = append(q.params, keyTopK.Int(*req.TopK))
	}
	q.params = append(q.params, keyStream.Bool(req.Stream))
	if !q.span.IsRecording() {
		return
	}
	q.span.SetName(q.op + " " + req.Model)
	q.span.SetAttributes(keyRequestModel.String(req.Model))
	q.span.SetAttributes(q.params...)
	if q.t.capture {
		q.span.SetAttributes(inputContent(req)...)
	}
}

func (q *request) TraceID() string {
	sc := q.span.SpanContext()
	if !sc.IsSampled() {
		return ""
	}
	return sc.TraceID().String()
}

// attemptKey finds an attempt's trace in its context, for the transport (propagate.go).
type attemptKey struct{}

// Attempt begins the CLIENT span of an attempt under the request's span; its context goes to
// the provider, whose HTTP calls carry it upstream.
func (q *request) Attempt(ctx context.Context, rec *record.Attempt) (context.Context, record.AttemptTrace) {
	op := operationName(rec.Endpoint)
	provider := providerName(rec.Provider)
	attrs := make([]attribute.KeyValue, 0, 10+len(q.params))
	attrs = append(attrs,
		keyOperation.String(op),
		keyProvider.String(provider),
		keyRequestModel.String(rec.UpstreamModel),
		keyModel.String(rec.Model),
		keyRoute.String(rec.Route),
		keyConnection.String(rec.Connection),
		keyAttempt.Int(rec.Attempt),
	)
	if rec.Residency != "" {
		attrs = append(attrs, keyResidency.String(rec.Residency))
	}
	attrs = append(attrs, q.params...)
	ctx, span := q.t.tracer.Start(trace.ContextWithSpan(ctx, q.span), op+" "+rec.UpstreamModel,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	a := &attempt{q: q, span: span, op: op, provider: provider}
	return context.WithValue(ctx, attemptKey{}, a), a
}

func (q *request) End(rec *record.Request) {
	if rec.Endpoint != q.endpoint { // count_tokens is the Messages door's until it says
		q.endpoint, q.op = rec.Endpoint, operationName(rec.Endpoint)
	}
	errType := ""
	if rec.Error != nil {
		errType = firstSet(rec.Error.Code, rec.Error.Type, strconv.Itoa(rec.Status))
	}
	q.t.m().request(q, rec, errType)
	if !q.span.IsRecording() {
		q.span.End()
		return
	}
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs,
		keyOperation.String(q.op),
		keyHTTPStatus.Int(rec.Status),
		keyRequestID.String(rec.RequestID),
		keyAttempts.Int(rec.Attempts),
		keyOverhead.Float64(rec.Overhead.Seconds()),
	)
	if rec.Model != "" {
		q.span.SetName(q.op + " " + rec.Model)
		attrs = append(attrs, keyRequestModel.String(rec.Model))
	}
	if rec.Route != "" {
		attrs = append(attrs, keyRoute.String(rec.Route))
	}
	if rec.Key != "" {
		attrs = append(attrs, keyKey.String(rec.Key))
	}
	if rec.KeyID != "" {
		attrs = append(attrs, keyKeyID.String(rec.KeyID))
	}
	if rec.Transport != "" {
		attrs = append(attrs, keyTransport.String(rec.Transport))
	}
	if rec.Cache != "" {
		attrs = append(attrs, keyCache.String(rec.Cache))
		attrs = appendSaved(attrs, &rec.Saved)
	}
	if rec.TTFT > 0 {
		attrs = append(attrs, keyFirstChunk.Float64(rec.TTFT.Seconds()))
	}
	attrs = appendUsage(attrs, &rec.Usage)
	if rec.CostUSD != nil {
		attrs = append(attrs, keyCost.Float64(*rec.CostUSD))
	}
	if q.output.Valid() {
		attrs = append(attrs, q.output)
	}
	if errType != "" {
		attrs = append(attrs, keyErrorType.String(errType))
	}
	q.span.SetAttributes(attrs...)
	guardrailEvents(q.span, rec.Guardrails)
	// HTTP's rule for a server: a 4xx is the client's mistake, not the span's; a stream
	// that failed after its 200 is an error.
	if rec.Error != nil && (rec.Status >= 500 || rec.Status < 400) {
		q.span.SetStatus(codes.Error, rec.Error.Message)
	}
	q.span.End()
}

// attempt is the trace of one attempt.
type attempt struct {
	q        *request
	span     trace.Span
	op       string
	provider string
	content  *output // the answer as captured; nil unless capture_content is on

	mu   sync.Mutex
	host string // where its call went (propagate.go); "" for gRPC and the mock
	port int
}

func (a *attempt) Answer(ans *llm.Answer) {
	if a.q.t.capture && a.span.IsRecording() {
		a.content = answerContent(ans)
	}
}

func (a *attempt) Delta(d *llm.Delta) {
	if !a.q.t.capture || !a.span.IsRecording() {
		return
	}
	if a.content == nil {
		a.content = &output{}
	}
	a.content.add(d)
}

func (a *attempt) server() (string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.host, a.port
}

func (a *attempt) End(rec *record.Attempt) {
	host, port := a.server()
	a.q.t.m().attempt(a, rec, host)
	if !a.span.IsRecording() {
		a.span.End()
		return
	}
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, keyOutcome.String(rec.Outcome))
	if host != "" {
		attrs = append(attrs, keyServerAddress.String(host), keyServerPort.Int(port))
	}
	if rec.ResponseModel != "" {
		attrs = append(attrs, keyResponseModel.String(rec.ResponseModel))
	}
	if rec.Stop != "" {
		attrs = append(attrs, keyFinishReasons.StringSlice([]string{string(rec.Stop)}))
	}
	if rec.TTFT > 0 {
		attrs = append(attrs, keyFirstChunk.Float64(rec.TTFT.Seconds()))
	}
	attrs = appendUsage(attrs, &rec.Usage)
	attrs = appendSaved(attrs, &rec.Saved)
	if rec.CostUSD != nil {
		attrs = append(attrs, keyCost.Float64(*rec.CostUSD))
	}
	if rec.Status != 0 {
		attrs = append(attrs, keyUpstreamStatus.Int(rec.Status))
	}
	if rec.Failed() {
		attrs = append(attrs, keyErrorType.String(rec.ErrorClass))
		if rec.ErrorCode != "" {
			attrs = append(attrs, keyErrorCode.String(rec.ErrorCode))
		}
		a.span.SetStatus(codes.Error, rec.ErrorMessage) // scrubbed of secrets and cut by the gateway
	}
	if a.content != nil {
		out := a.content.attribute(rec.Stop)
		attrs = append(attrs, out)
		if rec.Outcome == record.OutcomeOK || rec.Outcome == record.OutcomeCacheHit {
			a.q.output = out
		}
	}
	a.span.SetAttributes(attrs...)
	a.span.End()
}

// appendUsage appends the reported counts: input counts the whole prompt, cache reads and
// writes included, as the conventions say.
func appendUsage(attrs []attribute.KeyValue, u *llm.Usage) []attribute.KeyValue {
	add := func(k attribute.Key, v *int) {
		if v != nil {
			attrs = append(attrs, k.Int(*v))
		}
	}
	add(keyInputTokens, u.InputTokens)
	add(keyOutputTokens, u.OutputTokens)
	add(keyCacheRead, u.CacheReadTokens)
	add(keyCacheWrite, u.CacheWriteTokens)
	add(keyReasoning, u.ReasoningTokens)
	return attrs
}

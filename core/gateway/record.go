package gateway

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/record"
)

func (g *Gateway) newAttempt(rc *requestCtx, rt *route, n int) *record.Attempt {
	return &record.Attempt{
		Time:          g.now(),
		RequestID:     rc.id,
		Endpoint:      rc.endpoint,
		Model:         rc.model,
		Route:         rt.id,
		Connection:    rt.conn,
		Provider:      rt.kind,
		UpstreamModel: rt.target.Model,
		Residency:     rt.residency,
		Attempt:       n + 1,
		Stream:        rc.stream,
		Labels:        rc.labels,
		Transport:     rc.transport(),
	}
}

func setError(a *record.Attempt, pe *providers.Error) {
	a.Status = pe.Status
	a.ErrorClass = string(pe.Class)
	a.ErrorCode = pe.Code
	a.ErrorMessage = pe.Message
}

// setUsage records the attempt's usage and its cost; each attempt is charged on its own, to
// the key's counters too. Every provider's usage, streamed or not, passes here before the
// client or a log line sees it, so this is where impossible counts are dropped.
func (g *Gateway) setUsage(at *attempt, u *llm.Usage, m *model, rc *requestCtx) {
	if u == nil {
		return
	}
	a := at.rec
	at.impossible = append(at.impossible, u.DropImpossible()...)
	rc.charge(at, u, m)
	if !u.Reported() {
		return
	}
	a.Usage = *u
	rc.usage.Merge(u)
	rc.used.add(u)
	price := cost
	if m.cfg.Embedding() {
		price = embeddingCost
	}
	if c, ok := price(m.cfg.Price, u); ok {
		a.CostUSD = &c
		rc.costUSD += c
		rc.costSet = true
	}
}

// cost is USD for the attempt's usage: input read from a cache takes the cached price and
// input written to one the cache-write price, when the model has them. Without both input
// and output counts there is no honest cost.
func cost(p *config.Price, u *llm.Usage) (float64, bool) {
	if p == nil || u.InputTokens == nil || u.OutputTokens == nil {
		return 0, false
	}
	input := float64(*u.InputTokens)
	cachedPrice, writePrice := p.InputPerMTok, p.InputPerMTok
	if p.CachedInputPerMTok != nil {
		cachedPrice = *p.CachedInputPerMTok
	}
	if p.CacheWritePerMTok != nil {
		writePrice = *p.CacheWritePerMTok
	}
	var cached, written float64
	if c := u.CacheReadTokens; c != nil {
		cached = math.Min(float64(*c), input)
	}
	if c := u.CacheWriteTokens; c != nil {
		written = math.Min(float64(*c), input-cached)
	}
	usd := ((input-cached-written)*p.InputPerMTok + cached*cachedPrice + written*writePrice + float64(*u.OutputTokens)*p.OutputPerMTok) / 1e6
	return usd, true
}

func (g *Gateway) logAttempt(at *attempt) {
	a := at.rec
	for _, c := range at.impossible {
		g.log.LogAttrs(context.Background(), slog.LevelWarn, record.MsgImpossibleUsage,
			slog.String("request_id", a.RequestID),
			slog.String("model", a.Model),
			slog.String("route", a.Route),
			slog.String("connection", a.Connection),
			slog.String("provider", a.Provider),
			slog.String("field", c.Field),
			slog.Int("value", c.Value))
	}
	attrs := make([]slog.Attr, 0, 24)
	attrs = append(attrs,
		slog.String("request_id", a.RequestID),
		slog.String("endpoint", a.Endpoint),
		slog.String("model", a.Model),
		slog.String("route", a.Route),
		slog.String("connection", a.Connection),
		slog.String("provider", a.Provider),
		slog.String("upstream_model", a.UpstreamModel),
		slog.String("residency", a.Residency),
		slog.Int("attempt", a.Attempt),
		slog.Bool("stream", a.Stream),
		slog.String("outcome", a.Outcome),
		slog.Float64("latency_ms", ms(a.Latency)),
	)
	if a.ResponseModel != "" && a.ResponseModel != a.UpstreamModel {
		// The dated snapshot behind an alias (gpt-4o answered by gpt-4o-2024-08-06).
		attrs = append(attrs, slog.String("response_model", a.ResponseModel))
	}
	if a.Transport != "" {
		attrs = append(attrs, slog.String("transport", a.Transport))
	}
	if a.Status != 0 {
		attrs = append(attrs, slog.Int("status", a.Status))
	}
	if a.TTFT > 0 {
		attrs = append(attrs, slog.Float64("ttft_ms", ms(a.TTFT)))
	}
	switch {
	case a.ErrorClass != "":
		attrs = append(attrs, slog.String("error_class", a.ErrorClass), slog.String("error_code", a.ErrorCode), slog.String("error_message", a.ErrorMessage))
	case a.ErrorCode != "": // the gateway's own end of the attempt (function_timeout), no provider's failure
		attrs = append(attrs, slog.String("error_code", a.ErrorCode), slog.String("error_message", a.ErrorMessage))
	}
	if a.Usage.Reported() {
		attrs = append(attrs, slog.Any("usage", usageAttrs(&a.Usage)))
	}
	if a.CostUSD != nil {
		attrs = append(attrs, slog.Float64("cost_usd", *a.CostUSD))
	}
	if a.Saved.Reported() {
		attrs = append(attrs, slog.Any("saved", usageAttrs(&a.Saved)))
	}
	if len(a.Labels) > 0 {
		attrs = append(attrs, slog.Attr{Key: "labels", Value: slog.GroupValue(a.Labels...)})
	}
	level, msg := slog.LevelInfo, record.MsgAttempt
	if a.Failed() {
		level, msg = slog.LevelError, record.MsgProviderError
	}
	g.log.LogAttrs(context.Background(), level, msg, attrs...)
	at.endTrace()
	if g.onAttempt != nil {
		g.onAttempt(a)
	}
}

// usageAttrs renders only the reported counts, in OpenAI's names (prompt_tokens counts the
// whole input, cached_tokens and cache_write_tokens the shares of it read from and written to
// a cache).
func usageAttrs(u *llm.Usage) slog.Value {
	var as []slog.Attr
	add := func(name string, v *int) {
		if v != nil {
			as = append(as, slog.Int(name, *v))
		}
	}
	add("prompt_tokens", u.InputTokens)
	add("completion_tokens", u.OutputTokens)
	add("total_tokens", u.TotalTokens)
	add("cached_tokens", u.CacheReadTokens)
	add("cache_write_tokens", u.CacheWriteTokens)
	add("reasoning_tokens", u.ReasoningTokens)
	return slog.GroupValue(as...)
}

// logRequest writes the one summary line per request.
func (g *Gateway) logRequest(rc *requestCtx, status int, route string, oe *llm.Error) {
	now := time.Now()
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.String("request_id", rc.id),
		slog.String("endpoint", rc.endpoint),
		slog.String("model", rc.model),
		slog.Bool("stream", rc.stream),
		slog.Int("status", status),
		slog.Int("attempts", rc.attempts),
		slog.Float64("latency_ms", ms(now.Sub(rc.start))),
		slog.Float64("overhead_ms", ms(rc.overhead(now))),
	)
	if route != "" {
		attrs = append(attrs, slog.String("route", route))
	}
	if rc.socket != "" {
		attrs = append(attrs, slog.String("transport", record.TransportWebSocket), slog.String("websocket_id", rc.socket))
	}
	if rc.ttft > 0 {
		attrs = append(attrs, slog.Float64("ttft_ms", ms(rc.ttft)))
	}
	if oe != nil {
		attrs = append(attrs, slog.String("error_code", oe.Code), slog.String("error_message", oe.Message))
		if oe.Param != "" {
			attrs = append(attrs, slog.String("error_param", oe.Param))
		}
	}
	if rc.usage.Reported() {
		attrs = append(attrs, slog.Any("usage", usageAttrs(&rc.usage)))
	}
	if rc.costSet || rc.guardCost() > 0 {
		attrs = append(attrs, slog.Float64("cost_usd", rc.costUSD+rc.guardCost()))
	}
	if len(rc.guardrails) > 0 {
		attrs = append(attrs, slog.Any("guardrails", guardrailLogs(rc.guardrails)))
	}
	if rc.cache != "" {
		attrs = append(attrs, slog.String("cache", rc.cache))
	}
	if rc.cacheLookup > 0 {
		attrs = append(attrs, slog.Float64("cache_lookup_ms", ms(rc.cacheLookup)))
	}
	if rc.saved.Reported() {
		attrs = append(attrs, slog.Any("saved", usageAttrs(&rc.saved)))
	}
	if len(rc.skipped) > 0 {
		attrs = append(attrs, slog.String("skipped", strings.Join(rc.skipped, "; ")))
	}
	lbs := rc.labels
	if lbs == nil && rc.key != nil {
		// Refused before its body was decoded (labels come from the body): still its key.
		lbs = appendKey(nil, rc.key)
	}
	if len(lbs) > 0 {
		attrs = append(attrs, slog.Attr{Key: "labels", Value: slog.GroupValue(lbs...)})
	}
	if rc.trace != nil {
		if id := rc.trace.TraceID(); id != "" {
			attrs = append(attrs, slog.String("trace_id", id))
		}
	}
	g.log.LogAttrs(context.Background(), slog.LevelInfo, record.MsgRequest, attrs...)
	rc.endTrace(now, status, route, oe)
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

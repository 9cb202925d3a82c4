package otel_test

import (
	"context"
	"fmt"

	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/record"

	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/core/telemetry/otel"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
	"github.com/fngate/fngate/internal/otlpfake"
)

// The client's trace context, as an OpenTelemetry-instrumented app sends it.
const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
)

func noEnv(string) string { return "" }

type served struct {
	*gatewaytest.Server
	tel  *otel.Telemetry
	logs *gatewaytest.LogBuffer
}

// serve builds a gateway of yamlConfig traced by the telemetry its config asks for.
func serve(t *testing.T, yamlConfig string) *served {
	t.Helper()
	return serveWith(t, yamlConfig, gateway.Options{})
}

// serveWith is serve with more of the gateway's options.
func serveWith(t *testing.T, yamlConfig string, opt gateway.Options) *served {
	t.Helper()
	cfg := gatewaytest.Config(t, yamlConfig, config.Options{Getenv: noEnv})
	tel, err := otel.New(context.Background(), cfg, otel.Options{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if tel == nil {
		t.Fatal("telemetry is off")
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	logs := &gatewaytest.LogBuffer{}
	reg := providers.Registry{}
	mock.Register(reg)
	openaicompat.Register(reg)
	anthropic.Register(reg)
	opt.Registry, opt.Tracer = reg, tel.Tracer()
	opt.Logger = telemetry.NewLogger(logs, telemetry.FormatCloudWatch, cfg.Secrets)
	srv := gatewaytest.Serve(t, cfg, opt)
	return &served{Server: srv, tel: tel, logs: logs}
}

// flush waits for n request lines (a request's trace ends with its line), then exports.
func (s *served) flush(t *testing.T, n int) {
	t.Helper()
	s.logs.AfterRequests(t, n)
	if err := s.tel.Flush(context.Background()); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

func fakeUpstream(t *testing.T) *openaifake.Server {
	f := openaifake.New()
	t.Cleanup(f.Close)
	return f
}

func failoverConfig(receiver string, a, b *openaifake.Server, extra string) string {
	return fmt.Sprintf(`
auth: none
connections:
  a: {kind: openai, api_key: sk-a-0123456789, base_url: "%s"}
  b: {kind: openai, api_key: sk-b-0123456789, base_url: "%s"}
models:
  m:
    price: {input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 0.5}
    routing: {max_attempts: 2}
    routes:
      - {connection: a, model: model-a}
      - {connection: b, model: model-b}
telemetry:
  otlp:
    endpoint: %s
    sample_ratio: 1
%s`, a.BaseURL(), b.BaseURL(), receiver, extra)
}

const failoverBody = `{"model":"m","max_completion_tokens":50,"temperature":0.25,"messages":[{"role":"user","content":"say hi"}]%s}`

// TestFailoverTraceContinuesTheClientsTrace: one SERVER span under the client's span, one
// CLIENT span per attempt under it with the GenAI attributes, each upstream call carrying its
// attempt's traceparent, the request's log line naming the trace, and the metrics by route
// and outcome; streamed and not.
func TestFailoverTraceContinuesTheClientsTrace(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			rcv := otlpfake.New(t)
			a, b := fakeUpstream(t), fakeUpstream(t)
			a.Enqueue(openaifake.Reply{Status: 503})
			b.Enqueue(openaifake.Reply{Text: "hi there", PromptTokens: 12, CompletionTokens: 3, CachedTokens: 4, Model: "model-b-2025-01-01"})
			g := serve(t, failoverConfig(rcv.URL, a, b, ""))
			body := fmt.Sprintf(failoverBody, "")
			if stream {
				body = fmt.Sprintf(failoverBody, `,"stream":true,"stream_options":{"include_usage":true}`)
			}
			r := g.Chat(t, body, "traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			g.flush(t, 1)

			spans := rcv.WaitSpans(t, 3, 5*time.Second)
			servers, clients := otlpfake.Find(spans, "SERVER", ""), otlpfake.Find(spans, "CLIENT", "")
			if len(servers) != 1 || len(clients) != 2 {
				t.Fatalf("want 1 SERVER and 2 CLIENT spans:%s", otlpfake.Describe(spans))
			}
			srv := servers[0]
			if srv.TraceID != clientTrace || srv.ParentID != clientSpan {
				t.Errorf("SERVER span trace %s parent %s; want the client's %s and %s", srv.TraceID, srv.ParentID, clientTrace, clientSpan)
			}
			if srv.Name != "chat m" {
				t.Errorf("SERVER span name %q", srv.Name)
			}
			wantAttrs(t, "SERVER", srv.Attrs, map[string]any{
				"gen_ai.operation.name":                "chat",
				"gen_ai.request.model":                 "m",
				"gen_ai.request.max_tokens":            int64(50),
				"gen_ai.request.temperature":           0.25,
				"gen_ai.request.stream":                stream,
				"http.request.method":                  "POST",
				"http.route":                           "/v1/chat/completions",
				"http.response.status_code":            int64(200),
				"server.address":                       "127.0.0.1",
				"server.port":                          port(t, g.URL),
				"fngate.attempts":                      int64(2),
				"fngate.route":                         "b/model-b",
				"gen_ai.usage.input_tokens":            int64(12),
				"gen_ai.usage.output_tokens":           int64(3),
				"gen_ai.usage.cache_read.input_tokens": int64(4),
				"fngate.cost_usd":                      (8*2 + 4*0.5 + 3*8) / 1e6,
			})
			if _, ok := srv.Attrs["gen_ai.input.messages"]; ok {
				t.Error("the SERVER span records the conversation without capture_content")
			}
			if srv.Resource["service.name"] != "fngate" || srv.Resource["service.instance.id"] == "" {
				t.Errorf("resource %v", srv.Resource)
			}

			first, second := clients[0], clients[1]
			for _, c := range clients {
				if c.TraceID != clientTrace || c.ParentID != srv.SpanID {
					t.Errorf("CLIENT span %q: trace %s parent %s; want %s under the SERVER span %s", c.Name, c.TraceID, c.ParentID, clientTrace, srv.SpanID)
				}
			}
			wantAttrs(t, "first CLIENT", first.Attrs, map[string]any{
				"gen_ai.operation.name":       "chat",
				"gen_ai.provider.name":        "openai",
				"gen_ai.request.model":        "model-a",
				"gen_ai.request.max_tokens":   int64(50),
				"fngate.attempt":              int64(1),
				"fngate.outcome":              "failover",
				"fngate.route":                "a/model-a",
				"error.type":                  "unavailable",
				"fngate.upstream.status_code": int64(503),
				"server.address":              "127.0.0.1",
				"server.port":                 port(t, a.URL),
			})
			if first.Name != "chat model-a" || first.StatusCode != "ERROR" {
				t.Errorf("first attempt: name %q status %s", first.Name, first.StatusCode)
			}
			wantAttrs(t, "second CLIENT", second.Attrs, map[string]any{
				"gen_ai.provider.name":           "openai",
				"gen_ai.request.model":           "model-b",
				"gen_ai.response.model":          "model-b-2025-01-01",
				"gen_ai.response.finish_reasons": []any{"end_turn"},
				"gen_ai.usage.input_tokens":      int64(12),
				"gen_ai.usage.output_tokens":     int64(3),
				"fngate.attempt":                 int64(2),
				"fngate.outcome":                 "ok",
				"server.port":                    port(t, b.URL),
			})
			if _, ok := second.Attrs["error.type"]; ok || second.StatusCode == "ERROR" {
				t.Errorf("the attempt that answered is marked failed: %v %s", second.Attrs["error.type"], second.StatusCode)
			}
			if _, ok := second.Attrs["gen_ai.response.time_to_first_chunk"]; ok != stream {
				t.Errorf("time_to_first_chunk present = %v on a stream=%v attempt", ok, stream)
			}

			// Each upstream call went out under its own attempt's span.
			for _, up := range []struct {
				f    *openaifake.Server
				span otlpfake.Span
			}{{a, first}, {b, second}} {
				reqs := up.f.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d upstream requests", len(reqs))
				}
				if got, want := reqs[0].Header.Get("Traceparent"), "00-"+clientTrace+"-"+up.span.SpanID+"-01"; got != want {
					t.Errorf("upstream traceparent %q, want %q", got, want)
				}
			}

			if l := g.logs.Lines(t, record.MsgRequest)[0]; l["trace_id"] != clientTrace {
				t.Errorf("request line trace_id = %v", l["trace_id"])
			}

			wantPoints(t, rcv, "gen_ai.client.operation.duration", map[string]any{"fngate.route": "a/model-a", "error.type": "unavailable"}, 1)
			wantPoints(t, rcv, "gen_ai.client.operation.duration", map[string]any{"fngate.route": "b/model-b", "gen_ai.response.model": "model-b-2025-01-01"}, 1)
			wantPoints(t, rcv, "gen_ai.client.token.usage", map[string]any{"gen_ai.token.type": "input", "gen_ai.provider.name": "openai"}, 12)
			wantPoints(t, rcv, "gen_ai.client.token.usage", map[string]any{"gen_ai.token.type": "output"}, 3)
			wantPoints(t, rcv, "fngate.attempts", map[string]any{"fngate.route": "a/model-a", "fngate.outcome": "failover"}, 1)
			wantPoints(t, rcv, "fngate.attempts", map[string]any{"fngate.route": "b/model-b", "fngate.outcome": "ok"}, 1)
			wantPoints(t, rcv, "fngate.failovers", map[string]any{"fngate.route": "a/model-a", "error.type": "unavailable"}, 1)
			wantPoints(t, rcv, "gen_ai.server.request.duration", map[string]any{"gen_ai.request.model": "m", "http.response.status_code": int64(200)}, 1)
			wantPoints(t, rcv, "fngate.cost", map[string]any{"fngate.model": "m"}, (8*2+4*0.5+3*8)/1e6)
			if stream {
				wantPoints(t, rcv, "gen_ai.client.operation.time_to_first_chunk", map[string]any{"fngate.route": "b/model-b"}, 1)
				wantPoints(t, rcv, "gen_ai.server.time_to_first_token", map[string]any{"gen_ai.request.model": "m"}, 1)
			} else if p := rcv.Points("gen_ai.client.operation.time_to_first_chunk"); len(p) != 0 {
				t.Errorf("time to first chunk of a non-streamed answer: %v", p)
			}
		})
	}
}

// wantAttrs checks the attributes named in want.
func wantAttrs(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		if f, isF := v.(float64); isF {
			if gf, _ := g.(float64); ok && abs(gf-f) < 1e-12 {
				continue
			}
		} else if ok && fmt.Sprint(g) == fmt.Sprint(v) && fmt.Sprintf("%T", g) == fmt.Sprintf("%T", v) {
			continue
		}
		t.Errorf("%s span: %s = %#v (present %v), want %#v", what, k, g, ok, v)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// wantPoints checks that metric has one point whose attributes include match, with value
// want: a counter's or gauge's value, a histogram's count (its sum for gen_ai.client.token.usage,
// whose count would always be 1 here).
func wantPoints(t *testing.T, rcv *otlpfake.Receiver, metric string, match map[string]any, want float64) {
	t.Helper()
	points := rcv.WaitMetric(t, metric, 5*time.Second)
	for _, p := range points {
		ok := true
		for k, v := range match {
			if fmt.Sprint(p.Attrs[k]) != fmt.Sprint(v) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		got := p.Value
		if p.Bounds != nil && metric != "gen_ai.client.token.usage" && !strings.HasSuffix(metric, "cost") {
			got = float64(p.Count)
		}
		if abs(got-want) > 1e-12 {
			t.Errorf("%s %v = %v, want %v", metric, match, got, want)
		}
		return
	}
	t.Errorf("%s: no point with %v among %+v", metric, match, points)
}

func port(t *testing.T, raw string) int64 {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return int64(p)
}

const mockConfig = `
auth: none
connections:
  mock: {kind: mock}
models:
  m: {routes: [{connection: mock, model: echo}]}
  broken: {routes: [{connection: mock, model: "error:503"}]}
  e: {kind: embedding, dimensions: 8, routes: [{connection: mock, model: embed}]}
telemetry:
  otlp:
%s`

// TestEveryDoorHasAServerSpan: chat, legacy completions, Messages, count_tokens, Responses and
// embeddings each give one SERVER span named for its GenAI operation, with one CLIENT span
// under it.
func TestEveryDoorHasAServerSpan(t *testing.T) {
	rcv := otlpfake.New(t)
	g := serve(t, fmt.Sprintf(mockConfig, "    endpoint: "+rcv.URL))
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/completions", `{"model":"m","prompt":"once upon"}`},
		{"/v1/messages", `{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses", `{"model":"m","input":"hi"}`},
		{"/v1/embeddings", `{"model":"e","input":["a b c"]}`},
	} {
		if r := g.Do(t, "POST", c.path, c.body, "anthropic-version", "2023-06-01"); r.Status != 200 {
			t.Fatalf("%s: status %d: %s", c.path, r.Status, r.Body)
		}
	}
	g.flush(t, 6)
	spans := rcv.WaitSpans(t, 12, 5*time.Second)
	for _, want := range []struct{ name, route, op string }{
		{"chat m", "/v1/chat/completions", "chat"},
		{"text_completion m", "/v1/completions", "text_completion"},
		{"chat m", "/v1/messages", "chat"},
		{"count_tokens m", "/v1/messages/count_tokens", "count_tokens"},
		{"chat m", "/v1/responses", "chat"},
		{"embeddings e", "/v1/embeddings", "embeddings"},
	} {
		var found *otlpfake.Span
		for _, s := range otlpfake.Find(spans, "SERVER", want.name) {
			if s.Attrs["http.route"] == want.route {
				found = &s
			}
		}
		if found == nil {
			t.Errorf("no SERVER span %q for %s:%s", want.name, want.route, otlpfake.Describe(spans))
			continue
		}
		wantAttrs(t, want.route, found.Attrs, map[string]any{"gen_ai.operation.name": want.op, "http.response.status_code": int64(200)})
		var children []otlpfake.Span
		for _, s := range spans {
			if s.ParentID == found.SpanID {
				children = append(children, s)
			}
		}
		if len(children) != 1 || children[0].Kind != "CLIENT" || children[0].Attrs["gen_ai.provider.name"] != "fngate.mock" || children[0].Attrs["gen_ai.operation.name"] != want.op {
			t.Errorf("%s: children%s", want.route, otlpfake.Describe(children))
		}
		if want.op == "embeddings" && len(children) == 1 {
			wantAttrs(t, "embeddings CLIENT", children[0].Attrs, map[string]any{"gen_ai.usage.input_tokens": int64(3), "gen_ai.request.model": "embed"})
		}
	}
}

// TestRefusalsAndFailuresOnTheServerSpan: a request refused before any attempt is a SERVER
// span without children, its 4xx not an error of the span; one whose every attempt failed
// is an error; the client's traceparent is followed either way.
func TestRefusalsAndFailuresOnTheServerSpan(t *testing.T) {
	rcv := otlpfake.New(t)
	g := serve(t, fmt.Sprintf(mockConfig, "    endpoint: "+rcv.URL))
	tp := "00-" + clientTrace + "-" + clientSpan + "-01"
	if r := g.Chat(t, `{"model":"m","messages":[{"role":"wizard","content":"hi"}]}`, "traceparent", tp); r.Status != 400 {
		t.Fatalf("status %d", r.Status)
	}
	if r := g.Chat(t, `{"model":"broken","messages":[{"role":"user","content":"hi"}]}`, "traceparent", tp); r.Status != 503 {
		t.Fatalf("status %d", r.Status)
	}
	g.flush(t, 2)
	spans := rcv.WaitSpans(t, 3, 5*time.Second)
	servers := otlpfake.Find(spans, "SERVER", "")
	if len(servers) != 2 {
		t.Fatalf("spans:%s", otlpfake.Describe(spans))
	}
	refused, failed := servers[0], servers[1]
	wantAttrs(t, "refused", refused.Attrs, map[string]any{"http.response.status_code": int64(400), "error.type": "invalid_request_error", "gen_ai.request.model": "m", "fngate.attempts": int64(0)})
	if refused.StatusCode == "ERROR" || refused.Name != "chat m" || refused.ParentID != clientSpan {
		t.Errorf("refused: status %s name %q parent %s", refused.StatusCode, refused.Name, refused.ParentID)
	}
	wantAttrs(t, "failed", failed.Attrs, map[string]any{"http.response.status_code": int64(503), "fngate.attempts": int64(1)})
	if failed.StatusCode != "ERROR" {
		t.Errorf("failed request span status %s", failed.StatusCode)
	}
	for _, s := range spans {
		if s.ParentID == refused.SpanID {
			t.Errorf("the refused request has a child span %q", s.Name)
		}
	}
}

// TestLimitRefusalsOnTheServerSpan: a request its key's rate limit turns away, and a GET of a
// stored response the gateway does not have, are each one SERVER span with its status, the
// key and error.type, and no attempt under it.
func TestLimitRefusalsOnTheServerSpan(t *testing.T) {
	rcv := otlpfake.New(t)
	g := serve(t, `
keys: [{name: app, value: sk-app-0123456789abcdef, rate: {requests_per_minute: 1}}]
counters: {store: memory}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
telemetry: {otlp: {endpoint: "`+rcv.URL+`"}}
`)
	auth := []string{"Authorization", "Bearer sk-app-0123456789abcdef"}
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if r := g.Chat(t, body, auth...); r.Status != 200 {
		t.Fatalf("first: status %d: %s", r.Status, r.Body)
	}
	if r := g.Chat(t, body, auth...); r.Status != 429 {
		t.Fatalf("second: status %d, want the rate limit's 429: %s", r.Status, r.Body)
	}
	if r := g.Do(t, "GET", "/v1/responses/resp_nothere", "", auth...); r.Status != 404 {
		t.Fatalf("stored response: status %d: %s", r.Status, r.Body)
	}
	g.flush(t, 3)
	spans := rcv.WaitSpans(t, 4, 5*time.Second)
	servers := otlpfake.Find(spans, "SERVER", "")
	if len(servers) != 3 {
		t.Fatalf("spans:%s", otlpfake.Describe(spans))
	}
	limited, stored := servers[1], servers[2]
	wantAttrs(t, "rate-limited", limited.Attrs, map[string]any{
		"http.response.status_code": int64(429), "error.type": "rate_limit_exceeded", "fngate.key": "app",
		"gen_ai.request.model": "m", "fngate.attempts": int64(0),
	})
	if limited.Name != "chat m" || limited.StatusCode == "ERROR" {
		t.Errorf("rate-limited: name %q status %s", limited.Name, limited.StatusCode)
	}
	wantAttrs(t, "stored response", stored.Attrs, map[string]any{
		"http.response.status_code": int64(404), "error.type": "not_found", "fngate.key": "app",
		"gen_ai.operation.name": "get_response", "http.route": "/v1/responses/{id}",
	})
	if stored.Name != "GET /v1/responses/{id}" {
		t.Errorf("stored response span name %q", stored.Name)
	}
	for _, s := range spans {
		if s.ParentID == limited.SpanID || s.ParentID == stored.SpanID {
			t.Errorf("a refused request has a child span %q", s.Name)
		}
	}
	wantPoints(t, rcv, "gen_ai.server.request.duration", map[string]any{"http.response.status_code": int64(429), "error.type": "rate_limit_exceeded"}, 1)
}

// TestGRPCAndHeaders: protocol grpc reaches a gRPC collector; an http/protobuf export carries
// the configured headers.
func TestGRPCAndHeaders(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		rcv      func(testing.TB) *otlpfake.Receiver
	}{{"grpc", otlpfake.NewGRPC}, {"http/protobuf", otlpfake.New}} {
		t.Run(tc.protocol, func(t *testing.T) {
			rcv := tc.rcv(t)
			g := serve(t, fmt.Sprintf(mockConfig, "    endpoint: "+rcv.URL+"\n    protocol: "+tc.protocol+"\n    headers: {x-team: team-key-0123456789}"))
			if r := g.Chat(t, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`); r.Status != 200 {
				t.Fatalf("status %d", r.Status)
			}
			g.flush(t, 1)
			rcv.WaitSpans(t, 2, 5*time.Second)
			rcv.WaitMetric(t, "fngate.attempts", 5*time.Second)
			if tc.protocol == "grpc" {
				return
			}
			for _, h := range rcv.Headers() {
				if h.Get("X-Team") != "team-key-0123456789" {
					t.Errorf("an export without the configured header: %v", h)
				}
			}
		})
	}
}

// TestContentOnlyWhenCaptured: the conversation and the answer reach the spans only with
// capture_content: true.
func TestContentOnlyWhenCaptured(t *testing.T) {
	for _, capture := range []bool{false, true} {
		t.Run(fmt.Sprintf("capture=%v", capture), func(t *testing.T) {
			rcv := otlpfake.New(t)
			g := serve(t, fmt.Sprintf(mockConfig, fmt.Sprintf("    endpoint: %s\n    capture_content: %v", rcv.URL, capture)))
			for _, stream := range []string{"false", "true"} {
				body := `{"model":"m","stream":` + stream + `,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"secret plan alpha"}]}`
				if r := g.Chat(t, body); r.Status != 200 {
					t.Fatalf("status %d", r.Status)
				}
			}
			g.flush(t, 2)
			spans := rcv.WaitSpans(t, 4, 5*time.Second)
			for _, s := range spans {
				for k, v := range s.Attrs {
					if strings.Contains(fmt.Sprint(v), "secret plan alpha") && !capture {
						t.Errorf("%s span %q: %s holds the conversation", s.Kind, s.Name, k)
					}
				}
			}
			if !capture {
				return
			}
			for _, srv := range otlpfake.Find(spans, "SERVER", "") {
				in, _ := srv.Attrs["gen_ai.input.messages"].(string)
				sys, _ := srv.Attrs["gen_ai.system_instructions"].(string)
				out, _ := srv.Attrs["gen_ai.output.messages"].(string)
				if !strings.Contains(in, `{"role":"user","parts":[{"type":"text","content":"secret plan alpha"}]}`) || !strings.Contains(in, `"be brief"`) && !strings.Contains(sys, "be brief") {
					t.Errorf("input messages %s, system %s", in, sys)
				}
				// The mock's echo answers with the last user message.
				if !strings.Contains(out, `"role":"assistant"`) || !strings.Contains(out, "secret plan alpha") || !strings.Contains(out, `"finish_reason":"end_turn"`) {
					t.Errorf("output messages %s", out)
				}
			}
			for _, c := range otlpfake.Find(spans, "CLIENT", "") {
				if out, _ := c.Attrs["gen_ai.output.messages"].(string); !strings.Contains(out, "secret plan alpha") {
					t.Errorf("CLIENT span output %q", out)
				}
			}
		})
	}
}

// TestSampleRatio: at 0 no trace of the gateway's own is recorded (its metrics still are),
// while a client's sampled traceparent is followed.
func TestSampleRatio(t *testing.T) {
	rcv := otlpfake.New(t)
	g := serve(t, fmt.Sprintf(mockConfig, "    endpoint: "+rcv.URL+"\n    sample_ratio: 0"))
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	g.Chat(t, body)
	g.Chat(t, body, "traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	g.flush(t, 2)
	spans := rcv.WaitSpans(t, 2, 5*time.Second)
	for _, s := range spans {
		if s.TraceID != clientTrace {
			t.Errorf("a span of an unsampled trace: %q %s", s.Name, s.TraceID)
		}
	}
	if len(spans) != 2 {
		t.Errorf("spans:%s", otlpfake.Describe(spans))
	}
	wantPoints(t, rcv, "fngate.attempts", map[string]any{"fngate.outcome": "ok"}, 2)
	lines := g.logs.Lines(t, record.MsgRequest)
	if _, ok := lines[0]["trace_id"]; ok {
		t.Errorf("an unsampled request's line names a trace: %v", lines[0])
	}
	if lines[1]["trace_id"] != clientTrace {
		t.Errorf("sampled request's trace_id = %v", lines[1]["trace_id"])
	}
}

// TestOnlyWhenAskedFor: without a telemetry block nothing runs unless an OTEL endpoint
// variable is set; OTEL_SDK_DISABLED wins over both; a protocol fngate does not speak is an
// error at start.
func TestOnlyWhenAskedFor(t *testing.T) {
	const plain = "auth: none\nconnections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"
	block := plain + "telemetry: {otlp: {endpoint: http://127.0.0.1:1}}\n"
	for _, tc := range []struct {
		name, yaml string
		env        map[string]string
		on         bool
		err        string
	}{
		{"nothing", plain, nil, false, ""},
		{"the block", block, nil, true, ""},
		{"the variable", plain, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true, ""},
		{"the traces variable", plain, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, true, ""},
		{"disabled", block, map[string]string{"OTEL_SDK_DISABLED": "true"}, false, ""},
		{"both exporters none", block, map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, false, ""},
		{"http/json", plain, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "http/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := gatewaytest.Config(t, tc.yaml, config.Options{Getenv: noEnv})
			tel, err := otel.New(context.Background(), cfg, otel.Options{Getenv: func(k string) string { return tc.env[k] }})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tel.Shutdown(context.Background())
			if (tel != nil) != tc.on || (tel.Tracer() != nil) != tc.on {
				t.Errorf("on = %v, want %v", tel != nil, tc.on)
			}
		})
	}
}

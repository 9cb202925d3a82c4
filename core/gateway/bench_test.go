package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/core/telemetry/otel"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// Hot-path benchmarks of the whole handler over loopback, against an upstream that answers
// from pre-rendered bytes. scripts/bench measures the same side by side with a direct upstream
// and a bare reverse proxy; these isolate the gateway for profiling.

func benchUpstream(b *testing.B) *httptest.Server {
	var sse bytes.Buffer
	head := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":`
	sse.WriteString(head + `{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range 200 {
		fmt.Fprintf(&sse, "%s{\"content\":\" tok%d\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, i)
	}
	sse.WriteString(head + `{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	sse.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":200,"total_tokens":230}}` + "\n\ndata: [DONE]\n\n")
	stream := sse.Bytes()
	jsonBody := []byte(`{"id":"c","object":"chat.completion","created":1,"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("word ", 150) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":150,"total_tokens":180}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(jsonBody)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		rest := stream
		for len(rest) > 0 {
			i := bytes.Index(rest, []byte("\n\n")) + 2
			_, _ = w.Write(rest[:i])
			_ = rc.Flush()
			rest = rest[i:]
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

const benchConfig = `
auth: none
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
models:
  bench: {routes: [{connection: up, model: x}]}
`

func benchGateway(b *testing.B) *testGateway {
	up := benchUpstream(b)
	return newBenchGateway(b, fmt.Sprintf(benchConfig, up.URL))
}

// benchTracedGateway traces every request (sample_ratio 1) with the OpenTelemetry export,
// to a collector on loopback that takes each export and keeps nothing: the figures are the
// gateway's cost of tracing, spans built, batched, encoded and sent, and not a collector's.
func benchTracedGateway(b *testing.B) *testGateway {
	up := benchUpstream(b)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	yaml := fmt.Sprintf(benchConfig, up.URL) + "telemetry: {otlp: {endpoint: \"" + sink.URL + "\", sample_ratio: 1}}\n"
	cfg := gatewaytest.Config(b, yaml, config.Options{Getenv: func(string) string { return "" }})
	tel, err := otel.New(context.Background(), cfg, otel.Options{Getenv: func(string) string { return "" }})
	if err != nil || tel == nil {
		b.Fatalf("telemetry: %v", err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return newGatewayTB(b, yaml, func(o *gateway.Options) {
		o.Logger = telemetry.NewLogger(io.Discard, telemetry.FormatCloudWatch, nil)
		o.Tracer = tel.Tracer()
	})
}

const benchRequest = `{"model":"bench","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Summarise the plot of a long novel in one hundred and fifty words, please."}]%s}`

func BenchmarkGatewayNonStream(b *testing.B) { benchNonStream(b, benchGateway(b)) }

// BenchmarkGatewayNonStreamTraced is BenchmarkGatewayNonStream with every request traced.
func BenchmarkGatewayNonStreamTraced(b *testing.B) { benchNonStream(b, benchTracedGateway(b)) }

func BenchmarkGatewayStream200(b *testing.B) { benchStream200(b, benchGateway(b)) }

// BenchmarkGatewayStream200Traced is BenchmarkGatewayStream200 with every request traced.
func BenchmarkGatewayStream200Traced(b *testing.B) { benchStream200(b, benchTracedGateway(b)) }

// reportCPU reports the process's CPU time per iteration (cpu-us/op) when the returned func
// runs: on a shared machine it moves less than the wall time, and tracing's cost is CPU.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if start > 0 && b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N)/1e3, "cpu-us/op")
		}
	}
}

func benchNonStream(b *testing.B, g *testGateway) {
	body := fmt.Sprintf(benchRequest, "")
	client := g.Client()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		resp, err := client.Post(g.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
}

func benchStream200(b *testing.B, g *testGateway) {
	body := fmt.Sprintf(benchRequest, `,"stream":true`)
	client := g.Client()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		resp, err := client.Post(g.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n < 200*50 {
			b.Fatal(resp.StatusCode, n)
		}
	}
}

// BenchmarkGatewayLimits compares a key without limits to one held to a rate limit and a
// budget on the memory store, on one gateway: the difference is what admission, the charge
// of the attempt and the settlement cost per request.
func BenchmarkGatewayLimits(b *testing.B) {
	up := benchUpstream(b)
	g := newBenchGateway(b, fmt.Sprintf(`
keys:
  - {name: off, value: bench-key-limits-off}
  - name: on
    value: bench-key-limits-on
    rate: {requests_per_minute: 1000000000, tokens_per_minute: 1000000000000}
    budget: {usd_per_day: 1000000, usd_per_month: 1000000}
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
models:
  bench: {price: {input_per_mtok: 1, output_per_mtok: 1}, routes: [{connection: up, model: x}]}
`, up.URL))
	body := fmt.Sprintf(benchRequest, `,"max_completion_tokens":300`)
	client := g.Client()
	call := func(b *testing.B, key string) {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer bench-key-limits-"+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
	for range 200 { // warm both paths, so neither sub-benchmark pays for the first requests
		call(b, "off")
		call(b, "on")
	}
	for _, key := range []string{"off", "on"} {
		b.Run("limits "+key, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				call(b, key)
			}
		})
	}
}

// BenchmarkGatewayKeys compares a key from config to a stored key (Options.KeyStore) that the
// instance has cached, on one gateway: the difference is what serving a key from the store
// costs per request once it is cached (nothing measurable is the goal).
func BenchmarkGatewayKeys(b *testing.B) {
	up := benchUpstream(b)
	store := keystore.NewMemory()
	secret, hash := keystore.NewSecret()
	if err := store.Create(context.Background(), &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: "stored", Hash: hash}, Updated: time.Now()}, nil); err != nil {
		b.Fatal(err)
	}
	g := newGatewayTB(b, fmt.Sprintf(`
keys:
  - {name: config, value: sk-fngate-bench0config0key0000000000000000000000000}
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
models:
  bench: {routes: [{connection: up, model: x}]}
key_store: {store: memory}
`, up.URL), func(o *gateway.Options) {
		o.Logger = telemetry.NewLogger(io.Discard, telemetry.FormatCloudWatch, nil)
		o.KeyStore = store
	})
	b.Cleanup(g.Gateway.Close)
	keys := map[string]string{"config": "sk-fngate-bench0config0key0000000000000000000000000", "stored": secret}
	body := fmt.Sprintf(benchRequest, "")
	client := g.Client()
	call := func(b *testing.B, key string) {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
	for range 200 { // warm both paths (the stored key's first request looks it up)
		call(b, keys["config"])
		call(b, keys["stored"])
	}
	for _, name := range []string{"config", "stored"} {
		b.Run("key from "+name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				call(b, keys[name])
			}
		})
	}
}

// BenchmarkGatewayHistory compares a keyed request on a gateway without a usage history to
// the same on one with a history (in memory, so the figure is the gateway's own cost: the
// queueing on the request path and the writer's merged rounds beside it, and not a store's
// latency, which no request waits for).
func BenchmarkGatewayHistory(b *testing.B) {
	up := benchUpstream(b)
	yaml := fmt.Sprintf(`
keys:
  - {name: app, value: sk-fngate-bench0history0key00000000000000000000000}
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
models:
  bench: {price: {input_per_mtok: 1, output_per_mtok: 1}, routes: [{connection: up, model: x}]}
`, up.URL)
	history := counters.NewMemoryHistory()
	gateways := map[string]*testGateway{
		"off": newBenchGateway(b, yaml),
		"on": newGatewayTB(b, yaml, func(o *gateway.Options) {
			o.Logger = telemetry.NewLogger(io.Discard, telemetry.FormatCloudWatch, nil)
			o.History = history
		}),
	}
	body := fmt.Sprintf(benchRequest, "")
	call := func(b *testing.B, g *testGateway) {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-fngate-bench0history0key00000000000000000000000")
		resp, err := g.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
	for range 200 {
		call(b, gateways["off"])
		call(b, gateways["on"])
	}
	for _, name := range []string{"off", "on"} {
		b.Run("history "+name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				call(b, gateways[name])
			}
		})
	}
	if err := gateways["on"].Gateway.FlushUsage(context.Background()); err != nil {
		b.Fatal(err)
	}
	if rows, _ := history.Usage(context.Background(), "app", time.Now().Add(-time.Hour), time.Now()); len(rows) == 0 || rows[0].Requests < 200 {
		b.Fatalf("the history holds %+v", rows)
	}
}

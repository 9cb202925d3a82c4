package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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

func benchGateway(b *testing.B) *testGateway {
	up := benchUpstream(b)
	return newBenchGateway(b, fmt.Sprintf(`
auth: none
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
models:
  bench: {routes: [{connection: up, model: x}]}
`, up.URL))
}

const benchRequest = `{"model":"bench","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Summarise the plot of a long novel in one hundred and fifty words, please."}]%s}`

func BenchmarkGatewayNonStream(b *testing.B) {
	g := benchGateway(b)
	body := fmt.Sprintf(benchRequest, "")
	client := g.Client()
	b.ReportAllocs()
	b.ResetTimer()
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

func BenchmarkGatewayStream200(b *testing.B) {
	g := benchGateway(b)
	body := fmt.Sprintf(benchRequest, `,"stream":true`)
	client := g.Client()
	b.ReportAllocs()
	b.ResetTimer()
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

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

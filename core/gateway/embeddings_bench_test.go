package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkGatewayEmbeddings: a batch of 16 texts at 1,536 dimensions through the handler,
// the upstream answering from pre-rendered decimals (an OpenAI-compatible route), the client
// asking for floats or base64. scripts/bench measures the same beside a bare reverse proxy.
func BenchmarkGatewayEmbeddings(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var up bytes.Buffer
	up.WriteString(`{"object":"list","data":[`)
	for i := range 16 {
		if i > 0 {
			up.WriteByte(',')
		}
		up.WriteString(`{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":[`)
		for j := range 1536 {
			if j > 0 {
				up.WriteByte(',')
			}
			up.WriteString(strconv.FormatFloat(float64(float32(r.NormFloat64()/40)), 'g', -1, 64))
		}
		up.WriteString("]}")
	}
	up.WriteString(`],"model":"x","usage":{"prompt_tokens":160,"total_tokens":160}}`)
	answer := up.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = w.Write(answer)
	}))
	b.Cleanup(srv.Close)
	g := newBenchGateway(b, fmt.Sprintf(`
auth: none
connections:
  up: {kind: openai-compatible, base_url: "%s/v1"}
models:
  e: {kind: embedding, dimensions: 1536, routes: [{connection: up, model: x}]}
`, srv.URL))
	texts := make([]string, 16)
	for i := range texts {
		texts[i] = fmt.Sprintf(`"passage %d of the corpus, a sentence of about ten words"`, i)
	}
	for _, format := range []string{"float", "base64"} {
		b.Run(format, func(b *testing.B) {
			body := `{"model":"e","input":[` + strings.Join(texts, ",") + `],"encoding_format":"` + format + `"}`
			client := g.Client()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Post(g.URL+"/v1/embeddings", "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.StatusCode)
				}
			}
		})
	}
}

package gateway_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkGatewayEmbeddings: a batch of 16 texts at 1,536 dimensions through the handler,
// the upstream answering from pre-rendered decimals (an OpenAI-compatible route) or base64
// (an OpenAI route, which asks for it), the client asking for floats or base64.
// scripts/bench measures the same beside a bare reverse proxy.
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
	// The same vectors as base64, for the OpenAI route, which asks for them so.
	var vectors struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer, &vectors); err != nil {
		b.Fatal(err)
	}
	var up64 bytes.Buffer
	up64.WriteString(`{"object":"list","data":[`)
	for i, d := range vectors.Data {
		if i > 0 {
			up64.WriteByte(',')
		}
		raw := make([]byte, 0, 4*len(d.Embedding))
		for _, f := range d.Embedding {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
		up64.WriteString(`{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":"` + base64.StdEncoding.EncodeToString(raw) + `"}`)
	}
	up64.WriteString(`],"model":"x","usage":{"prompt_tokens":160,"total_tokens":160}}`)
	answer64 := up64.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out := answer
		if bytes.Contains(body, []byte(`"encoding_format":"base64"`)) {
			out = answer64
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
	}))
	b.Cleanup(srv.Close)
	g := newBenchGateway(b, fmt.Sprintf(`
auth: none
connections:
  up: {kind: openai-compatible, base_url: "%[1]s/v1"}
  oai: {kind: openai, api_key: sk-bench-not-secret, base_url: "%[1]s/v1"}
models:
  e: {kind: embedding, dimensions: 1536, routes: [{connection: up, model: x}]}
  e-openai: {kind: embedding, dimensions: 1536, routes: [{connection: oai, model: x}]}
`, srv.URL))
	texts := make([]string, 16)
	for i := range texts {
		texts[i] = fmt.Sprintf(`"passage %d of the corpus, a sentence of about ten words"`, i)
	}
	for _, tc := range []struct{ name, model, format string }{
		{"float", "e", "float"},
		{"base64", "e", "base64"},
		{"openai-route-float", "e-openai", "float"},
		{"openai-route-base64", "e-openai", "base64"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := `{"model":"` + tc.model + `","input":[` + strings.Join(texts, ",") + `],"encoding_format":"` + tc.format + `"}`
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

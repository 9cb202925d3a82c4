package openaicompat

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/openai"
)

// benchBody is OpenAI's answer to a batch of 16 texts at 1,536 dimensions, as decimals:
// about 520 KB, 24,576 numbers.
func benchBody() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	for i := range 16 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":[`)
		for j := range 1536 {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(float32(r.NormFloat64()/40)), 'g', -1, 64))
		}
		b.WriteString("]}")
	}
	b.WriteString(`],"model":"x","usage":{"prompt_tokens":1,"total_tokens":1}}`)
	return []byte(b.String())
}

// BenchmarkParseEmbeddings reads that answer: its cost is the numbers'.
func BenchmarkParseEmbeddings(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := parseEmbeddings(body, 16); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendEmbeddings writes those vectors back as decimals, the gateway's answer.
func BenchmarkAppendEmbeddings(b *testing.B) {
	e, _ := parseEmbeddings(benchBody(), 16)
	buf := make([]byte, 0, 1<<20)
	for b.Loop() {
		buf = openai.AppendEmbeddings(buf[:0], "m", false, e)
	}
	b.SetBytes(int64(len(buf)))
}

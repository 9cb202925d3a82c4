package gateway_test

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

const embedWires = `
connections:
  a: {kind: vllm, base_url: %s}
  b: {kind: vllm, base_url: %s}
models:
  e:
    kind: embedding
    dimensions: 3
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: a, model: m}
      - {connection: b, model: m}
`

func newEmbedWires(t *testing.T) (*testGateway, *openaifake.Server) {
	t.Helper()
	a, b := openaifake.New(), openaifake.New()
	b.EmbedDims = 3
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	return newGateway(t, fmt.Sprintf(embedWires, a.BaseURL(), b.BaseURL())), a
}

// b64 is the base64 the gateway writes for v: its float32s, little-endian.
func b64(v ...float32) string {
	raw := make([]byte, 0, 4*len(v))
	for _, f := range v {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// wantEmbeddings is the answer the client must see for two vectors, written here
// independently of the gateway: decimals as OpenAI writes them (each float32's shortest
// float64 decimal), or base64.
func wantEmbeddings(base64Format bool, v0, v1 []float32) string {
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	for i, v := range [][]float32{v0, v1} {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":`)
		if base64Format {
			b.WriteString(`"` + b64(v...) + `"}`)
			continue
		}
		b.WriteByte('[')
		for j, f := range v {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 64))
		}
		b.WriteString("]}")
	}
	b.WriteString(`],"model":"e","usage":{"prompt_tokens":2,"total_tokens":2}}`)
	return b.String()
}

// Whatever the upstream's encoding, the client gets the same bytes in the one it asked for:
// decimals of any spelling read to float32s and written as OpenAI writes them, base64 that is
// already what the gateway would write passed on as it came, any other base64 (padding bits
// set, an escape) decoded and written again.
func TestEmbeddingsSameAnswerFromEveryUpstreamEncoding(t *testing.T) {
	v0 := []float32{0.0123, -0.0069292835, 1}
	v1 := []float32{0, float32(math.Copysign(0, -1)), 1e-45}
	answer := func(e0, e1 string) []byte {
		return []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":` + e0 +
			`},{"object":"embedding","index":1,"embedding":` + e1 + `}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`)
	}
	// One float32 (0.5) in base64 ends in two characters of padding; "AAAAPx==" sets bits
	// of that padding, which Go's decoder (and so the gateway, as before) reads as 0.5 too.
	half := []float32{0.5}
	for _, tc := range []struct {
		name   string
		body   []byte
		v0, v1 []float32
	}{
		{"decimals as Python writes float32s", answer(`[0.012299999594688416,-0.006929283495992422,1.0]`, `[0.0,-0.0,1.401298464324817e-45]`), v0, v1},
		{"decimals as Go writes float32s", answer(`[0.0123,-0.0069292835,1]`, `[0,-0,1e-45]`), v0, v1},
		{"decimals beyond a float32's precision", answer(`[0.01230000000001,-0.0069292835,1E0]`, `[0e5,-0.0e-3,1.4e-45]`), v0, v1},
		{"decimals with spaces", answer(`[ 0.0123 , -0.0069292835,1 ]`, "[0,\n-0,\t1e-45]"), v0, v1},
		{"base64", answer(`"`+b64(v0...)+`"`, `"`+b64(v1...)+`"`), v0, v1},
		{"base64 with an escape", answer(`"`+strings.Replace(b64(v0...), "A", `\u0041`, 1)+`"`, `"`+b64(v1...)+`"`), v0, v1},
		{"base64 and decimals", answer(`"`+b64(v0...)+`"`, `[0,-0,1e-45]`), v0, v1},
		{"base64 with padding bits set", answer(`"AAAAPx=="`, `"`+b64(half...)+`"`), half, half},
	} {
		for _, format := range []string{"float", "base64"} {
			t.Run(tc.name+", "+format, func(t *testing.T) {
				g, a := newEmbedWires(t)
				a.Enqueue(openaifake.Reply{Body: tc.body})
				r := g.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"e","input":["one","two"],"dimensions":`+strconv.Itoa(len(tc.v0))+`,"encoding_format":"`+format+`"}`)
				if want := wantEmbeddings(format == "base64", tc.v0, tc.v1); r.Status != 200 || string(r.Body) != want {
					t.Fatalf("status %d\ngot  %s\nwant %s", r.Status, r.Body, want)
				}
				gatewaytest.CheckAttempt(t, g.logs.Attempts(t, 1)[0], map[string]any{"outcome": "ok", "route": "a/m"})
			})
		}
	}
}

// An upstream answer the gateway cannot take is an unavailable route, whichever path reads
// it: the next route serves, and the client never sees it.
func TestEmbeddingsBrokenUpstreamVectorsFailOver(t *testing.T) {
	good := `"` + b64(1, 2, 3) + `"`
	for name, e0 := range map[string]string{
		"a malformed number":            `[1,2,1e]`,
		"a number that is not JSON":     `[1,2,0x1p3]`,
		"two signs":                     `[1,2,--3]`,
		"a number beyond a float32":     `[1,2,1e39]`,
		"a string among the numbers":    `[1,2,"3"]`,
		"null among the numbers":        `[1,2,null]`,
		"a nested array":                `[1,2,[3]]`,
		"an object, not an array":       `{"0":1,"1":2,"2":3}`,
		"a number, not an array":        `1`,
		"true, not an array":            `true`,
		"null, not a vector":            `null`,
		"a trailing comma":              `[1,2,3,]`,
		"too few numbers":               `[1,2]`,
		"too many numbers":              `[1,2,3,4]`,
		"an unterminated array":         `[1,2,3`,
		"base64 of too few float32s":    `"` + b64(1, 2) + `"`,
		"base64 of too many float32s":   `"` + b64(1, 2, 3, 4) + `"`,
		"base64 of a part of a float32": `"` + b64(1, 2, 3) + `AAAA"`,
		"base64 with an infinity":       `"` + b64(1, 2, float32(math.Inf(-1))) + `"`,
		"base64 with a NaN":             `"` + b64(1, float32(math.NaN()), 3) + `"`,
		"base64 with a line break":      `"` + b64(1, 2, 3)[:8] + `\n` + b64(1, 2, 3)[8:] + `"`,
		"not base64":                    `"not base64, not at all"`,
		"an empty string":               `""`,
	} {
		for _, format := range []string{"float", "base64"} {
			t.Run(name+", "+format, func(t *testing.T) {
				g, a := newEmbedWires(t)
				a.Enqueue(openaifake.Reply{Body: []byte(`{"data":[{"index":0,"embedding":` + e0 + `},{"index":1,"embedding":` + good + `}],"model":"m"}`)})
				r := g.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"e","input":["one","two"],"encoding_format":"`+format+`"}`)
				if r.Status != 200 {
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
				atts := g.logs.Attempts(t, 1)
				gatewaytest.CheckAttempt(t, atts[0], map[string]any{"outcome": "failover", "error_class": "unavailable", "route": "a/m"})
				gatewaytest.CheckAttempt(t, atts[1], map[string]any{"outcome": "ok", "route": "b/m"})
			})
		}
	}
}

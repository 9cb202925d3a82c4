package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

const embedMock = `
connections:
  mock: {kind: mock}
  local: {kind: ollama, base_url: "http://127.0.0.1:9/v1"}
models:
  embed:
    kind: embedding
    dimensions: 64
    price: {input_per_mtok: 0.5}
    routes:
      - {connection: mock, model: embed}
  embed-ollama:
    kind: embedding
    dimensions: 64
    routes:
      - {connection: local, model: nomic-embed-text}
  chat:
    routes:
      - {connection: mock, model: echo}
`

// openai-go's Embeddings.New against the gateway: vectors in input order under their index,
// the gateway model's name, the usage the route reported, dimensions honoured.
func TestEmbeddingsWithOpenAIGo(t *testing.T) {
	g := newGateway(t, embedMock)
	client := g.OpenAI()
	inputs := []string{"the quick brown fox", "jumps over", "the lazy dog"}
	var resp *http.Response
	res, err := client.Embeddings.New(context.Background(), oai.EmbeddingNewParams{
		Model: "embed",
		Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
		User:  oai.String("user-42"),
	}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "embed" || res.Object != "list" || len(res.Data) != len(inputs) {
		t.Fatalf("model %q object %q, %d items", res.Model, res.Object, len(res.Data))
	}
	for i, d := range res.Data {
		want := mock.Embedding(inputs[i], 64)
		if d.Index != int64(i) || len(d.Embedding) != 64 {
			t.Fatalf("item %d: index %d, %d dimensions", i, d.Index, len(d.Embedding))
		}
		for j := range want {
			if float32(d.Embedding[j]) != want[j] {
				t.Fatalf("item %d number %d: %v, want %v", i, j, d.Embedding[j], want[j])
			}
		}
	}
	if res.Usage.PromptTokens != 9 || res.Usage.TotalTokens != 9 { // the mock counts words
		t.Errorf("usage %+v", res.Usage)
	}
	if got := resp.Header.Get(gateway.HeaderRoute); got != "mock/embed" {
		t.Errorf("route header %q", got)
	}
	a := g.logs.Attempts(t, 1)[0]
	gatewaytest.CheckAttempt(t, a, map[string]any{"endpoint": "embeddings", "model": "embed", "outcome": "ok", "stream": false})
	if u, _ := a["usage"].(map[string]any); u["prompt_tokens"] != 9.0 {
		t.Errorf("attempt usage %v", a["usage"])
	}
	if c, _ := a["cost_usd"].(float64); math.Abs(c-9*0.5/1e6) > 1e-15 {
		t.Errorf("cost %v, want %v", a["cost_usd"], 9*0.5/1e6)
	}
	if l, _ := a["labels"].(map[string]any); l["user"] != "user-42" {
		t.Errorf("labels %v", a["labels"])
	}

	short, err := client.Embeddings.New(context.Background(), oai.EmbeddingNewParams{
		Model: "embed", Input: oai.EmbeddingNewParamsInputUnion{OfString: oai.String("one")}, Dimensions: oai.Int(8),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(short.Data[0].Embedding); n != 8 {
		t.Errorf("dimensions 8 gave %d", n)
	}
}

// The two encodings decode to the very same float32s.
func TestEmbeddingsBase64DecodesToTheSameFloats(t *testing.T) {
	g := newGateway(t, embedMock)
	body := func(format string) string {
		return `{"model":"embed","input":["alpha","beta gamma"],"encoding_format":"` + format + `"}`
	}
	var floats struct {
		Data []struct {
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	var b64 struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	for format, v := range map[string]any{"float": &floats, "base64": &b64} {
		r := g.Do(t, http.MethodPost, "/v1/embeddings", body(format))
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", format, r.Status, r.Body)
		}
		if err := json.Unmarshal(r.Body, v); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		raw, err := base64.StdEncoding.DecodeString(b64.Data[i].Embedding)
		if err != nil || len(raw) != 4*64 {
			t.Fatalf("item %d: %v, %d bytes", i, err, len(raw))
		}
		for j := range 64 {
			got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
			if f := floats.Data[i].Embedding[j]; f != float64(got) { // as a float64 reader sees both
				t.Fatalf("item %d number %d: base64 %v, float %v", i, j, got, f)
			}
		}
	}
}

// Every refusal is a 400 (404 for an unknown model) in OpenAI's shape, naming param.
func TestEmbeddingsRefusals(t *testing.T) {
	g := newGateway(t, embedMock)
	many := make([]string, 2049)
	for i := range many {
		many[i] = `"x"`
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		param, code      string
	}{
		{"an unknown argument", "", `{"model":"embed","input":"a","truncate":"END"}`, 400, "truncate", "unknown_parameter"},
		{"a key in the wrong case", "", `{"Model":"embed","input":"a"}`, 400, "Model", "unknown_parameter"},
		{"a repeated key", "", `{"model":"embed","input":"a","input":"b"}`, 400, "input", "duplicate_parameter"},
		{"no model", "", `{"input":"a"}`, 400, "model", ""},
		{"no input", "", `{"model":"embed"}`, 400, "input", ""},
		{"an empty string", "", `{"model":"embed","input":""}`, 400, "input", ""},
		{"an empty string in the array", "", `{"model":"embed","input":["a",""]}`, 400, "input[1]", ""},
		{"an empty array", "", `{"model":"embed","input":[]}`, 400, "input", ""},
		{"an empty token array", "", `{"model":"embed","input":[[1,2],[]]}`, 400, "input[1]", ""},
		{"strings and token ids mixed", "", `{"model":"embed","input":["a",[1]]}`, 400, "input[1]", ""},
		{"a negative token id", "", `{"model":"embed","input":[1,-2]}`, 400, "input[1]", ""},
		{"more inputs than 2048", "", `{"model":"embed","input":[` + strings.Join(many, ",") + `]}`, 400, "input", ""},
		{"an object input", "", `{"model":"embed","input":{"text":"a"}}`, 400, "input", ""},
		{"an unknown encoding", "", `{"model":"embed","input":"a","encoding_format":"int8"}`, 400, "encoding_format", ""},
		{"dimensions 0", "", `{"model":"embed","input":"a","dimensions":0}`, 400, "dimensions", ""},
		{"dimensions not an integer", "", `{"model":"embed","input":"a","dimensions":8.5}`, 400, "dimensions", ""},
		{"dimensions above the model's", "", `{"model":"embed","input":"a","dimensions":65}`, 400, "dimensions", ""},
		{"a user that is not a string", "", `{"model":"embed","input":"a","user":7}`, 400, "user", ""},
		{"an unknown model", "", `{"model":"nope","input":"a"}`, 404, "model", "model_not_found"},
		{"a chat model", "", `{"model":"chat","input":"a"}`, 400, "model", "unsupported_model"},
		{"token ids on a route that takes texts", "", `{"model":"embed-ollama","input":[[1,2,3]]}`, 400, "input", "unsupported_parameter"},
		{"an embedding model on the chat door", "/v1/chat/completions", `{"model":"embed","messages":[{"role":"user","content":"hi"}]}`, 400, "model", "unsupported_model"},
		{"an embedding model on the completions door", "/v1/completions", `{"model":"embed","prompt":"hi"}`, 400, "model", "unsupported_model"},
		{"an embedding model on the Responses door", "/v1/responses", `{"model":"embed","input":"hi"}`, 400, "model", "unsupported_model"},
		{"not JSON", "", `{"model":`, 400, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/v1/embeddings"
			}
			r := g.Do(t, http.MethodPost, path, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			e := r.ErrorObject(t)
			if p, _ := e["param"].(string); p != tc.param {
				t.Errorf("param %v, want %q: %s", e["param"], tc.param, e["message"])
			}
			if tc.code != "" && e["code"] != tc.code {
				t.Errorf("code %v, want %s", e["code"], tc.code)
			}
		})
	}
	// The Messages door refuses an embedding model in its own shape.
	r := g.Do(t, http.MethodPost, "/v1/messages", `{"model":"embed","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	if r.Status != 400 || !strings.Contains(string(r.Body), `"type":"error"`) || !strings.Contains(string(r.Body), "embedding model") {
		t.Errorf("messages door: %d %s", r.Status, r.Body)
	}
	r = g.Do(t, http.MethodPost, "/v1/messages/count_tokens", `{"model":"embed","messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	if r.Status != 400 || !strings.Contains(string(r.Body), `"type":"error"`) || !strings.Contains(string(r.Body), "embedding model") {
		t.Errorf("count_tokens: %d %s", r.Status, r.Body)
	}
}

const embedPair = `
timeouts: {first_byte: 2s}
connections:
  a: {kind: openai, api_key: sk-test-embed-aaaaaaaa, base_url: %s}
  b: {kind: vllm, base_url: %s}
models:
  e:
    kind: embedding
    dimensions: 1536
    price: {input_per_mtok: 0.02}
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: a, model: text-embedding-3-small}
      - {connection: b, model: text-embedding-3-small}
`

func newEmbedPair(t *testing.T) (*testGateway, *openaifake.Server, *openaifake.Server) {
	t.Helper()
	a, b := openaifake.New(), openaifake.New()
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	return newGateway(t, fmt.Sprintf(embedPair, a.BaseURL(), b.BaseURL())), a, b
}

// A 429 or 5xx before the answer fails over to the next route, each attempt logged with its
// own outcome; an upstream 400 is the client's and does not.
func TestEmbeddingsFailover(t *testing.T) {
	for _, tc := range []struct {
		status   int
		class    string
		failover bool
	}{
		{429, "rate_limited", true},
		{500, "unavailable", true},
		{503, "unavailable", true},
		{400, "bad_request", false},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			g, a, b := newEmbedPair(t)
			a.Enqueue(openaifake.Reply{Status: tc.status})
			r := g.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"e","input":["one two","three"]}`)
			atts := g.logs.Attempts(t, 1)
			if !tc.failover {
				if r.Status != 400 || len(b.Requests()) != 0 {
					t.Fatalf("status %d, b saw %d requests: %s", r.Status, len(b.Requests()), r.Body)
				}
				gatewaytest.CheckAttempt(t, atts[0], map[string]any{"outcome": "error", "error_class": tc.class})
				return
			}
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			gatewaytest.CheckAttempt(t, atts[0], map[string]any{"outcome": "failover", "error_class": tc.class, "route": "a/text-embedding-3-small"})
			gatewaytest.CheckAttempt(t, atts[1], map[string]any{"outcome": "ok", "route": "b/text-embedding-3-small", "attempt": 2.0})
			if c, _ := atts[1]["cost_usd"].(float64); math.Abs(c-3*0.02/1e6) > 1e-15 {
				t.Errorf("cost %v", atts[1]["cost_usd"])
			}
			if got := r.Header.Get(gateway.HeaderAttempts); got != "2" {
				t.Errorf("attempts header %q", got)
			}
			var res struct {
				Data []struct {
					Embedding []float32 `json:"embedding"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.Body, &res); err != nil || len(res.Data) != 2 || len(res.Data[1].Embedding) != 1536 {
				t.Fatalf("%v: %s", err, r.Body[:min(len(r.Body), 300)])
			}
			if want := openaifake.Vector("three", 1536); res.Data[1].Embedding[7] != want[7] {
				t.Errorf("vector differs from the upstream's")
			}
		})
	}
}

// An upstream that answers vectors of the wrong length, or too few of them, has failed: the
// next route serves.
func TestEmbeddingsWrongAnswersFailOver(t *testing.T) {
	for name, rep := range map[string]openaifake.Reply{
		"wrong dimensions": {EmbedDims: 3},
		"too few vectors":  {Body: []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model":"x"}`)},
		"not numbers":      {Body: []byte(`{"object":"list","data":[{"index":0,"embedding":["a"]},{"index":1,"embedding":["b"]}],"model":"x"}`)},
	} {
		t.Run(name, func(t *testing.T) {
			g, a, _ := newEmbedPair(t)
			a.Enqueue(rep)
			r := g.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"e","input":["one","two"]}`)
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			atts := g.logs.Attempts(t, 1)
			gatewaytest.CheckAttempt(t, atts[0], map[string]any{"outcome": "failover", "error_class": "unavailable"})
		})
	}
}

// Items the upstream lists out of order land in input order, each under its own index.
func TestEmbeddingsKeepInputOrder(t *testing.T) {
	g, a, _ := newEmbedPair(t)
	a.Enqueue(openaifake.Reply{Reversed: true})
	inputs := []string{"first", "second", "third"}
	client := g.OpenAI()
	res, err := client.Embeddings.New(context.Background(), oai.EmbeddingNewParams{
		Model: "e", Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range res.Data {
		if d.Index != int64(i) || float32(d.Embedding[0]) != openaifake.Vector(inputs[i], 1536)[0] {
			t.Errorf("item %d: index %d, not the vector of %q", i, d.Index, inputs[i])
		}
	}
	// The gateway asked OpenAI for base64 and passed no user label on.
	got := a.Requests()[0].Body
	if got["encoding_format"] != "base64" || got["user"] != nil || got["dimensions"] != nil {
		t.Errorf("upstream body %v", got)
	}
}

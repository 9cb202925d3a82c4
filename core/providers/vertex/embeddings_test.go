package vertex_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/vertex"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/golden"
	"github.com/fngate/fngate/internal/vertexfake"
)

const embeddingsConfig = `
connections:
  vertex:
    kind: vertex
    project: fngate-test
    location: europe-west4
    endpoint: GRPC
    insecure: true
  backup:
    kind: mock
models:
  gemini-embed:
    kind: embedding
    dimensions: 3072
    price: {input_per_mtok: 0.15}
    routes: [{connection: vertex, model: gemini-embedding-001}]
  te5-query:
    kind: embedding
    dimensions: 768
    task: query
    routes: [{connection: vertex, model: text-embedding-005}]
  te5-256:
    kind: embedding
    dimensions: 256
    task: similarity
    routes: [{connection: vertex, model: text-embedding-005}]
  te5-backup:
    kind: embedding
    dimensions: 768
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: vertex, model: text-multilingual-embedding-002}
      - {connection: backup, model: embed}
`

func newEmbeddingsHarness(t *testing.T) *harness {
	t.Helper()
	fake := vertexfake.New()
	t.Cleanup(fake.Close)
	srv, logs := gatewaytest.ServeLogged(t, strings.ReplaceAll(embeddingsConfig, "GRPC", fake.Addr), vertex.Register, mock.Register)
	return &harness{fake: fake, srv: srv, client: srv.OpenAI(), logs: logs}
}

// The Predict requests of each case, as protojson, against the fake's validation of Vertex
// AI's text embeddings: the endpoint, one instance per text with its task type, autoTruncate
// false, outputDimensionality when the length asked is not the model's.
func TestEmbeddingsGolden(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"gemini-embedding-document", `{"model":"gemini-embed","input":["first","second"]}`},
		{"text-embedding-005-query", `{"model":"te5-query","input":"how tall is the tower?"}`},
		{"text-embedding-005-shortened", `{"model":"te5-query","input":["a","b"],"dimensions":128}`},
		{"text-embedding-005-model-dimensions", `{"model":"te5-256","input":"similar"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newEmbeddingsHarness(t)
			h.fake.SetDefault(vertexfake.Reply{})
			r := h.srv.Do(t, http.MethodPost, "/v1/embeddings", tc.body)
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var calls []json.RawMessage
			for _, req := range h.fake.Requests() {
				if req.Rejected != nil {
					t.Fatalf("the fake refused: %v", req.Rejected)
				}
				b, _ := protojson.Marshal(req.Predict)
				calls = append(calls, b)
			}
			slices.SortFunc(calls, func(a, b json.RawMessage) int { return strings.Compare(string(a), string(b)) })
			b, _ := json.Marshal(calls)
			golden.CheckIndented(t, filepath.Join("testdata", "embeddings", tc.name+".json"), b)
		})
	}
}

// openai-go's Embeddings.New through Vertex AI: gemini-embedding-001 takes one text a call,
// text-embedding-005 250 (and 54,000 bytes); the vectors come back in input order, the token
// counts add up.
func TestGatewayEmbeddings(t *testing.T) {
	for _, tc := range []struct {
		model   string
		inputs  []string
		dims    int
		batches []int // instances per call, sorted
	}{
		{"gemini-embed", []string{"one", "two three", "four five six"}, 3072, []int{1, 1, 1}},
		{"te5-query", numbered(300, ""), 768, []int{50, 250}},
		{"te5-query", numbered(3, strings.Repeat("long ", 6000)), 768, []int{1, 1, 1}},
	} {
		t.Run(tc.model+"-"+strconv.Itoa(len(tc.inputs)), func(t *testing.T) {
			h := newEmbeddingsHarness(t)
			h.fake.SetDefault(vertexfake.Reply{})
			res, err := h.client.Embeddings.New(context.Background(), oai.EmbeddingNewParams{
				Model: tc.model, Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: tc.inputs},
			})
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, r := range h.fake.Requests() {
				sizes = append(sizes, len(r.Predict.GetInstances()))
			}
			slices.Sort(sizes)
			if !slices.Equal(sizes, tc.batches) {
				t.Errorf("calls of %v instances, want %v", sizes, tc.batches)
			}
			words := 0
			for i, d := range res.Data {
				want := vertexfake.Vector(tc.inputs[i], tc.dims)
				if d.Index != int64(i) || len(d.Embedding) != tc.dims || float32(d.Embedding[5]) != want[5] {
					t.Fatalf("item %d (index %d, %d dimensions) is not the vector of input %d", i, d.Index, len(d.Embedding), i)
				}
				words += len(strings.Fields(tc.inputs[i]))
			}
			if res.Usage.PromptTokens != int64(words) || res.Model != tc.model {
				t.Errorf("model %q usage %+v, want %d tokens", res.Model, res.Usage, words)
			}
		})
	}
}

func numbered(n int, pad string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = pad + "text " + strconv.Itoa(i)
	}
	return out
}

// A quota or availability failure fails over to the next route (the mock, of the same
// dimensions); Vertex AI's INVALID_ARGUMENT (a text over 2,048 tokens with autoTruncate
// false) is the client's 400.
func TestGatewayEmbeddingsFailover(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"exhausted", vertexfake.Exhausted(2 * time.Second), 200},
		{"unavailable", vertexfake.Status(codes.Unavailable, "The service is currently unavailable."), 200},
		{"internal", vertexfake.Status(codes.Internal, "Internal error encountered."), 200},
		{"invalid", vertexfake.Status(codes.InvalidArgument, "Input text exceeds the token limit."), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newEmbeddingsHarness(t)
			h.fake.Enqueue(vertexfake.Reply{Err: tc.err})
			r := h.srv.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"te5-backup","input":["alpha","beta"]}`)
			if r.Status != tc.status {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			atts := h.logs.Attempts(t, 1)
			if tc.status == 400 {
				if len(atts) != 1 || atts[0]["error_class"] != "bad_request" {
					t.Errorf("attempts %v", atts)
				}
				return
			}
			gatewaytest.CheckAttempt(t, atts[0], map[string]any{"outcome": "failover", "route": "vertex/text-multilingual-embedding-002"})
			gatewaytest.CheckAttempt(t, atts[1], map[string]any{"outcome": "ok", "route": "backup/embed"})
			if r.Header.Get(gateway.HeaderRoute) != "backup/embed" {
				t.Errorf("route %q", r.Header.Get(gateway.HeaderRoute))
			}
		})
	}
}

// Route checks at start: a chat model, dimensions above the model's; request checks: token
// ids.
func TestEmbeddingsRefusals(t *testing.T) {
	p, err := vertex.New(&config.Connection{Kind: vertex.Kind, Project: "fngate-test", Location: "europe-west4", Insecure: true, Endpoint: "127.0.0.1:9"}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	e := p.(providers.Embedder)
	for _, tc := range []struct {
		target providers.Target
		want   string
	}{
		{providers.Target{Model: "gemini-2.5-flash", Dimensions: 768}, "not a Vertex AI text embedding model"},
		{providers.Target{Model: "text-embedding-005", Dimensions: 1024}, "at most 768 dimensions"},
		{providers.Target{Model: "text-embedding-005", Dimensions: 768, API: "gemini"}, "takes no api"},
	} {
		if err := e.CheckEmbedRoute(tc.target); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.target, err, tc.want)
		}
	}
	if err := e.CheckEmbedRoute(providers.Target{Model: "gemini-embedding-001", Dimensions: 1536}); err != nil {
		t.Errorf("a shortened gemini-embedding-001: %v", err)
	}
	h := newEmbeddingsHarness(t)
	r := h.srv.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"te5-query","input":[[101,2054]]}`)
	if r.Status != 400 || r.ErrorObject(t)["param"] != "input" {
		t.Errorf("token ids: %d %s", r.Status, r.Body)
	}
}

package bedrock

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/golden"
)

// embeddingsGolden is what a golden file holds: the InvokeModel calls the request made (in
// a stable order: Titan's calls run in parallel) and the translated answer.
type embeddingsGolden struct {
	Calls   []embeddingsCall `json:"calls"`
	Vectors []int            `json:"vector_lengths"`
	Usage   *int             `json:"input_tokens"`
}

type embeddingsCall struct {
	Model string          `json:"model"`
	Body  json.RawMessage `json:"body"`
}

// Each family's InvokeModel bodies, and their answers read back, against the fake's
// validation of each family's schema.
func TestEmbeddingsGolden(t *testing.T) {
	for _, tc := range []struct {
		name, model, task, request string
		dims                       int
	}{
		{"titan-v2", "amazon.titan-embed-text-v2:0", config.TaskDocument, `{"model":"m","input":["first text","second","a \"quoted\" third"]}`, 1024},
		{"titan-v2-shortened", "amazon.titan-embed-text-v2:0", config.TaskDocument, `{"model":"m","input":"shorter, please","dimensions":256}`, 1024},
		{"titan-v2-model-dimensions", "amazon.titan-embed-text-v2:0", config.TaskQuery, `{"model":"m","input":"the model asks for 512"}`, 512},
		{"titan-v1", "amazon.titan-embed-text-v1", config.TaskDocument, `{"model":"m","input":["v1 takes the text alone"]}`, 1536},
		{"cohere-v3-document", "cohere.embed-english-v3", config.TaskDocument, `{"model":"m","input":["alpha","beta"]}`, 1024},
		{"cohere-v3-query", "cohere.embed-multilingual-v3", config.TaskQuery, `{"model":"m","input":"wie spät ist es?"}`, 1024},
		{"cohere-v4-shortened", "us.cohere.embed-v4:0", config.TaskClustering, `{"model":"m","input":["one","two"],"dimensions":512}`, 1536},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, f := fakeProvider(t)
			f.Script(tc.model, bedrockfake.Answer{})
			dr, oe := openai.DecodeEmbeddings([]byte(tc.request))
			if oe != nil {
				t.Fatal(oe)
			}
			target := providers.Target{Model: tc.model, Dimensions: tc.dims, Task: tc.task}
			if err := p.CheckEmbedRoute(target); err != nil {
				t.Fatal(err)
			}
			if oe := p.CheckEmbed(&dr.EmbedRequest, target); oe != nil {
				t.Fatal(oe)
			}
			out, err := p.Embed(ctx, &dr.EmbedRequest, target)
			if err != nil {
				t.Fatal(err)
			}
			var g embeddingsGolden
			for _, r := range f.Requests() {
				if r.Invalid != "" {
					t.Errorf("the fake refused a body: %s", r.Invalid)
				}
				g.Calls = append(g.Calls, embeddingsCall{Model: r.ModelID, Body: r.Body})
			}
			slices.SortFunc(g.Calls, func(a, b embeddingsCall) int { return strings.Compare(string(a.Body), string(b.Body)) })
			for i, v := range out.Vectors {
				g.Vectors = append(g.Vectors, len(v))
				if want := bedrockfake.Vector(dr.Input[i], len(v)); !slices.Equal(v, want) {
					t.Errorf("vector %d is not the fake's for %q", i, dr.Input[i])
				}
			}
			g.Usage = out.Usage.InputTokens
			b, _ := json.Marshal(g)
			golden.CheckIndented(t, filepath.Join("testdata", "embeddings", tc.name+".json"), b)
		})
	}
}

// A request above the family's batch is split: 100 texts are 100 Titan calls, or 96 and 4
// for Cohere, whose vectors land in input order and whose usage adds up.
func TestEmbeddingsSplitIntoBatches(t *testing.T) {
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = "text number " + strings.Repeat("x", i%7) + string(rune('a'+i%26))
	}
	for _, tc := range []struct {
		model string
		calls []int // texts per call, sorted
	}{
		{"amazon.titan-embed-text-v2:0", slices.Repeat([]int{1}, 100)},
		{"cohere.embed-english-v3", []int{4, 96}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			p, f := fakeProvider(t)
			f.Script(tc.model, bedrockfake.Answer{})
			req := &llm.EmbedRequest{Model: "m", Input: texts}
			out, err := p.Embed(ctx, req, providers.Target{Model: tc.model, Dimensions: 1024, Task: config.TaskDocument})
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, r := range f.Requests() {
				var b struct {
					Texts []string `json:"texts"`
				}
				_ = json.Unmarshal(r.Body, &b)
				sizes = append(sizes, max(len(b.Texts), 1))
			}
			slices.Sort(sizes)
			if !slices.Equal(sizes, tc.calls) {
				t.Errorf("calls of %v texts, want %v", sizes, tc.calls)
			}
			for i, v := range out.Vectors {
				if !slices.Equal(v, bedrockfake.Vector(texts[i], 1024)) {
					t.Fatalf("vector %d is not that of text %d", i, i)
				}
			}
			if u := out.Usage.InputTokens; u == nil || *u != 300 {
				t.Errorf("input tokens %v, want 300 (three words a text)", u)
			}
		})
	}
}

// One failed call fails the attempt, classified as Bedrock's exception, so the gateway fails
// over (or not) as for any call.
func TestEmbeddingsBatchFailure(t *testing.T) {
	p, f := fakeProvider(t)
	f.Script("amazon.titan-embed-text-v2:0", bedrockfake.Answer{}, bedrockfake.Answer{}, bedrockfake.Answer{Error: &bedrockfake.Exception{Type: "ThrottlingException", Message: "Too many requests"}})
	req := &llm.EmbedRequest{Model: "m", Input: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}
	_, err := p.Embed(ctx, req, providers.Target{Model: "amazon.titan-embed-text-v2:0", Dimensions: 1024})
	if g := errorOf(t, err); g.Class != string(providers.RateLimited) || g.Client != 429 {
		t.Errorf("error %+v", g)
	}
}

// The route checks: a model Bedrock has no embeddings for, dimensions the model cannot
// return, a task Cohere has no input type for; the request checks: token ids, dimensions,
// a text over Cohere v3's 2,048 characters.
func TestEmbeddingsRefusals(t *testing.T) {
	p, _ := fakeProvider(t)
	for _, tc := range []struct {
		target providers.Target
		want   string
	}{
		{providers.Target{Model: "amazon.nova-lite-v1:0", Dimensions: 1024}, "not an embedding model"},
		{providers.Target{Model: "amazon.titan-embed-text-v2:0", Dimensions: 1536}, "returns 1024, 512 or 256 dimensions"},
		{providers.Target{Model: "cohere.embed-english-v3", Dimensions: 512, Task: config.TaskDocument}, "returns 1024 dimensions"},
		{providers.Target{Model: "cohere.embed-v4:0", Dimensions: 1536, Task: config.TaskSimilarity}, "no input type for the task similarity"},
	} {
		if err := p.CheckEmbedRoute(tc.target); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.target, err, tc.want)
		}
	}
	cohere := providers.Target{Model: "cohere.embed-english-v3", Dimensions: 1024, Task: config.TaskDocument}
	titan := providers.Target{Model: "amazon.titan-embed-text-v2:0", Dimensions: 1024}
	for _, tc := range []struct {
		target      providers.Target
		req         llm.EmbedRequest
		param, code string
	}{
		{titan, llm.EmbedRequest{Tokens: [][]int{{1, 2}}}, "input", "unsupported_parameter"},
		{titan, llm.EmbedRequest{Input: []string{"a"}, Dimensions: llm.Int(300)}, "dimensions", "unsupported_parameter"},
		{cohere, llm.EmbedRequest{Input: []string{"a"}, Dimensions: llm.Int(256)}, "dimensions", "unsupported_parameter"},
		{cohere, llm.EmbedRequest{Input: []string{"short", strings.Repeat("é", 2049)}}, "input[1]", ""},
	} {
		oe := p.CheckEmbed(&tc.req, tc.target)
		if oe == nil || oe.Param != tc.param || oe.Status != 400 || oe.Code != tc.code {
			t.Errorf("%s %+v: %v", tc.target.Model, tc.req, oe)
		}
	}
	if oe := p.CheckEmbed(&llm.EmbedRequest{Input: []string{strings.Repeat("é", 2048)}}, cohere); oe != nil {
		t.Errorf("2,048 characters refused: %v", oe)
	}
}

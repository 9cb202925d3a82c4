package openaicompat_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
	"github.com/fngate/fngate/internal/openaifake"
)

// The upstream /embeddings bodies of each kind: the route's model, the inputs as an array,
// base64 asked of OpenAI alone, dimensions where it changes the answer, no user label.
func TestEmbeddingsUpstreamBodies(t *testing.T) {
	for _, tc := range []struct {
		name, kind, model, request string
		dims                       int
	}{
		{"openai", "openai", "text-embedding-3-small", `{"model":"gw","input":["first \"one\"","second"],"user":"u-1"}`, 1536},
		{"openai-shortened", "openai", "text-embedding-3-large", `{"model":"gw","input":"x","dimensions":256}`, 3072},
		{"openai-model-dimensions", "openai", "text-embedding-3-large", `{"model":"gw","input":"x"}`, 1024},
		{"openai-tokens", "openai", "text-embedding-3-small", `{"model":"gw","input":[[9906,1917],[15339]]}`, 1536},
		{"openrouter", "openrouter", "openai/text-embedding-3-small", `{"model":"gw","input":"x","dimensions":512}`, 1536},
		{"vllm-tokens", "vllm", "BAAI/bge-m3", `{"model":"gw","input":[1,2,3]}`, 16},
		{"vllm-matryoshka", "vllm", "Qwen/Qwen3-Embedding-0.6B", `{"model":"gw","input":["a"],"dimensions":8}`, 16},
		{"sglang", "sglang", "Alibaba-NLP/gte-Qwen2-1.5B-instruct", `{"model":"gw","input":"a"}`, 16},
		{"ollama", "ollama", "nomic-embed-text", `{"model":"gw","input":["a","b"],"encoding_format":"base64"}`, 16},
		{"openai-compatible", "openai-compatible", "e5-large", `{"model":"gw","input":"a"}`, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := openaifake.New()
			defer fake.Close()
			e := newProvider(t, tc.kind, fake.BaseURL()).(providers.Embedder)
			dr, oe := openai.DecodeEmbeddings([]byte(tc.request))
			if oe != nil {
				t.Fatal(oe)
			}
			target := providers.Target{Model: tc.model, Dimensions: tc.dims}
			if err := e.CheckEmbedRoute(target); err != nil {
				t.Fatal(err)
			}
			if oe := e.CheckEmbed(&dr.EmbedRequest, target); oe != nil {
				t.Fatal(oe)
			}
			out, err := e.Embed(context.Background(), &dr.EmbedRequest, target)
			if err != nil {
				t.Fatal(err)
			}
			got := fake.Requests()[0]
			if got.Path != "/v1/embeddings" || got.Header.Get("Authorization") != "Bearer sk-test-0123456789" {
				t.Errorf("path %s, Authorization %q", got.Path, got.Header.Get("Authorization"))
			}
			golden.Check(t, filepath.Join("testdata", "embeddings", tc.name+".request.json"), golden.Indent(t, got.Raw))
			dims := providers.Dimensions(&dr.EmbedRequest, target)
			for i, v := range out.Vectors {
				key := ""
				if dr.Tokens != nil {
					key = joinIDs(dr.Tokens[i]) // the fake embeds token ids as their text
				} else {
					key = dr.Input[i]
				}
				if !slices.Equal(v, openaifake.Vector(key, dims)) {
					t.Errorf("vector %d is not the upstream's", i)
				}
			}
		})
	}
}

func joinIDs(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, " ")
}

// What each kind refuses, at start and per request.
func TestEmbeddingsRefusals(t *testing.T) {
	for _, tc := range []struct {
		kind, model string
		dims        int
		want        string
	}{
		{"openai", "text-embedding-ada-002", 768, "cannot shorten"},
		{"openai", "text-embedding-3-small", 2048, "at most 1536"},
		{"openrouter", "openai/text-embedding-3-large", 4096, "at most 3072"},
	} {
		e := newProvider(t, tc.kind, "http://127.0.0.1:9/v1").(providers.Embedder)
		if err := e.CheckEmbedRoute(providers.Target{Model: tc.model, Dimensions: tc.dims}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s at %d: %v, want %q", tc.kind, tc.model, tc.dims, err, tc.want)
		}
	}
	for _, kind := range []string{"vllm", "ollama", "openai-compatible"} {
		e := newProvider(t, kind, "http://127.0.0.1:9/v1").(providers.Embedder)
		if err := e.CheckEmbedRoute(providers.Target{Model: "some-model", Dimensions: 4096}); err != nil {
			t.Errorf("%s: a model the gateway cannot know refused: %v", kind, err)
		}
	}
	tokens := &llm.EmbedRequest{Tokens: [][]int{{1, 2}}}
	for kind, refused := range map[string]bool{"openai": false, "vllm": false, "sglang": false, "ollama": true, "openrouter": true, "openai-compatible": true} {
		e := newProvider(t, kind, "http://127.0.0.1:9/v1").(providers.Embedder)
		oe := e.CheckEmbed(tokens, providers.Target{Model: "m", Dimensions: 16})
		if (oe != nil) != refused || refused && oe.Param != "input" {
			t.Errorf("%s token ids: %v", kind, oe)
		}
	}
	e := newProvider(t, "openai", "http://127.0.0.1:9/v1").(providers.Embedder)
	if oe := e.CheckEmbed(&llm.EmbedRequest{Input: []string{"a"}, Dimensions: llm.Int(512)}, providers.Target{Model: "text-embedding-ada-002", Dimensions: 1536}); oe == nil || oe.Param != "dimensions" {
		t.Errorf("ada-002 shortened: %v", oe)
	}
}

// Answers: items by their index, either encoding, usage as reported; a broken answer is an
// unavailable upstream.
func TestEmbeddingsAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
		tokens     *int
	}{
		{"out of order", `{"data":[{"index":1,"embedding":[2,2]},{"index":0,"embedding":"AACAPwAAgD8="}],"usage":{"prompt_tokens":3,"total_tokens":3}}`, true, llm.Int(3)},
		{"no index, no usage", `{"data":[{"embedding":[1,1]},{"embedding":[2,2]}]}`, true, nil},
		{"an index repeated", `{"data":[{"index":0,"embedding":[1,1]},{"index":0,"embedding":[2,2]}]}`, false, nil},
		{"an index out of range", `{"data":[{"index":0,"embedding":[1,1]},{"index":2,"embedding":[2,2]}]}`, false, nil},
		{"one item short", `{"data":[{"index":0,"embedding":[1,1]}]}`, false, nil},
		{"not JSON", `{"data":[`, false, nil},
		{"base64 with an escape", `{"data":[{"index":0,"embedding":"AACAPwAAgD8\u003d"},{"index":1,"embedding":"AAAAQAAAAEA="}]}`, true, nil},
		{"base64 with a raw line break", "{\"data\":[{\"index\":0,\"embedding\":\"AACAPwAA\ngD8=\"},{\"index\":1,\"embedding\":\"AAAAQAAAAEA=\"}]}", false, nil},
		{"base64 unterminated", `{"data":[{"index":0,"embedding":"AACAPwAAgD8=`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := openaifake.New()
			defer fake.Close()
			fake.Enqueue(openaifake.Reply{Body: []byte(tc.body)})
			e := newProvider(t, "vllm", fake.BaseURL()).(providers.Embedder)
			out, err := e.Embed(context.Background(), &llm.EmbedRequest{Input: []string{"a", "b"}}, providers.Target{Model: "m", Dimensions: 2})
			if !tc.ok {
				if pe, isPE := err.(*providers.Error); !isPE || pe.Class != providers.Unavailable {
					t.Errorf("error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out.Vectors[0], []float32{1, 1}) || !slices.Equal(out.Vectors[1], []float32{2, 2}) {
				t.Errorf("vectors %v", out.Vectors)
			}
			if (out.Usage.InputTokens == nil) != (tc.tokens == nil) || tc.tokens != nil && *out.Usage.InputTokens != *tc.tokens {
				t.Errorf("usage %+v", out.Usage)
			}
		})
	}
}

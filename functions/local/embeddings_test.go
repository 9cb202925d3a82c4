package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/fngate/fngate/internal/loopback"
	"github.com/fngate/fngate/internal/openaifake"
)

// TestEmbeddedDefaultServesEmbeddings: the local server on the embedded default, with every
// provider's credentials in its environment, starts (each embedding route agreed with its
// model's dimensions), lists an embedding model for each provider that has one, and serves
// openai-go's Embeddings.New: the mock's vectors, and OpenAI's through its base URL pointed
// at a local fake, shortened when asked.
func TestEmbeddedDefaultServesEmbeddings(t *testing.T) {
	up := openaifake.New()
	t.Cleanup(up.Close)
	closed := "http://" + loopback.ForTest(t).Addr() + "/v1" // reserved, nothing listens
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"OPENAI_API_KEY=sk-test-default-0123456789", "OPENAI_BASE_URL=" + up.BaseURL(),
		"OPENROUTER_API_KEY=sk-or-test-0123456789",
		"AWS_BEARER_TOKEN_BEDROCK=bedrock-api-key-test", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true",
		"GOOGLE_CLOUD_PROJECT=test-project", // credentials are looked up on first use, never here
		"OLLAMA_BASE_URL=" + closed, "VLLM_BASE_URL=" + closed,
	}
	_, addr := startServerEnv(t, env, "-route-state", "off")
	base := "http://" + addr

	resp, err := http.Get(base + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	for _, want := range []string{"mock/embed", "openai/text-embedding-3-small", "openai/text-embedding-3-large",
		"bedrock/titan-embed-text-v2", "bedrock/cohere-embed-english-v3", "vertex/gemini-embedding-001",
		"vertex/text-embedding-005", "openrouter/openai/text-embedding-3-small"} {
		if !slices.Contains(ids, want) {
			t.Errorf("GET /v1/models does not list %s: %v", want, ids)
		}
	}

	client := oai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	ctx := context.Background()
	for _, tc := range []struct {
		model    string
		dims     int64 // asked; 0: the model's
		wantDims int
		upstream bool // served by the fake OpenAI
	}{
		{"mock/embed", 0, 256, false},
		{"openai/text-embedding-3-small", 0, 1536, true},
		{"openai/text-embedding-3-large", 256, 256, true},
	} {
		t.Run(tc.model, func(t *testing.T) {
			before := len(up.Requests())
			params := oai.EmbeddingNewParams{
				Model: tc.model,
				Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first text", "second text"}},
			}
			if tc.dims > 0 {
				params.Dimensions = oai.Int(tc.dims)
			}
			res, err := client.Embeddings.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if res.Model != tc.model || len(res.Data) != 2 || res.Data[1].Index != 1 {
				t.Fatalf("model %q, %d items", res.Model, len(res.Data))
			}
			for i, d := range res.Data {
				if len(d.Embedding) != tc.wantDims {
					t.Errorf("embedding %d has %d dimensions, want %d", i, len(d.Embedding), tc.wantDims)
				}
			}
			if served := len(up.Requests()) > before; served != tc.upstream {
				t.Errorf("the fake OpenAI served it: %v, want %v", served, tc.upstream)
			}
			if tc.upstream {
				want := openaifake.Vector("second text", tc.wantDims)
				if float32(res.Data[1].Embedding[3]) != want[3] {
					t.Errorf("the vector is not the upstream's")
				}
			}
		})
	}

	// A chat model of the default is no embedding model.
	_, err = client.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "mock/echo", Input: oai.EmbeddingNewParamsInputUnion{OfString: oai.String("x")}})
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "model" {
		t.Fatalf("a chat model for embeddings: %v", err)
	}
}

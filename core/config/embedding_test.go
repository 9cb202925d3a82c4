package config_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
)

// An embedding model's settings, and its routes' agreement on its dimensions, are checked
// before the gateway serves: each mistake stops the start naming the line marked "# <-".
func TestStartRefusesEmbeddingMistakes(t *testing.T) {
	const conns = "connections:\n  mock: {kind: mock}\n  oai: {kind: openai, api_key: sk-test-1234567890, base_url: \"http://127.0.0.1:9/v1\"}\n"
	for _, tc := range []struct {
		name, yaml, path, why string
	}{
		{"an unknown kind", conns + `
models:
  e:
    kind: embeddings # <-
    routes: [{connection: mock, model: embed}]
`, "models.e.kind", "must be chat or embedding"},
		{"no dimensions", conns + `
models:
  e:
    kind: embedding # <-
    routes: [{connection: mock, model: embed}]
`, "models.e.dimensions", "is required for an embedding model"},
		{"dimensions on a chat model", conns + `
models:
  c:
    dimensions: 768 # <-
    routes: [{connection: mock, model: echo}]
`, "models.c.dimensions", "only embedding models have dimensions"},
		{"an unknown task", conns + `
models:
  e:
    kind: embedding
    dimensions: 8
    task: search # <-
    routes: [{connection: mock, model: embed}]
`, "models.e.task", "must be document, query"},
		{"an output maximum", conns + `
models:
  e:
    kind: embedding
    dimensions: 8
    max_output_tokens: 100 # <-
    routes: [{connection: mock, model: embed}]
`, "models.e.max_output_tokens", "has no output"},
		{"an output price", conns + `
models:
  e:
    kind: embedding
    dimensions: 8
    price: {input_per_mtok: 0.1, output_per_mtok: 1} # <-
    routes: [{connection: mock, model: embed}]
`, "models.e.price", "per input token only"},
		{"a route that cannot shorten to the model's dimensions", conns + `
models:
  e:
    kind: embedding
    dimensions: 768
    routes:
      - {connection: mock, model: embed}
      - {connection: oai, model: text-embedding-ada-002} # <-
`, "models.e.routes[1]", "returns 1536 dimensions and cannot shorten them"},
		{"a route longer than the model's dimensions", conns + `
models:
  e:
    kind: embedding
    dimensions: 4096
    routes:
      - {connection: oai, model: text-embedding-3-large} # <-
`, "models.e.routes[0]", "at most 3072"},
		{"a chat route on an embedding model", conns + `
models:
  e:
    kind: embedding
    dimensions: 8
    routes:
      - {connection: mock, model: echo} # <-
`, "models.e.routes[0]", "use embed"},
		{"an embedding route on a chat model", conns + `
models:
  c:
    routes:
      - {connection: mock, model: embed} # <-
`, "models.c.routes[0]", "give its gateway model kind: embedding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			where := fmt.Sprintf("line %d: %s", markedLine(t, tc.yaml), tc.path)
			err := start(tc.yaml)
			if err == nil {
				t.Fatal("the gateway started")
			}
			if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q\nwant it to name %q and say %q", err, where, tc.why)
			}
		})
	}
	ok := conns + `
models:
  e:
    kind: embedding
    dimensions: 1024
    task: query
    price: {input_per_mtok: 0.02}
    routes:
      - {connection: mock, model: embed}
      - {connection: oai, model: text-embedding-3-small}
`
	if err := start(ok); err != nil {
		t.Errorf("a shortened text-embedding-3-small beside the mock: %v", err)
	}
}

// The embedded default has an embedding model for each provider whose credentials are
// present, and the mock's always.
func TestEmbeddedDefaultEmbeddingModels(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY": "sk-test-123456789", "AWS_BEARER_TOKEN_BEDROCK": "bedrock-key-test",
		"GOOGLE_CLOUD_PROJECT": "p", "OPENROUTER_API_KEY": "sk-or-test-123456",
	}
	opt := config.Options{Getenv: func(k string) string { return env[k] }, HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}}
	cfg, err := config.Default(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mock/embed", "openai/text-embedding-3-small", "openai/text-embedding-3-large", "bedrock/titan-embed-text-v2",
		"bedrock/cohere-embed-english-v3", "vertex/gemini-embedding-001", "vertex/text-embedding-005", "openrouter/openai/text-embedding-3-small"} {
		m, ok := cfg.Models[name]
		if !ok || !m.Embedding() || m.Dimensions == 0 || m.Task != config.TaskDocument {
			t.Errorf("%s: %+v", name, m)
		}
	}
	env = nil
	cfg, err = config.Default(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range cfg.Models {
		if m.Embedding() && name != "mock/embed" {
			t.Errorf("%s is on without credentials", name)
		}
	}
}

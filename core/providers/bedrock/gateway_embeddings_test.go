package bedrock_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const embeddingsConfig = `
connections:
  aws:
    kind: bedrock
    region: us-west-2
    endpoint: %s
models:
  titan:
    kind: embedding
    dimensions: 1024
    price: {input_per_mtok: 0.02}
    routes:
      - {connection: aws, model: "amazon.titan-embed-text-v2:0"}
  docs:
    kind: embedding
    dimensions: 1024
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: aws, model: cohere.embed-multilingual-v3}
      - {connection: aws, model: cohere.embed-english-v3}
`

func newEmbeddingsHarness(t *testing.T) *harness {
	t.Helper()
	awstest.Isolate(t, "AKIDGATEWAY")
	f := bedrockfake.Start()
	t.Cleanup(f.Close)
	srv, logs := gatewaytest.ServeLogged(t, fmt.Sprintf(embeddingsConfig, f.URL), registerBedrock)
	return &harness{fake: f, srv: srv, logs: logs, client: srv.OpenAI()}
}

// openai-go's Embeddings.New through Titan: a batch of 16 is 16 InvokeModel calls, whose
// vectors come back in input order and whose token counts add up to the usage and the cost.
func TestGatewayEmbeddingsTitan(t *testing.T) {
	h := newEmbeddingsHarness(t)
	h.fake.Script("amazon.titan-embed-text-v2:0", bedrockfake.Answer{})
	inputs := make([]string, 16)
	for i := range inputs {
		inputs[i] = "passage number " + strconv.Itoa(i)
	}
	var resp *http.Response
	res, err := h.client.Embeddings.New(context.Background(), oai.EmbeddingNewParams{
		Model: "titan", Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
	}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.fake.Requests()); n != 16 {
		t.Errorf("%d InvokeModel calls, want 16", n)
	}
	for i, d := range res.Data {
		want := bedrockfake.Vector(inputs[i], 1024)
		got := make([]float32, len(d.Embedding))
		for j, f := range d.Embedding {
			got[j] = float32(f)
		}
		if d.Index != int64(i) || !slices.Equal(got, want) {
			t.Fatalf("item %d (index %d) is not the vector of %q", i, d.Index, inputs[i])
		}
	}
	if res.Model != "titan" || res.Usage.PromptTokens != 48 || res.Usage.TotalTokens != 48 {
		t.Errorf("model %q usage %+v", res.Model, res.Usage)
	}
	a := h.logs.Attempts(t, 1)[0]
	gatewaytest.CheckAttempt(t, a, map[string]any{"endpoint": "embeddings", "outcome": "ok", "route": "aws/amazon.titan-embed-text-v2:0"})
	if c, _ := a["cost_usd"].(float64); c < 48*0.02/1e6*0.999 || c > 48*0.02/1e6*1.001 {
		t.Errorf("cost %v", a["cost_usd"])
	}

	// dimensions 256 goes to Titan as its dimensions.
	short, err := h.client.Embeddings.New(context.Background(), oai.EmbeddingNewParams{
		Model: "titan", Input: oai.EmbeddingNewParamsInputUnion{OfString: oai.String("short")}, Dimensions: oai.Int(256),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(short.Data[0].Embedding); n != 256 || !strings.Contains(string(h.fake.Last().Body), `"dimensions":256`) {
		t.Errorf("%d dimensions, body %s", n, h.fake.Last().Body)
	}
}

// Cohere's usage comes from Bedrock's token-count header; a throttled, unavailable or failed
// model fails over to the next route, a ValidationException does not.
func TestGatewayEmbeddingsCohereFailover(t *testing.T) {
	for _, tc := range []struct {
		exception string
		failover  bool
		status    int
	}{
		{"ThrottlingException", true, 200},
		{"ServiceUnavailableException", true, 200},
		{"ModelErrorException", true, 200},
		{"InternalServerException", true, 200},
		{"ValidationException", false, 400},
	} {
		t.Run(tc.exception, func(t *testing.T) {
			h := newEmbeddingsHarness(t)
			h.fake.Script("cohere.embed-multilingual-v3", bedrockfake.Answer{Error: &bedrockfake.Exception{Type: tc.exception, Message: "scripted " + tc.exception}})
			h.fake.Script("cohere.embed-english-v3", bedrockfake.Answer{})
			r := h.srv.Do(t, http.MethodPost, "/v1/embeddings", `{"model":"docs","input":["a document to index","another one"]}`)
			if r.Status != tc.status {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			atts := h.logs.Attempts(t, 1)
			if !tc.failover {
				if len(atts) != 1 || atts[0]["outcome"] != "error" {
					t.Errorf("attempts %v", atts)
				}
				return
			}
			gatewaytest.CheckAttempt(t, atts[0], map[string]any{"outcome": "failover", "error_code": tc.exception})
			gatewaytest.CheckAttempt(t, atts[1], map[string]any{"outcome": "ok", "route": "aws/cohere.embed-english-v3"})
			if u, _ := atts[1]["usage"].(map[string]any); u["prompt_tokens"] != 6.0 {
				t.Errorf("usage %v, want the header's 6", atts[1]["usage"])
			}
			if !strings.Contains(string(h.fake.Last().Body), `"input_type":"search_document"`) {
				t.Errorf("body %s", h.fake.Last().Body)
			}
		})
	}
}

// A route whose model cannot return the model's dimensions stops the start, naming its
// place in the config.
func TestGatewayEmbeddingsDimensionsMustAgree(t *testing.T) {
	awstest.Isolate(t, "AKIDGATEWAY")
	yaml := `connections:
  aws: {kind: bedrock, region: us-west-2, endpoint: "http://127.0.0.1:9"}
  mock: {kind: mock}
models:
  e:
    kind: embedding
    dimensions: 1024
    routes:
      - {connection: mock, model: embed}
      - {connection: aws, model: "amazon.titan-embed-text-v1"}
`
	cfg, err := config.Parse(context.Background(), []byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.Registry{}
	bedrock.Register(reg, sdkconfig.Load)
	mock.Register(reg)
	_, err = gateway.New(cfg, gateway.Options{Registry: reg})
	if err == nil || !strings.Contains(err.Error(), "line 10: models.e.routes[1]") || !strings.Contains(err.Error(), "returns 1536 dimensions") {
		t.Errorf("error %v", err)
	}
}

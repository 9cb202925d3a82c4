package vertex

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Vertex AI's text embeddings go through PredictionService.Predict on the Google publisher
// model ({parent}/publishers/google/models/{model}), one instance per text:
//
//	instances:  [{"content": text, "task_type": RETRIEVAL_DOCUMENT | RETRIEVAL_QUERY |
//	              SEMANTIC_SIMILARITY | CLASSIFICATION | CLUSTERING}]
//	parameters: {"autoTruncate": false, "outputDimensionality": n}
//
// The task type is the gateway model's task (document, query, similarity, classification,
// clustering, in that order above); without one Vertex AI would take RETRIEVAL_QUERY, so the
// gateway always sends it. autoTruncate is false: a text over the model's 2,048 tokens is
// Vertex AI's INVALID_ARGUMENT (the client's 400), never silently cut, as on every other
// route. outputDimensionality is sent when the length asked is not the model's own.
//
// Batches: text-embedding-005, text-embedding-004 and text-multilingual-embedding-002 take
// up to 250 texts and 20,000 tokens a call; the gateway cuts batches at 250 texts or 54,000
// bytes of text (20,000 tokens at no fewer than 2.7 bytes a token, which holds for the
// scripts these models read), four calls at a time. gemini-embedding-001 takes one text a
// call, eight at a time. The input tokens are the sum of each prediction's
// statistics.token_count.
var vertexEmbeddingModels = map[string]vertexEmbedding{
	"text-embedding-005":              {dims: 768, batch: 250},
	"text-embedding-004":              {dims: 768, batch: 250},
	"text-multilingual-embedding-002": {dims: 768, batch: 250},
	"gemini-embedding-001":            {dims: 3072, batch: 1},
}

type vertexEmbedding struct {
	dims  int // the model's own dimensions; any from 1 to it can be asked for
	batch int // texts per call
}

// vertexBatchBytes bounds the text of one call; see above.
const vertexBatchBytes = 54000

// vertexTasks are Vertex AI's task types for the gateway's tasks.
var vertexTasks = map[string]string{
	config.TaskDocument:       "RETRIEVAL_DOCUMENT",
	config.TaskQuery:          "RETRIEVAL_QUERY",
	config.TaskSimilarity:     "SEMANTIC_SIMILARITY",
	config.TaskClassification: "CLASSIFICATION",
	config.TaskClustering:     "CLUSTERING",
}

// embeddingOf looks a route's model up; a "google/" prefix and an "@version" suffix are the
// same model. A model not in the table whose name says embedding (a newer one) is taken at
// the gateway model's word (its dimensions are the model's own), one text a call.
func embeddingOf(model string) (vertexEmbedding, bool) {
	name, _, _ := strings.Cut(strings.TrimPrefix(model, "google/"), "@")
	if e, ok := vertexEmbeddingModels[name]; ok {
		return e, true
	}
	return vertexEmbedding{batch: 1}, strings.Contains(name, "embedding") && !strings.Contains(name, "/")
}

// CheckEmbedRoute refuses a model that is no text-embedding model, an api setting (which
// chooses among chat wires), and dimensions above the model's own.
func (p *Provider) CheckEmbedRoute(t providers.Target) error {
	if t.API != "" {
		return errors.New("an embedding route takes no api setting (got " + quoteString(t.API) + ")")
	}
	e, ok := embeddingOf(t.Model)
	switch {
	case !ok:
		return errors.New(t.Model + " is not a Vertex AI text embedding model: use gemini-embedding-001, text-embedding-005 or text-multilingual-embedding-002")
	case e.dims > 0 && t.Dimensions > e.dims:
		return fmt.Errorf("%s returns at most %d dimensions; the model's dimensions are %d", t.Model, e.dims, t.Dimensions)
	}
	return nil
}

// CheckEmbed refuses token ids: Vertex AI embeds texts.
func (p *Provider) CheckEmbed(req *llm.EmbedRequest, t providers.Target) *llm.Error {
	if req.Tokens != nil {
		return llm.Unsupported("input", "Vertex AI embeds texts only: send input as strings, not token ids")
	}
	return nil
}

// Embed makes the Predict calls of req's texts.
func (p *Provider) Embed(ctx context.Context, req *llm.EmbedRequest, t providers.Target) (*llm.Embeddings, error) {
	client, err := p.predictionClient()
	if err != nil {
		return nil, err
	}
	e, _ := embeddingOf(t.Model)
	params := embeddingParameters(req, t, e)
	endpoint := p.geminiModel(t.Model)
	out := &llm.Embeddings{Vectors: make([][]float32, len(req.Input))}
	parallel := 4
	if e.batch == 1 {
		parallel = 8
	}
	usage, err := providers.EmbedBatches(ctx, len(req.Input), e.batch, parallel, func(i int) int { return len(req.Input[i]) }, vertexBatchBytes,
		func(ctx context.Context, lo, hi int) (*llm.Usage, error) {
			resp, err := client.Predict(ctx, &aiplatformpb.PredictRequest{Endpoint: endpoint, Instances: embeddingInstances(req.Input[lo:hi], t.Task), Parameters: params})
			if err != nil {
				return nil, callError(ctx, err, Gemini, false)
			}
			return readPredictions(resp, out.Vectors[lo:hi])
		})
	if err != nil {
		return nil, err
	}
	out.Usage = usage
	return out, nil
}

// embeddingInstances are the Predict instances of texts.
func embeddingInstances(texts []string, task string) []*structpb.Value {
	out := make([]*structpb.Value, len(texts))
	tt := structpb.NewStringValue(vertexTasks[task])
	for i, s := range texts {
		out[i] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"content":   structpb.NewStringValue(s),
			"task_type": tt,
		}})
	}
	return out
}

// embeddingParameters are the Predict parameters of a request on route t.
func embeddingParameters(req *llm.EmbedRequest, t providers.Target, e vertexEmbedding) *structpb.Value {
	fields := map[string]*structpb.Value{"autoTruncate": structpb.NewBoolValue(false)}
	if d := providers.Dimensions(req, t); d != e.dims && (e.dims > 0 || req.Dimensions != nil) {
		fields["outputDimensionality"] = structpb.NewNumberValue(float64(d))
	}
	return structpb.NewStructValue(&structpb.Struct{Fields: fields})
}

// readPredictions reads one prediction per text into vectors, in order: each is
// {"embeddings": {"values": [...], "statistics": {"token_count": n, "truncated": false}}}.
func readPredictions(resp *aiplatformpb.PredictResponse, vectors [][]float32) (*llm.Usage, error) {
	preds := resp.GetPredictions()
	if len(preds) != len(vectors) {
		return nil, unreadableEmbeddings(fmt.Errorf("%d predictions for %d texts", len(preds), len(vectors)))
	}
	tokens := 0
	counted := true
	for i, pr := range preds {
		emb := pr.GetStructValue().GetFields()["embeddings"].GetStructValue().GetFields()
		values := emb["values"].GetListValue()
		if values == nil {
			return nil, unreadableEmbeddings(fmt.Errorf("prediction %d has no embeddings.values", i))
		}
		v := make([]float32, len(values.GetValues()))
		for j, x := range values.GetValues() {
			n, ok := x.GetKind().(*structpb.Value_NumberValue)
			if !ok {
				return nil, unreadableEmbeddings(fmt.Errorf("prediction %d value %d is not a number", i, j))
			}
			v[j] = float32(n.NumberValue)
		}
		vectors[i] = v
		if c, ok := emb["statistics"].GetStructValue().GetFields()["token_count"].GetKind().(*structpb.Value_NumberValue); ok {
			tokens += int(c.NumberValue)
		} else {
			counted = false
		}
	}
	if !counted {
		return &llm.Usage{}, nil
	}
	return &llm.Usage{InputTokens: llm.Int(tokens)}, nil
}

func unreadableEmbeddings(err error) error {
	return &providers.Error{Class: providers.Unavailable, Provider: Name, Err: err, Message: "unreadable embeddings answer: " + err.Error()}
}

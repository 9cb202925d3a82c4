package bedrock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// embedder is one family of Bedrock embedding models: each has its own InvokeModel body,
// batch rule and limits (embeddings_titan.go, embeddings_cohere.go).
type embedder struct {
	name string // for messages: "Amazon Titan Text Embeddings v2"
	// dims are the lengths the model returns, its own first; a longer list means the body
	// can ask for the others.
	dims []int
	// batch is the most texts one call takes; parallel how many calls of one request run at
	// once when a request needs several.
	batch, parallel int
	// maxChars is the longest text the model takes, in characters (0: no limit the gateway
	// knows of).
	maxChars int
	// tasks maps the gateway's tasks to the model's input types; nil for a model without.
	tasks map[string]string
	// call embeds texts[lo:hi] into vectors[lo:hi] with one InvokeModel call.
	call func(p *Provider, ctx context.Context, t providers.Target, e *embedder, texts []string, dims int, vectors [][]float32) (*llm.Usage, error)
}

// embedderOf picks a route's family from its model id: foundation models, cross-region
// inference profiles (us.cohere.embed-v4:0) and ARNs that name them. An application
// inference profile's ARN does not show its model, and has no embeddings here.
func embedderOf(model string) (*embedder, bool) {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "amazon.titan-embed-text-v2"):
		return &titanV2, true
	case strings.Contains(m, "amazon.titan-embed-text-v1"):
		return &titanV1, true
	case strings.Contains(m, "cohere.embed-v4"):
		return &cohereV4, true
	case strings.Contains(m, "cohere.embed-english-v3"), strings.Contains(m, "cohere.embed-multilingual-v3"):
		return &cohereV3, true
	}
	return nil, false
}

// CheckEmbedRoute refuses a model that is none of the families above, dimensions the model
// cannot return, and a task its family has no input type for.
func (p *Provider) CheckEmbedRoute(t providers.Target) error {
	e, ok := embedderOf(t.Model)
	if !ok {
		return errors.New(t.Model + " is not an embedding model Amazon Bedrock serves here: use Amazon Titan Text Embeddings (amazon.titan-embed-text-v2:0, amazon.titan-embed-text-v1) or Cohere Embed (cohere.embed-english-v3, cohere.embed-multilingual-v3, cohere.embed-v4:0)")
	}
	if !slices.Contains(e.dims, t.Dimensions) {
		return fmt.Errorf("%s returns %s dimensions; the model's dimensions are %d", e.name, dimsList(e.dims), t.Dimensions)
	}
	if e.tasks != nil {
		if _, ok := e.tasks[t.Task]; !ok {
			return fmt.Errorf("%s has no input type for the task %s: use document, query, classification or clustering", e.name, t.Task)
		}
	}
	return nil
}

// CheckEmbed refuses token ids (Bedrock's models take texts), dimensions the model cannot
// return, and texts over the model's documented length.
func (p *Provider) CheckEmbed(req *llm.EmbedRequest, t providers.Target) *llm.Error {
	e, _ := embedderOf(t.Model)
	if req.Tokens != nil {
		return llm.Unsupported("input", e.name+" on Amazon Bedrock embeds texts only: send input as strings, not token ids")
	}
	if d := providers.Dimensions(req, t); !slices.Contains(e.dims, d) {
		return llm.Unsupported("dimensions", e.name+" returns "+dimsList(e.dims)+" dimensions, not "+strconv.Itoa(d))
	}
	if e.maxChars > 0 {
		for i, s := range req.Input {
			if len(s) > e.maxChars && utf8.RuneCountInString(s) > e.maxChars {
				p := "input[" + strconv.Itoa(i) + "]"
				return llm.BadRequest(p, p+" is longer than the "+strconv.Itoa(e.maxChars)+" characters "+e.name+" takes on Amazon Bedrock")
			}
		}
	}
	return nil
}

// Embed embeds the texts in batches of the family's size, in parallel calls when there are
// several; a failed call fails the whole attempt.
func (p *Provider) Embed(ctx context.Context, req *llm.EmbedRequest, t providers.Target) (*llm.Embeddings, error) {
	e, _ := embedderOf(t.Model)
	dims := providers.Dimensions(req, t)
	out := &llm.Embeddings{Vectors: make([][]float32, len(req.Input))}
	usage, err := providers.EmbedBatches(ctx, len(req.Input), e.batch, e.parallel, nil, 0,
		func(ctx context.Context, lo, hi int) (*llm.Usage, error) {
			return e.call(p, ctx, t, e, req.Input[lo:hi], dims, out.Vectors[lo:hi])
		})
	if err != nil {
		return nil, err
	}
	out.Usage = usage
	return out, nil
}

// invokeEmbedding makes one InvokeModel call with an embedding body and returns the answer's
// body and the input tokens Bedrock counted, from its X-Amzn-Bedrock-Input-Token-Count header
// (Cohere's answers carry no usage of their own; every model's carry the header).
func (p *Provider) invokeEmbedding(ctx context.Context, model string, body []byte) ([]byte, *int, error) {
	out, err := p.client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(model),
		Body:        body,
		ContentType: aws.String(jsonType),
		Accept:      aws.String(jsonType),
	})
	if err != nil {
		return nil, nil, classify(ctx, err)
	}
	var tokens *int
	if resp, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response); ok {
		if n, err := strconv.Atoi(resp.Header.Get("X-Amzn-Bedrock-Input-Token-Count")); err == nil {
			tokens = &n
		}
	}
	return out.Body, tokens, nil
}

// unreadable is an embeddings answer the gateway cannot read.
func unreadable(err error) error {
	return &providers.Error{Class: providers.Unavailable, Provider: displayName, Err: err, Message: "unreadable embeddings answer: " + err.Error()}
}

func dimsList(d []int) string {
	s := make([]string, len(d))
	for i, n := range d {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// cohereTasks are Cohere's input types for the gateway's tasks. Cohere has none for
// semantic similarity.
var cohereTasks = map[string]string{
	config.TaskDocument:       "search_document",
	config.TaskQuery:          "search_query",
	config.TaskClassification: "classification",
	config.TaskClustering:     "clustering",
}

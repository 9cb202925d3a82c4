package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Cohere Embed takes up to 96 texts per InvokeModel call ({"texts": [...], "input_type": ...}),
// so a request of more is several calls, four at a time. The input type comes from the
// gateway model's task (document: search_document, query: search_query, classification,
// clustering; Cohere has none for similarity). truncate is NONE, so a text over the model's
// token limit is Bedrock's 400 rather than silently cut, as on every other route. v3 (English
// and multilingual) returns 1,024 dimensions and takes texts of at most 2,048 characters;
// v4 returns 1,536, or 1,024, 512 or 256 when asked (output_dimension), and is asked for float
// embeddings by name (embedding_types), its texts bounded by its 128k-token context. Cohere's
// answers carry no token counts: the input tokens are Bedrock's, from the answer's
// X-Amzn-Bedrock-Input-Token-Count header.
var (
	cohereV3 = embedder{name: "Cohere Embed v3", dims: []int{1024},
		batch: 96, parallel: 4, maxChars: 2048, tasks: cohereTasks, call: (*Provider).cohereCall}
	cohereV4 = embedder{name: "Cohere Embed v4", dims: []int{1536, 1024, 512, 256},
		batch: 96, parallel: 4, tasks: cohereTasks, call: (*Provider).cohereCall}
)

// cohereBody is the InvokeModel body of one batch of texts.
func cohereBody(e *embedder, texts []string, task string, dims int) []byte {
	n := 96
	for _, s := range texts {
		n += len(s) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, `{"texts":[`...)
	for i, s := range texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, s)
	}
	b = append(b, `],"input_type":`...)
	b = jsonx.AppendString(b, cohereTasks[task])
	if len(e.dims) > 1 { // v4
		b = append(b, `,"embedding_types":["float"],"output_dimension":`...)
		b = strconv.AppendInt(b, int64(dims), 10)
	}
	return append(b, `,"truncate":"NONE"}`...)
}

// cohereAnswer is Cohere's answer: embeddings is an array of vectors ("embeddings_floats"),
// or, when embedding types were named, an object of such arrays by type
// ("embeddings_by_type").
type cohereAnswer struct {
	Embeddings json.RawMessage `json:"embeddings"`
}

func (p *Provider) cohereCall(ctx context.Context, t providers.Target, e *embedder, texts []string, dims int, vectors [][]float32) (*llm.Usage, error) {
	body, tokens, err := p.invokeEmbedding(ctx, t.Model, cohereBody(e, texts, t.Task, dims))
	if err != nil {
		return nil, err
	}
	var a cohereAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, unreadable(err)
	}
	list := a.Embeddings
	if jsonx.KindOf(list) == jsonx.Object {
		var byType struct {
			Float json.RawMessage `json:"float"`
		}
		if err := json.Unmarshal(list, &byType); err != nil {
			return nil, unreadable(err)
		}
		list = byType.Float
	}
	if jsonx.KindOf(list) != jsonx.Array {
		return nil, unreadable(errors.New("the answer has no float embeddings"))
	}
	n := 0
	err = jsonx.Elements(list, func(i int, v []byte) error {
		if i >= len(vectors) {
			return fmt.Errorf("more than %d embeddings for %d texts", len(vectors), len(vectors))
		}
		vec, err := providers.ParseVector(v)
		vectors[i] = vec
		n++
		return err
	})
	if err == nil && n != len(vectors) {
		err = fmt.Errorf("%d embeddings for %d texts", n, len(vectors))
	}
	if err != nil {
		return nil, unreadable(err)
	}
	return &llm.Usage{InputTokens: tokens}, nil
}

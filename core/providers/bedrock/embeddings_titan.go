package bedrock

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Amazon Titan Text Embeddings embed one text per InvokeModel call ({"inputText": ...}), so a
// request of n texts is n calls, eight at a time. v2 returns 1,024 dimensions, or 512 or 256
// when asked, normalized (the gateway asks for normalize: true, Bedrock's default, as every
// other backend's vectors are unit length); v1 returns 1,536 and takes nothing but the text.
// Each text is at most 50,000 characters (and 8,192 tokens, which Bedrock enforces). Titan has
// no task types: its vectors are the same for any task.
var (
	titanV2 = embedder{name: "Amazon Titan Text Embeddings v2", dims: []int{1024, 512, 256},
		batch: 1, parallel: 8, maxChars: 50000, call: (*Provider).titanCall}
	titanV1 = embedder{name: "Amazon Titan Text Embeddings v1", dims: []int{1536},
		batch: 1, parallel: 8, maxChars: 50000, call: (*Provider).titanCall}
)

// titanBody is the InvokeModel body of one text.
func titanBody(e *embedder, text string, dims int) []byte {
	b := make([]byte, 0, len(text)+64)
	b = append(b, `{"inputText":`...)
	b = jsonx.AppendString(b, text)
	if len(e.dims) > 1 { // v2: v1 takes the text alone
		b = append(b, `,"dimensions":`...)
		b = strconv.AppendInt(b, int64(dims), 10)
		b = append(b, `,"normalize":true`...)
	}
	return append(b, '}')
}

// titanAnswer is Titan's answer: the vector (v2 repeats it in embeddingsByType) and the
// text's token count.
type titanAnswer struct {
	Embedding           json.RawMessage `json:"embedding"`
	InputTextTokenCount *int            `json:"inputTextTokenCount"`
}

func (p *Provider) titanCall(ctx context.Context, t providers.Target, e *embedder, texts []string, dims int, vectors [][]float32) (*llm.Usage, error) {
	body, header, err := p.invokeEmbedding(ctx, t.Model, titanBody(e, texts[0], dims))
	if err != nil {
		return nil, err
	}
	var a titanAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, unreadable(err)
	}
	if vectors[0], err = providers.ParseVector(a.Embedding); err != nil {
		return nil, unreadable(err)
	}
	tokens := a.InputTextTokenCount
	if tokens == nil {
		tokens = header
	}
	return &llm.Usage{InputTokens: tokens}, nil
}

package openaicompat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// OpenAI's embedding models, by name: their own dimensions, and whether the dimensions
// parameter shortens them (text-embedding-3 and later; ada-002 refuses it). OpenRouter names
// them with an "openai/" prefix. A model not listed (any other server's) is taken at the
// gateway model's word: its configured dimensions are its own, and a client's dimensions is
// passed on for the server to honour or refuse, the answer's length checked either way.
var openAIEmbeddingModels = map[string]struct {
	dims    int
	shorten bool
}{
	"text-embedding-3-small": {1536, true},
	"text-embedding-3-large": {3072, true},
	"text-embedding-ada-002": {1536, false},
}

// knownEmbedding looks a route's model up in openAIEmbeddingModels, on the kinds that serve
// OpenAI's models by those names.
func (p *Provider) knownEmbedding(model string) (dims int, shorten, ok bool) {
	switch p.kind {
	case "openai":
	case "openrouter":
		var cut bool
		if model, cut = strings.CutPrefix(model, "openai/"); !cut {
			return 0, false, false
		}
	default:
		return 0, false, false
	}
	m, ok := openAIEmbeddingModels[model]
	return m.dims, m.shorten, ok
}

// tokenInput reports whether the kind's /embeddings reads token ids (OpenAI's, vLLM's and
// SGLang's do, of the model's own tokenizer). Ollama, OpenRouter (whose providers tokenize
// differently) and generic servers take texts only.
func (p *Provider) tokenInput() bool {
	return p.kind == "openai" || p.kind == "vllm" || p.kind == "sglang"
}

// CheckEmbedRoute refuses an OpenAI model whose dimensions cannot be the gateway model's.
func (p *Provider) CheckEmbedRoute(t providers.Target) error {
	dims, shorten, ok := p.knownEmbedding(t.Model)
	switch {
	case !ok || t.Dimensions == dims:
		return nil
	case !shorten:
		return fmt.Errorf("%s returns %d dimensions and cannot shorten them; the model's dimensions are %d", t.Model, dims, t.Dimensions)
	case t.Dimensions > dims:
		return fmt.Errorf("%s returns at most %d dimensions; the model's dimensions are %d", t.Model, dims, t.Dimensions)
	}
	return nil
}

// CheckEmbed refuses token ids on kinds that take texts only, and dimensions an OpenAI model
// cannot shorten to.
func (p *Provider) CheckEmbed(req *llm.EmbedRequest, t providers.Target) *llm.Error {
	if req.Tokens != nil && !p.tokenInput() {
		return llm.Unsupported("input", p.name+" embeds texts only: send input as strings, not token ids")
	}
	if dims, shorten, ok := p.knownEmbedding(t.Model); ok && !shorten && providers.Dimensions(req, t) != dims {
		return llm.Unsupported("dimensions", t.Model+" cannot shorten its "+strconv.Itoa(dims)+" dimensions: leave dimensions out")
	}
	return nil
}

// Embed makes one call with every input: OpenAI takes the gateway's maximum of 2,048, and
// the other servers document no lower limit (one that has refuses the request with a 400,
// which is the client's to see).
func (p *Provider) Embed(ctx context.Context, req *llm.EmbedRequest, t providers.Target) (*llm.Embeddings, error) {
	dims := providers.Dimensions(req, t)
	resp, err := p.post(ctx, p.embeddingsURL, p.embeddingsBody(req, t), false)
	if err != nil {
		return nil, err
	}
	defer drain(resp.Body)
	limit := providers.EmbedAnswerLimit(req.Len(), dims)
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err == nil && int64(len(body)) > limit {
		err = errors.New("the answer is larger than " + strconv.FormatInt(limit, 10) + " bytes")
	}
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	out, err := parseEmbeddings(body, req.Len())
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	return out, nil
}

// embeddingsBody is the upstream request: the route's model and the inputs, always as an
// array (texts, or arrays of token ids), which every server takes. The user label stays in
// the gateway's logs. dimensions goes out where it changes the answer: for an OpenAI model
// when it differs from the model's own, for any other model when the client asked (the
// gateway model's dimensions are then the model's own). OpenAI is asked for base64, the
// float32s exactly and a quarter the size of decimals (what its own SDKs ask for); other
// servers for their default, floats, which all of them speak.
func (p *Provider) embeddingsBody(req *llm.EmbedRequest, t providers.Target) []byte {
	b := make([]byte, 0, 128+embeddingsInputSize(req))
	b = append(b, `{"model":`...)
	b = jsonx.AppendString(b, t.Model)
	b = append(b, `,"input":[`...)
	if req.Tokens != nil {
		for i, ids := range req.Tokens {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for j, id := range ids {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(id), 10)
			}
			b = append(b, ']')
		}
	} else {
		for i, s := range req.Input {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, s)
		}
	}
	b = append(b, ']')
	if p.kind == "openai" {
		b = append(b, `,"encoding_format":"base64"`...)
	}
	dims := providers.Dimensions(req, t)
	if own, _, known := p.knownEmbedding(t.Model); (known && dims != own) || (!known && req.Dimensions != nil) {
		b = append(b, `,"dimensions":`...)
		b = strconv.AppendInt(b, int64(dims), 10)
	}
	return append(b, '}')
}

func embeddingsInputSize(req *llm.EmbedRequest) int {
	n := 0
	for _, s := range req.Input {
		n += len(s) + 3
	}
	for _, ids := range req.Tokens {
		n += 7*len(ids) + 3
	}
	return n
}

// embeddingsAnswer is the part of OpenAI's answer the gateway reads. Each embedding is kept
// raw, a JSON array of numbers or a base64 string, and read by providers.ParseVector or
// DecodeBase64Vector, which cost far less than encoding/json's reflection on thousands of
// numbers.
type embeddingsAnswer struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens *int `json:"prompt_tokens"`
		TotalTokens  *int `json:"total_tokens"`
	} `json:"usage"`
}

// parseEmbeddings reads an answer for n inputs into their order. Items go where their index
// says (OpenAI's are in order; the index is what the API promises); an answer without
// indexes is taken in order. A missing, repeated or out-of-range index is an unreadable
// answer.
func parseEmbeddings(body []byte, n int) (*llm.Embeddings, error) {
	var a embeddingsAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, err
	}
	if len(a.Data) != n {
		return nil, fmt.Errorf("%d embeddings for %d inputs", len(a.Data), n)
	}
	out := &llm.Embeddings{Vectors: make([][]float32, n)}
	for i, d := range a.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n || out.Vectors[at] != nil {
			return nil, fmt.Errorf("embedding %d has index %d", i, at)
		}
		v, err := vector(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embedding %d: %w", i, err)
		}
		out.Vectors[at] = v
	}
	if u := a.Usage; u != nil {
		out.Usage = llm.Usage{InputTokens: u.PromptTokens, TotalTokens: u.TotalTokens}
	}
	return out, nil
}

// vector reads one embedding in either of OpenAI's encodings.
func vector(raw json.RawMessage) ([]float32, error) {
	if jsonx.KindOf(raw) == jsonx.String {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return providers.DecodeBase64Vector(s)
	}
	return providers.ParseVector(raw)
}

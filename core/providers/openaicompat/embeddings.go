package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	defer providers.Drain(resp.Body)
	limit := providers.EmbedAnswerLimit(req.Len(), dims)
	body, err := providers.ReadBounded(resp.Body, resp.ContentLength, limit)
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	out, err := parseEmbeddings(body, req.Len(), dims, req.Base64)
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Status: resp.StatusCode, Provider: p.name, Message: "unreadable response: " + err.Error(), Err: err}
	}
	return out, nil
}

// embeddingsBody is the upstream request: the route's model and the inputs, always as an
// array (texts, or arrays of token ids), which every server takes. The user label stays in
// the gateway's logs. dimensions goes out where it changes the answer: for an OpenAI model
// when it differs from the model's own, for any other model when the client asked (the
// gateway model's dimensions are then the model's own). OpenAI and vLLM are asked for
// base64, the float32s exactly in a third of the bytes of decimals and read for a fraction of
// their cost (what OpenAI's own SDKs ask for); other servers for their default, floats, which
// all of them speak.
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
	if p.kind == "openai" || p.kind == "vllm" {
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

// parseEmbeddings reads an answer for n inputs of dims dimensions into their order:
// data[].embedding, a JSON array of numbers or a base64 string, under data[].index, and
// usage's prompt_tokens and total_tokens. Like parseCompletion it is one validating pass
// (wireparse.go's scanner), each number read where it lies: encoding/json would scan the
// answer twice and reflect on thousands of numbers, most of an embeddings request's cost.
// Items go where their index says (OpenAI's are in order; the index is what the API
// promises); an answer without indexes is taken in order. A missing, repeated or
// out-of-range index is an unreadable answer.
//
// The vectors share one allocation of n*dims float32s, each item's in its own part of it (a
// longer one grows out of it, to be refused for its length). When keep64 (the client asked
// for base64) a base64 vector that is already what the gateway would write for it
// (providers.CleanBase64Vector) is kept as the upstream's bytes, not decoded.
func parseEmbeddings(body []byte, n, dims int, keep64 bool) (*llm.Embeddings, error) {
	out := &llm.Embeddings{Vectors: make([][]float32, n)}
	var backing []float32
	slot := func(i int) []float32 {
		if backing == nil {
			backing = make([]float32, n*dims)
		}
		return backing[i*dims : i*dims : (i+1)*dims]
	}
	var usage *wireUsage
	count := 0
	p := scanner{b: body}
	p.ws()
	err := p.object(func(key []byte) error {
		switch string(key) {
		case "data":
			return p.array(func(i int) error {
				count++
				if i >= n {
					return p.skip() // counted, refused below
				}
				at := i
				var vec []float32
				var raw64 []byte
				err := p.object(func(key []byte) error {
					switch string(key) {
					case "index":
						return p.int(&at)
					case "embedding":
						var err error
						vec, raw64, err = p.embedding(slot, i, keep64)
						return err
					}
					return p.skip()
				})
				if err != nil {
					return err
				}
				if at < 0 || at >= n || out.Vectors[at] != nil || out.Base64 != nil && out.Base64[at] != nil || vec == nil && raw64 == nil {
					return fmt.Errorf("embedding %d has index %d, or no vector", i, at)
				}
				if raw64 != nil {
					if out.Base64 == nil {
						out.Base64 = make([][]byte, n)
					}
					out.Base64[at] = raw64
					return nil
				}
				out.Vectors[at] = vec
				return nil
			})
		case "usage":
			return p.usage(&usage)
		}
		return p.skip()
	})
	if err == nil {
		err = p.end()
	}
	if err != nil {
		return nil, err
	}
	if count != n {
		return nil, fmt.Errorf("%d embeddings for %d inputs", count, n)
	}
	if usage != nil {
		out.Usage = llm.Usage{InputTokens: usage.PromptTokens, TotalTokens: usage.TotalTokens}
	}
	return out, nil
}

// embedding reads item i's vector in either of OpenAI's encodings, an array of numbers or
// the base64 of its float32s, into slot(i); or, when keep64 and the base64 is clean, returns
// the base64 itself.
func (p *scanner) embedding(slot func(int) []float32, i int, keep64 bool) ([]float32, []byte, error) {
	if p.peek() == '"' {
		// Most of a base64 answer is these strings: find the closing quote at once when no
		// escape comes before it. DecodeBase64Vector then refuses every byte that is not of
		// its alphabet, control characters included (CR and LF too, which Go's decoder
		// would skip); the fast paths take only what it reads plainly.
		rest := p.b[p.i+1:]
		if end := bytes.IndexByte(rest, '"'); end >= 0 && bytes.IndexByte(rest[:end], '\\') < 0 {
			p.i += end + 2
			s := rest[:end]
			if keep64 {
				if _, ok := providers.CleanBase64Vector(s); ok {
					return nil, s, nil
				}
			} else if vec, ok := providers.AppendBase64Vector(slot(i), s); ok {
				return vec, nil, nil
			}
			vec, err := providers.DecodeBase64Vector(s)
			return vec, nil, err
		}
		raw, err := p.rawString()
		if err != nil {
			return nil, nil, err
		}
		if bytes.IndexByte(raw, '\\') >= 0 { // an escaped "/", say
			s, err := unquote(raw)
			if err != nil {
				return nil, nil, err
			}
			raw = []byte(s)
		}
		vec, err := providers.DecodeBase64Vector(raw)
		return vec, nil, err
	}
	vec := slot(i)
	err := p.array(func(int) error {
		// ScanFloat32 is strconv.ParseFloat's answer on the run of number bytes, found and
		// read in one pass: it refuses what is no number (a string, a literal, "1e"), and a
		// float32's overflow.
		start := p.i
		f, n, err := providers.ScanFloat32(p.b[p.i:])
		p.i += n
		if err != nil {
			return errors.New("an embedding holds " + strconv.Quote(string(p.b[start:min(p.i+1, len(p.b))])) + ", not a float32")
		}
		vec = append(vec, f)
		return nil
	})
	return vec, nil, err
}

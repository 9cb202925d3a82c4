package mock

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// embedModel is the route model of the mock's embeddings.
const embedModel = "embed"

// CheckEmbedRoute accepts embed, and error:NNN for failover demos; any dimensions.
func (p *Provider) CheckEmbedRoute(t providers.Target) error {
	if t.Model == embedModel {
		return nil
	}
	if name, _, err := parseBehaviour(t.Model); err == nil && name == "error" {
		return nil
	}
	return errors.New("mock embedding route model " + strconv.Quote(t.Model) + ": use embed, or error:NNN to fail")
}

// CheckEmbed takes every request the door accepts: the mock stands in for any backend, token
// ids included.
func (p *Provider) CheckEmbed(*llm.EmbedRequest, providers.Target) *llm.Error { return nil }

// Embed answers each input with Embedding of it, and its words (or token ids) as the input
// tokens.
func (p *Provider) Embed(_ context.Context, req *llm.EmbedRequest, t providers.Target) (*llm.Embeddings, error) {
	if name, n, err := parseBehaviour(t.Model); err == nil && name == "error" {
		return nil, upstreamError(n)
	}
	dims := providers.Dimensions(req, t)
	out := &llm.Embeddings{Vectors: make([][]float32, req.Len())}
	tokens := 0
	for i := range out.Vectors {
		key := ""
		if req.Tokens != nil {
			key = tokenKey(req.Tokens[i])
			tokens += len(req.Tokens[i])
		} else {
			key = req.Input[i]
			tokens += max(len(strings.Fields(key)), 1)
		}
		out.Vectors[i] = Embedding(key, dims)
	}
	out.Usage = llm.Usage{InputTokens: llm.Int(tokens), TotalTokens: llm.Int(tokens)}
	return out, nil
}

// Embedding is the mock's vector of a text: dims numbers drawn from a generator seeded with
// the text's hash, scaled to unit length. A shorter vector of the same text starts like the
// longer one (before scaling), as the shortenable models' do.
func Embedding(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x656d626564))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := r.Float64()*2 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm == 0 {
		return v
	}
	scale := 1 / math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) * scale)
	}
	return v
}

// tokenKey is the text a token array is embedded as: its ids, space-separated.
func tokenKey(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

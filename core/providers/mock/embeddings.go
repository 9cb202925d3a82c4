package mock

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/internal/fakevec"
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
	if b, err := parseBehaviour(t.Model); err == nil && b.name == "error" {
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
	if b, err := parseBehaviour(t.Model); err == nil && b.name == "error" {
		return nil, upstreamError(b.n)
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

// Embedding is the mock's vector of a text (fakevec.Unit): dims numbers scaled to unit
// length, the same for the same text every time; a shorter vector of a text starts like the
// longer one before scaling, as the shortenable models' do.
func Embedding(text string, dims int) []float32 { return fakevec.Unit(text, dims) }

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

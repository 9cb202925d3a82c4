package gateway

import (
	"fmt"
	"math"
	"net/http"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/record"
)

// serveEmbeddings answers POST /v1/embeddings: OpenAI's Embeddings, on the models of kind
// embedding.
//
// It is not a door: a door decodes into an llm.Request and answers llm.Answers and streams,
// while an embeddings request is a batch of inputs whose answer is one vector each, with no
// stream, no commit point and no output to bound. Everything else is the request's own code:
// the key, the body's limits and the in-flight slot, planning with the model's policy,
// residency and route state (planBy, asking each route's Embedder.CheckEmbed), the failover
// loop, the attempt and request lines with usage and cost, and the key's rate limits and
// budgets, the reservation being the inputs' estimate alone: an embedding has no output.
func (q *request) serveEmbeddings(body []byte) {
	g, rc := q.g, &q.rc
	req, oe := openai.DecodeEmbeddings(body)
	if oe != nil {
		q.refuse(oe)
		return
	}
	rc.model = req.Model
	rc.labels = labels(&llm.Request{User: req.User}, rc) // user is the request's only label
	m, oe := g.lookup(req.Model, rc)
	if oe == nil {
		oe = m.servesEmbeddings(&req.EmbedRequest)
	}
	if oe != nil {
		q.refuse(oe)
		return
	}
	q.m = m
	if !q.admitLimits(estimateEmbedTokens(&req.EmbedRequest), 0) {
		return
	}
	defer g.settle(rc)
	if !q.guardEmbeddings(&req.EmbedRequest) {
		return
	}
	routes, oe := g.planBy(m, rc, "", false, func(rt *route) *llm.Error { return rt.embedder.CheckEmbed(&req.EmbedRequest, rt.target) })
	if oe != nil {
		q.refuse(oe)
		return
	}
	q.failover(routes, false, func(a *attempt) *providers.Error {
		rt := a.rt
		out, err := rt.embedder.Embed(a.onHeaders(), &req.EmbedRequest, rt.target)
		a.took()
		if err == nil {
			err = checkVectors(out, &req.EmbedRequest, providers.Dimensions(&req.EmbedRequest, rt.target), rt.provider.Name())
		}
		if err != nil {
			return a.failure(err)
		}
		a.embedded, a.usage = true, &out.Usage
		a.finish(record.OutcomeOK, nil)
		g.setRouteHeaders(&q.w, rc, rt)
		writeJSON(&q.w, http.StatusOK, openai.AppendEmbeddings(make([]byte, 0, embeddingsSize(out, req.Base64)), rc.model, req.Base64, out))
		q.done(http.StatusOK, rt.id, nil)
		return nil
	})
}

// embeddingsSize estimates the answer's length, so it is built in one allocation: a float32
// takes at most 24 bytes and a comma as its float64 decimal, 4 bytes and a third as base64.
func embeddingsSize(e *llm.Embeddings, base64 bool) int {
	per := 25
	if base64 {
		per = 6
	}
	n := 256
	for i, v := range e.Vectors {
		n += 64 + per*len(v)
		if i < len(e.Base64) {
			n += len(e.Base64[i])
		}
	}
	return n
}

// servesEmbeddings refuses a chat model, and dimensions beyond the model's: its routes were
// checked against its dimensions, and a vector index holds vectors of one length.
func (m *model) servesEmbeddings(req *llm.EmbedRequest) *llm.Error {
	if !m.cfg.Embedding() {
		return &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Param: "model", Code: "unsupported_model",
			Message: "The model `" + m.cfg.Name + "` is a chat model and serves no embeddings: use a model of kind embedding, or POST /v1/chat/completions."}
	}
	if d := req.Dimensions; d != nil && *d > m.cfg.Dimensions {
		return llm.BadRequest("dimensions", fmt.Sprintf("dimensions is %d, above the %d dimensions of %s", *d, m.cfg.Dimensions, m.cfg.Name))
	}
	return nil
}

// servesChat refuses an embedding model on the chat, completions and Messages doors.
func (m *model) servesChat() *llm.Error {
	if !m.cfg.Embedding() {
		return nil
	}
	return &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Param: "model", Code: "unsupported_model",
		Message: "The model `" + m.cfg.Name + "` is an embedding model: send it to POST /v1/embeddings."}
}

// bindKind readies a route for its model's kind when the gateway is built, and reports why it
// can never serve it. A chat route is asked by its provider's RouteChecker, when it has one.
// An embedding route gets the model's dimensions and task, must be on a provider that embeds,
// and is asked by it whether the upstream model can return vectors that long: that is how a
// model's routes are held to agree on dimensions before the gateway serves anything.
func (rt *route) bindKind(mc *config.Model) error {
	if !mc.Embedding() {
		if c, ok := rt.provider.(providers.RouteChecker); ok {
			return c.CheckRoute(rt.target)
		}
		return nil
	}
	rt.target.Dimensions, rt.target.Task = mc.Dimensions, mc.Task
	e, ok := rt.provider.(providers.Embedder)
	if !ok {
		return fmt.Errorf("%s (connection %s, kind %s) serves no embeddings", rt.provider.Name(), rt.conn, rt.kind)
	}
	rt.embedder = e
	return e.CheckEmbedRoute(rt.target)
}

// checkVectors holds an upstream to what was asked: one vector per input, each of the length
// asked, every number finite (a vector kept as base64 was checked finite as it was read). Anything else is an upstream failure, and another route may do
// better; a vector of the wrong length would otherwise poison the client's index.
func checkVectors(e *llm.Embeddings, req *llm.EmbedRequest, dims int, provider string) error {
	bad := func(format string, args ...any) error {
		return &providers.Error{Class: providers.Unavailable, Provider: provider, Message: fmt.Sprintf(format, args...)}
	}
	if len(e.Vectors) != req.Len() {
		return bad("the upstream returned %d embeddings for %d inputs", len(e.Vectors), req.Len())
	}
	for i, v := range e.Vectors {
		if req.Base64 && v == nil && i < len(e.Base64) && e.Base64[i] != nil {
			// checked finite by the provider (providers.CleanBase64Vector); counted here
			if n := providers.Base64VectorLen(e.Base64[i]); n != dims {
				return bad("the upstream returned embedding %d with %d dimensions, not %d", i, n, dims)
			}
			continue
		}
		if len(v) != dims {
			return bad("the upstream returned embedding %d with %d dimensions, not %d", i, len(v), dims)
		}
		for _, f := range v {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return bad("the upstream returned embedding %d with a number that is not finite", i)
			}
		}
	}
	return nil
}

// embeddingCost is USD for an embedding's input tokens at the input price: an embedding has
// no output.
func embeddingCost(p *config.Price, u *llm.Usage) (float64, bool) {
	if p == nil || u.InputTokens == nil {
		return 0, false
	}
	return float64(*u.InputTokens) * p.InputPerMTok / 1e6, true
}

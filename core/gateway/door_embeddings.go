package gateway

import (
	"fmt"
	"math"
	"net/http"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// endpointEmbeddings names POST /v1/embeddings in logs and attempt records.
const endpointEmbeddings = "embeddings"

// serveEmbeddings answers POST /v1/embeddings: OpenAI's Embeddings, on the models of kind
// embedding.
//
// It is a flow of its own rather than a door: a door decodes into an llm.Request and answers
// llm.Answers and streams, while an embeddings request is a batch of inputs whose answer is
// one vector each, with no stream, no commit point and no output to bound. Everything else is
// the doors' own code: the key, the body's limits and the in-flight slot (admit, receive),
// planning with the model's policy, residency and route state (planBy, asking each route's
// Embedder.CheckEmbed), one attempt per route with its clocks and record (begin), failover on
// what fails over (failedBeforeOutput), the attempt and request lines with usage and cost, and
// the key's rate limits and budgets (admitLimits, charged in setUsage, settle), the
// reservation being the inputs' estimate alone: an embedding has no output.
func (g *Gateway) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	d := &chatDoor{} // OpenAI's error shape
	rc, ok := g.admit(w, r, d)
	if !ok {
		return
	}
	rc.endpoint = endpointEmbeddings
	tw := &trackingWriter{ResponseWriter: w}
	defer g.recoverPanic(tw, d, rc)
	body, release, ok := g.receive(tw, r, d, rc)
	if !ok {
		return
	}
	defer release()
	req, oe := openai.DecodeEmbeddings(body)
	if oe != nil {
		g.refuse(tw, d, rc, oe)
		return
	}
	rc.model = req.Model
	rc.labels = labels(&llm.Request{User: req.User}, rc) // user is the request's only label
	m, oe := g.lookup(req.Model, rc)
	if oe == nil {
		oe = m.servesEmbeddings(&req.EmbedRequest)
	}
	if oe != nil {
		g.refuse(tw, d, rc, oe)
		return
	}
	if !g.admitLimits(tw, r, d, rc, m, estimateEmbedTokens(&req.EmbedRequest), 0) {
		return
	}
	defer g.settle(rc)
	routes, oe := g.planBy(m, rc, "", false, func(rt *route) *llm.Error { return rt.embedder.CheckEmbed(&req.EmbedRequest, rt.target) })
	if oe != nil {
		g.refuse(tw, d, rc, oe)
		return
	}
	for i, rt := range routes {
		a := g.begin(r, rc, m, rt, i)
		out, err := rt.embedder.Embed(a.onHeaders(), &req.EmbedRequest, rt.target)
		took := a.arrived()
		rc.upstream += took
		a.rec.Latency = took
		if err == nil {
			err = checkVectors(out, &req.EmbedRequest, providers.Dimensions(&req.EmbedRequest, rt.target), rt.provider.Name())
		}
		if err == nil {
			a.end()
			a.rec.Outcome, a.rec.embedded = OutcomeOK, true
			g.setUsage(a.rec, &out.Usage, m, rc)
			g.logAttempt(a.rec)
			g.setRouteHeaders(tw, rc, rt)
			writeJSON(tw, http.StatusOK, openai.AppendEmbeddings(make([]byte, 0, embeddingsSize(out, req.Base64)), rc.model, req.Base64, out))
			g.logRequest(rc, http.StatusOK, rt.id, nil)
			return
		}
		pe := a.failure(err)
		a.end()
		if !g.failedBeforeOutput(tw, r, d, rc, rt, a.rec, pe, i+1 < len(routes)) {
			return
		}
	}
}

// embeddingsSize estimates the answer's length, so it is built in one allocation: a float32
// takes at most 24 bytes and a comma as its float64 decimal, 4 bytes and a third as base64.
func embeddingsSize(e *llm.Embeddings, base64 bool) int {
	per := 25
	if base64 {
		per = 6
	}
	n := 256
	for _, v := range e.Vectors {
		n += 64 + per*len(v)
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
// asked, every number finite. Anything else is an upstream failure, and another route may do
// better; a vector of the wrong length would otherwise poison the client's index.
func checkVectors(e *llm.Embeddings, req *llm.EmbedRequest, dims int, provider string) error {
	bad := func(format string, args ...any) error {
		return &providers.Error{Class: providers.Unavailable, Provider: provider, Message: fmt.Sprintf(format, args...)}
	}
	if len(e.Vectors) != req.Len() {
		return bad("the upstream returned %d embeddings for %d inputs", len(e.Vectors), req.Len())
	}
	for i, v := range e.Vectors {
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

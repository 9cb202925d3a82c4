package gateway

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/providers"
)

// HeaderTokenCount says how /v1/messages/count_tokens counted: "exact" when a route's
// backend counted (Anthropic's count_tokens, Bedrock's CountTokens, Vertex AI's
// count-tokens, the mock), "estimate" when none could and the gateway estimated.
const HeaderTokenCount = "X-Fngate-Token-Count"

// serveCountTokens answers POST /v1/messages/count_tokens: the model's routes are asked in
// plan order, failing over like any attempt, and the first that can count exactly answers.
// When none can, the answer is the gateway's estimate (see estimateTokens), marked so in
// HeaderTokenCount: Claude Code uses the count for its context display, where an estimate
// serves, but a client must be able to tell.
func (g *Gateway) serveCountTokens(w http.ResponseWriter, r *http.Request) {
	d := &messagesDoor{}
	rc, ok := g.admit(w, r, d)
	if !ok {
		return
	}
	rc.endpoint = "count_tokens"
	body, release, ok := g.receive(w, r, d, rc)
	if !ok {
		return
	}
	defer release()
	req, oe := messages.DecodeCountTokens(body, r.Header, g.limits)
	if oe != nil {
		rc.model = modelAskedFor(body)
		g.refuse(w, d, rc, oe)
		return
	}
	rc.model = req.Model
	rc.labels = labels(req, rc)
	rc.traceDecoded(req)
	m, oe := g.lookup(req.Model, rc)
	if oe == nil {
		oe = m.servesChat()
	}
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return
	}
	routes, oe := g.plan(m, req, rc)
	if oe != nil {
		g.refuse(w, d, rc, oe)
		return
	}
	for i, rt := range routes {
		counter, ok := rt.provider.(providers.TokenCounter)
		if !ok {
			continue
		}
		a := g.begin(r, rc, m, rt, i)
		n, err := counter.CountTokens(a.ctx, req, rt.target)
		if errors.Is(err, providers.ErrCannotCount) {
			a.end()
			rc.attempts--
			continue
		}
		a.rec.Latency = a.arrived()
		rc.upstream += a.rec.Latency
		if err == nil {
			a.end()
			a.rec.Outcome = OutcomeOK
			g.logAttempt(a.rec)
			g.writeCount(w, rc, rt, n, "exact")
			return
		}
		pe := a.failure(err)
		a.end()
		if !g.failedBeforeOutput(w, r, d, rc, rt, a.rec, pe, true) {
			return
		}
	}
	g.writeCount(w, rc, routes[0], estimateTokens(req), "estimate")
}

func (g *Gateway) writeCount(w http.ResponseWriter, rc *requestCtx, rt *route, n int, how string) {
	w.Header().Set(HeaderTokenCount, how)
	g.setRouteHeaders(w, rc, rt)
	b := append([]byte(`{"input_tokens":`), strconv.Itoa(n)...)
	writeJSON(w, http.StatusOK, append(b, "}\n"...))
	g.logRequest(rc, http.StatusOK, rt.id, nil)
}

// estimateTokens estimates a request's input tokens as a quarter of its characters (text,
// tool inputs and results, tool definitions, a legacy completion's prompt) plus a few tokens
// per message, the rule of thumb
// for English text and code with the tokenizers in use; images count as 1,600 tokens, about
// what a full-size image costs on Claude.
func estimateTokens(req *llm.Request) int {
	chars, n := len(req.Prompt), 0
	var parts func(ps []llm.Part)
	parts = func(ps []llm.Part) {
		for i := range ps {
			p := &ps[i]
			chars += len(p.Text) + len(p.Input) + len(p.Name) + len(p.Raw)
			if p.Kind == llm.PartImage {
				n += 1600
			}
			parts(p.Content)
		}
	}
	parts(req.System)
	for i := range req.Messages {
		n += 4
		parts(req.Messages[i].Parts)
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		chars += len(t.Name) + len(t.Description) + len(t.Parameters) + len(t.Raw)
	}
	return n + (chars+3)/4
}

// estimateEmbedTokens estimates an embeddings request's input tokens the same way: a quarter
// of each text's characters, and token ids as they are, counted exactly.
func estimateEmbedTokens(req *llm.EmbedRequest) int {
	n := 0
	for _, s := range req.Input {
		n += (len(s) + 3) / 4
	}
	for _, ids := range req.Tokens {
		n += len(ids)
	}
	return n
}

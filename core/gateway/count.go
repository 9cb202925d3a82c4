package gateway

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/record"
)

// HeaderTokenCount says how /v1/messages/count_tokens counted: "exact" when a route's
// backend counted (Anthropic's count_tokens, Bedrock's CountTokens, Vertex AI's
// count-tokens, the mock), "estimate" when none could and the gateway estimated.
const HeaderTokenCount = "X-Fngate-Token-Count"

// countDoor is the wire of POST /v1/messages/count_tokens: the Messages door's error shape,
// its own name in the logs.
type countDoor struct{ messagesDoor }

func (*countDoor) endpoint() string { return record.EndpointCountTokens }

// serveCountTokens answers POST /v1/messages/count_tokens: the model's routes are asked in
// plan order, failing over like any attempt, and the first that can count exactly answers.
// When none can, the answer is the gateway's estimate (see estimateTokens), marked so in
// HeaderTokenCount: Claude Code uses the count for its context display, where an estimate
// serves, but a client must be able to tell.
func (q *request) serveCountTokens(body []byte) {
	g, rc := q.g, &q.rc
	req, oe := messages.DecodeCountTokens(body, q.r.Header, g.limits)
	if oe != nil {
		rc.model = modelAskedFor(body)
		q.refuse(oe)
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
		q.refuse(oe)
		return
	}
	q.m, q.req = m, req
	routes, oe := g.plan(m, req, rc)
	if oe != nil {
		q.refuse(oe)
		return
	}
	var counting []*route
	for _, rt := range routes {
		if _, ok := rt.provider.(providers.TokenCounter); ok {
			counting = append(counting, rt)
		}
	}
	answered := q.failover(counting, true, func(a *attempt) *providers.Error {
		n, err := a.rt.provider.(providers.TokenCounter).CountTokens(a.ctx, req, a.rt.target)
		if errors.Is(err, providers.ErrCannotCount) {
			return errSkip
		}
		a.took()
		if err != nil {
			return a.failure(err)
		}
		a.finish(record.OutcomeOK, nil)
		q.writeCount(a.rt, n, "exact")
		return nil
	})
	if !answered {
		q.writeCount(routes[0], estimateTokens(req), "estimate")
	}
}

func (q *request) writeCount(rt *route, n int, how string) {
	q.w.Header().Set(HeaderTokenCount, how)
	q.g.setRouteHeaders(&q.w, &q.rc, rt)
	b := append([]byte(`{"input_tokens":`), strconv.Itoa(n)...)
	writeJSON(&q.w, http.StatusOK, append(b, "}\n"...))
	q.done(http.StatusOK, rt.id, nil)
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

package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/responses"
)

// compactDoor is OpenAI's POST /v1/responses/compact. On a route that speaks the Responses
// API itself (the openai kind) the request passes through to the upstream's own
// /responses/compact and its response.compaction object comes back with the gateway's id
// and model. Every other route is asked for a summary (responses.CompactionPrompt), which the
// gateway seals into the compaction item with the first of responses.compaction_keys, bound
// to the request's key (core/compaction). With no compaction keys, those routes refuse the
// request at planning, so a model with an openai route still compacts there.
//
// It is never streamed: the endpoint has no stream parameter.
type compactDoor struct {
	g   *Gateway
	req *responses.Request
	id  string
}

func (*compactDoor) endpoint() string { return record.EndpointCompact }

// uncacheable: a compaction's item is sealed for its request as it is made.
func (*compactDoor) uncacheable() string { return "compaction" }

// defaultMaximum: the compact request has no output maximum of its own. A summary is short by
// design, so it is bounded on every model, priced or not, by responses.CompactionMaxTokens or
// the model's ceiling where that is lower: a priced model compacts without a ceiling of its own.
func (*compactDoor) defaultMaximum(ceiling int, _ bool) (int, bool) {
	n := responses.CompactionMaxTokens
	if ceiling > 0 && ceiling < n {
		n = ceiling
	}
	return n, true
}

func (d *compactDoor) decode(r *http.Request, rc *requestCtx, body []byte, in decoding) (*llm.Request, *llm.Error) {
	rq, e := responses.DecodeCompact(body, in.limits)
	if e != nil {
		return nil, e
	}
	var history []json.RawMessage
	if id := rq.PreviousResponseID; id != "" {
		rd := &responsesDoor{g: d.g, ctx: r.Context()}
		if history, e = rd.history(id, rc); e != nil {
			return nil, e
		}
	}
	if e := rq.Unseal(d.g.compaction, owner(rc)); e != nil {
		return nil, e
	}
	if e := rq.Continue(history); e != nil {
		return nil, e
	}
	rq.Compaction()
	req := rq.LLM
	req.PassThrough = llm.WireResponses
	if d.g.compaction == nil {
		req.Responses.Only = append(req.Responses.Only, noCompactionKeys)
	}
	d.req, d.id = rq, responses.NewID("resp")
	return req, nil
}

// noCompactionKeys is how a route other than OpenAI's refuses a compaction when the gateway
// has no key to seal its summary with: never one of this instance's own, which the other
// instances could not open.
var noCompactionKeys = &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Code: "compaction_unavailable",
	Message: "this gateway compacts on routes other than OpenAI's only with compaction keys to seal the summary with, and none is configured (responses.compaction_keys)"}

func (*compactDoor) writeError(w http.ResponseWriter, _ *requestCtx, e *llm.Error) {
	openai.WriteError(w, e)
}

func (*compactDoor) visible(d *llm.Delta) bool { return d.Content() }

func (d *compactDoor) appendAnswer(b []byte, rc *requestCtx, a *llm.Answer) []byte {
	if a.RawWire == llm.WireResponses && len(a.Raw) > 0 {
		if patched := responses.PatchCompacted(a.Raw, d.id, d.req.LLM.Model); patched != nil {
			return append(b, patched...)
		}
	}
	// Planning kept every route but the native one away without keys (noCompactionKeys).
	summary, _ := a.Text()
	sealed := d.g.compaction.Seal(owner(rc), []byte(summary))
	return d.req.AppendCompacted(b, d.id, rc.created(), sealed, &a.Usage)
}

// encoder: the door never streams (its requests never ask to).
func (*compactDoor) encoder(*requestCtx) encoder { return nil }

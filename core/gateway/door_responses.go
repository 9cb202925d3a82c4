package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/responses"
	"github.com/fngate/fngate/core/responsestore"
)

// responsesDoor is OpenAI's Responses: POST /v1/responses. A backend that speaks the
// Responses API itself (the openai kind) gets the request as the client wrote it and its
// answers and events pass through (with the gateway's response id, model and store); every
// other backend's are encoded from the normalized deltas.
//
// With a response store, store: true (the default) keeps the request's input items and the
// response under the key that made it, previous_response_id continues from one, and an
// item_reference to an item the gateway made is resolved from the stored response holding
// it (resolve); without one, previous_response_id is refused, such a reference is refused
// naming it, and the response says store: false.
type responsesDoor struct {
	g   *Gateway
	ctx context.Context
	req *responses.Request
	obj responses.Object
	// socket is the WebSocket connection a response.create came on (socket.go); nil over
	// HTTP.
	socket *socket
	// warmUp: the response.create has generate: false (socket.go).
	warmUp bool
	// final is the response object the stream ended with, once it ended properly.
	final []byte
}

func (*responsesDoor) endpoint() string { return record.EndpointResponses }

// replaying: a hit's response is the gateway's own, times and all, even where the recorded
// object was OpenAI's.
func (d *responsesDoor) replaying() { d.obj.Replayed = true }

// uncacheable: a continued conversation's context lives in the response store, which the
// cache's key does not see; a warm-up answers nothing worth keeping.
func (d *responsesDoor) uncacheable() string {
	switch {
	case d.req != nil && d.req.PreviousResponseID != "":
		return "previous_response_id"
	case d.warmUp:
		return "generate: false"
	}
	return ""
}

// defaultMaximum: Codex, the door's main client, sends no max_output_tokens. On a priced model
// with a ceiling, the ceiling becomes the request's maximum instead of a refusal, which bounds
// the bill as the priced-model rule means to.
func (*responsesDoor) defaultMaximum(ceiling int, priced bool) (int, bool) {
	return ceiling, priced && ceiling > 0
}

func (d *responsesDoor) decode(r *http.Request, rc *requestCtx, body []byte, in decoding) (*llm.Request, *llm.Error) {
	rq, e := responses.Decode(body, in.limits)
	if e != nil {
		return nil, e
	}
	d.ctx = r.Context()
	if refs := rq.References(); refs != nil {
		if e := d.resolve(rq, refs, rc); e != nil {
			return nil, e
		}
	}
	var history []json.RawMessage
	if id := rq.PreviousResponseID; id != "" {
		if history, e = d.history(id, rc); e != nil {
			return nil, e
		}
	}
	if e := rq.Unseal(d.g.compaction, owner(rc)); e != nil {
		return nil, e
	}
	rq.WarmUp = d.warmUp
	if e := rq.Continue(history); e != nil {
		return nil, e
	}
	req := rq.LLM
	req.PassThrough = llm.WireResponses
	d.req = rq
	d.obj = responses.Object{ID: responses.NewID("resp"), CreatedAt: rc.created(), Model: req.Model,
		Store: rq.Store && d.g.responses != nil, Request: rq}
	req.Responses.Store = d.obj.Store
	return req, nil
}

// history is what the response id continues from: its input items, then its output.
func (d *responsesDoor) history(id string, rc *requestCtx) ([]json.RawMessage, *llm.Error) {
	st, e := d.previous(id, rc)
	if e != nil {
		return nil, e
	}
	var items []json.RawMessage
	add := func(arr []byte) {
		_ = jsonx.Elements(arr, func(_ int, v []byte) error {
			items = append(items, json.RawMessage(v))
			return nil
		})
	}
	if json.Valid(st.Input) {
		add(st.Input)
	}
	if json.Valid(st.Response) {
		_ = jsonx.Members(st.Response, func(key string, v []byte) error {
			if key == "output" {
				add(v)
			}
			return nil
		})
	}
	return items, nil
}

// Bounds on resolving item_reference items: the stored responses one request may read (a
// Vercel AI SDK conversation refers to one per earlier turn), and how many reads are in
// flight at once.
const (
	maxReferencedResponses = 256
	referenceReads         = 8
)

// resolve replaces the request's item_reference items to items the gateway made with the
// items themselves, read from the key's stored responses (on a WebSocket, the connection's
// last response too, stored or not): one read per response, which the item's id names
// (core/responses/ids.go), so nothing is scanned and storing a response writes nothing
// more. A reference neither holds (no store, expired, deleted, stored with store: false,
// another key's) stays a reference, which every route but the native one refuses naming
// input[N].
func (d *responsesDoor) resolve(rq *responses.Request, refs []responses.Reference, rc *requestCtx) *llm.Error {
	held := map[string]*responsestore.Stored{}
	for _, ref := range refs {
		held[ref.Response] = nil
	}
	if len(held) > maxReferencedResponses {
		return llm.BadRequest("input", "the input's item_reference items refer to items of "+strconv.Itoa(len(held))+
			" earlier responses; this gateway resolves those of at most "+strconv.Itoa(maxReferencedResponses)+" in one request: send the earlier items themselves")
	}
	if d.socket != nil {
		for id := range held {
			held[id] = d.socket.lastResponse(id)
		}
	}
	if d.g.responses != nil {
		if err := d.readStored(held, owner(rc)); err != nil {
			return storeUnavailable(d.g, rc, "read", err)
		}
	}
	why := "which is not an item of this key's stored responses (expired, deleted, never stored, or stored by another key)"
	if d.g.responses == nil {
		why = "an item of an earlier response, but this gateway stores no responses (no responses store is configured): send the item itself (with store: false the Vercel AI SDK does)"
	}
	for _, ref := range refs {
		var item []byte
		if st := held[ref.Response]; st != nil {
			item = responses.OutputItem(st.Response, ref.ID)
		}
		if item == nil {
			rq.Unresolved(ref, why)
			continue
		}
		if e := rq.Resolve(ref, item); e != nil {
			return e
		}
	}
	return nil
}

// readStored reads the stored responses named by the keys of m that it does not hold yet, a
// few at a time; one that is not stored stays nil. It returns the first error other than
// ErrNotFound.
func (d *responsesDoor) readStored(m map[string]*responsestore.Stored, owner string) error {
	ids := make([]string, 0, len(m))
	for id, st := range m {
		if st == nil {
			ids = append(ids, id)
		}
	}
	got := make([]*responsestore.Stored, len(ids))
	errs := make([]error, len(ids))
	switch len(ids) {
	case 0:
		return nil
	case 1:
		got[0], errs[0] = d.g.responses.Get(d.ctx, ids[0], owner)
	default:
		var wg sync.WaitGroup
		slots := make(chan struct{}, referenceReads)
		for i, id := range ids {
			wg.Add(1)
			slots <- struct{}{}
			go func() {
				defer func() {
					// This goroutine is not under the handler's recover: a store that
					// panics fails this request, not the process.
					if p := recover(); p != nil {
						errs[i] = fmt.Errorf("response store panicked: %v", p)
					}
					<-slots
					wg.Done()
				}()
				got[i], errs[i] = d.g.responses.Get(d.ctx, id, owner)
			}()
		}
		wg.Wait()
	}
	for i, id := range ids {
		switch err := errs[i]; {
		case err == nil:
			m[id] = got[i]
		case !errors.Is(err, responsestore.ErrNotFound):
			return err
		}
	}
	return nil
}

// previous finds the response id names: on a WebSocket the connection's last response, else
// the stored one.
func (d *responsesDoor) previous(id string, rc *requestCtx) (*responsestore.Stored, *llm.Error) {
	if d.socket != nil {
		if st := d.socket.lastResponse(id); st != nil {
			return st, nil
		}
	}
	if d.g.responses == nil {
		if d.socket != nil {
			return nil, d.previousNotFound(id)
		}
		return nil, llm.Unsupported("previous_response_id", "this gateway stores no responses (no responses store is configured), so previous_response_id cannot continue one: send the whole conversation in input")
	}
	st, err := d.g.responses.Get(d.ctx, id, owner(rc))
	if errors.Is(err, responsestore.ErrNotFound) {
		return nil, d.previousNotFound(id)
	}
	if err != nil {
		return nil, storeUnavailable(d.g, rc, "read", err)
	}
	return st, nil
}

func (d *responsesDoor) previousNotFound(id string) *llm.Error {
	e := &llm.Error{Status: http.StatusBadRequest, Type: llm.TypeInvalidRequest, Param: "previous_response_id",
		Code: "previous_response_not_found", Message: "Previous response with id '" + id + "' not found."}
	if d.socket != nil {
		e.Message += " On a WebSocket, a response that was not stored can be continued only on the connection that created it, while it is the connection's last response."
	}
	return e
}

func storeUnavailable(g *Gateway, rc *requestCtx, op string, err error) *llm.Error {
	g.log.Error("response_store", slog.String("request_id", rc.id), slog.String("op", op), slog.String("error", err.Error()))
	return &llm.Error{Status: http.StatusServiceUnavailable, Type: llm.TypeServiceUnavailable, Code: "response_store_unavailable",
		Message: "the gateway's response store could not be " + op + "; retry shortly"}
}

// owner is whose stored responses (and compaction items) a request sees: its key's, by id,
// so a stored key made again under a deleted one's name sees none of the old one's.
func owner(rc *requestCtx) string {
	if rc.key == nil {
		return ""
	}
	return rc.key.ID
}

func (d *responsesDoor) writeError(w http.ResponseWriter, _ *requestCtx, e *llm.Error) {
	if d.socket != nil {
		writeSocketError(w, e)
		return
	}
	openai.WriteError(w, e)
}

// visible: reasoning, and a native upstream's hosted tools' items, are output too.
func (*responsesDoor) visible(d *llm.Delta) bool { return d.Content() || d.Opaque }

func (d *responsesDoor) appendAnswer(b []byte, rc *requestCtx, a *llm.Answer) []byte {
	d.obj.CompletedAt = rc.created()
	body := d.body(a)
	if d.obj.Store && !d.keep(rc, body) {
		d.obj.Store = false // the response says what happened: it was not kept
		body = d.body(a)
	}
	return append(b, body...)
}

func (d *responsesDoor) body(a *llm.Answer) []byte {
	if a.RawWire == llm.WireResponses && len(a.Raw) > 0 {
		if patched := responses.PatchResponse(a.Raw, &d.obj); patched != nil {
			return patched
		}
	}
	return responses.AppendResponse(make([]byte, 0, 512), &d.obj, a)
}

// keep stores the response: the conversation's items up to this request's own, and the
// response object as the client gets it. It reports whether that worked.
func (d *responsesDoor) keep(rc *requestCtx, response []byte) bool {
	now := d.g.now()
	err := d.g.responses.Put(d.ctx, &responsestore.Stored{
		ID: d.obj.ID, Owner: owner(rc), Model: d.obj.Model, Created: now, Expires: now.Add(d.g.responseTTL),
		Input: d.req.LLM.Responses.Input, Response: response,
	})
	if err != nil {
		d.g.log.Error("response_store", slog.String("request_id", rc.id), slog.String("op", "write"),
			slog.String("response_id", d.obj.ID), slog.String("error", err.Error()))
		return false
	}
	return true
}

func (d *responsesDoor) encoder(rc *requestCtx) encoder {
	return &responsesEncoder{door: d, rc: rc, enc: responses.NewStreamEncoder(d.obj)}
}

// responsesEncoder adapts responses.StreamEncoder and stores the response once it ended. A
// stored stream says store: true from its first event; a store that fails at the end is
// logged (the client then gets previous_response_not_found for it).
type responsesEncoder struct {
	door *responsesDoor
	rc   *requestCtx
	enc  *responses.StreamEncoder
}

func (e *responsesEncoder) hold(d *llm.Delta) { e.enc.Hold(d) }

func (e *responsesEncoder) start(b []byte, _ *llm.Delta) []byte { return e.enc.Start(b) }

func (e *responsesEncoder) delta(b []byte, d *llm.Delta) []byte { return e.enc.Delta(b, d) }

func (e *responsesEncoder) end(b []byte, u *llm.Usage) []byte {
	b = e.enc.End(b, u.WithTotal(), e.rc.created())
	e.door.final = e.enc.Final()
	if e.door.obj.Store && e.enc.Final() != nil {
		e.door.keep(e.rc, e.enc.Final())
	}
	return b
}

func (e *responsesEncoder) fail(b []byte, oe *llm.Error) []byte { return e.enc.Fail(b, oe) }

// serveStoredResponse answers GET /v1/responses/{id}: the stored response object, to the
// key that made it.
func (g *Gateway) serveStoredResponse(w http.ResponseWriter, r *http.Request) {
	q := requestOf(g, w, r)
	st, ok := q.storedResponse(record.EndpointGetResponse)
	if !ok {
		return
	}
	writeJSON(&q.w, http.StatusOK, append(st.Response, '\n'))
	q.done(http.StatusOK, "", nil)
}

// serveDeleteResponse answers DELETE /v1/responses/{id}.
func (g *Gateway) serveDeleteResponse(w http.ResponseWriter, r *http.Request) {
	q := requestOf(g, w, r)
	st, ok := q.storedResponse(record.EndpointDeleteResponse)
	if !ok {
		return
	}
	err := g.responses.Delete(r.Context(), st.ID, owner(&q.rc))
	switch {
	case errors.Is(err, responsestore.ErrNotFound):
		q.refuse(responseNotFound(st.ID))
		return
	case err != nil:
		q.refuse(storeUnavailable(g, &q.rc, "written", err))
		return
	}
	b := append([]byte(`{"id":`), openai.AppendString(nil, st.ID)...)
	writeJSON(&q.w, http.StatusOK, append(b, ",\"object\":\"response\",\"deleted\":true}\n"...))
	q.done(http.StatusOK, "", nil)
}

// storedResponse authenticates a GET or DELETE of /v1/responses/{id} and finds the response.
// Query parameters (stream, include, starting_after) are refused: the stored object is
// served as it was answered. endpoint names the request in its log line and trace. When ok is
// false the client has its answer and the request is logged; otherwise the caller logs it.
func (q *request) storedResponse(endpoint string) (*responsestore.Stored, bool) {
	g, r := q.g, q.r
	if !q.admit(openaiWire(endpoint)) {
		return nil, false
	}
	for name := range r.URL.Query() {
		q.refuse(llm.Unsupported(name, "the query parameter "+name+" is not supported: the gateway serves a stored response as it was answered"))
		return nil, false
	}
	id := r.PathValue("id")
	if g.responses == nil {
		q.refuse(&llm.Error{Status: http.StatusNotFound, Type: llm.TypeInvalidRequest, Code: "not_found",
			Message: "Response with id '" + id + "' not found: this gateway stores no responses (no responses store is configured)."})
		return nil, false
	}
	st, err := g.responses.Get(r.Context(), id, owner(&q.rc))
	switch {
	case errors.Is(err, responsestore.ErrNotFound):
		q.refuse(responseNotFound(id))
		return nil, false
	case err != nil:
		q.refuse(storeUnavailable(g, &q.rc, "read", err))
		return nil, false
	}
	return st, true
}

func responseNotFound(id string) *llm.Error {
	return &llm.Error{Status: http.StatusNotFound, Type: llm.TypeInvalidRequest, Code: "not_found",
		Message: "Response with id '" + id + "' not found."}
}

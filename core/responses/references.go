package responses

import (
	"encoding/json"
	"errors"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// An item_reference input item ({"type":"item_reference","id":...}) stands for an item of an
// earlier response that the server kept: the Vercel AI SDK's default provider sends its
// earlier answers this way whenever it has not asked for store: false. Only OpenAI can
// resolve its own items; the gateway resolves the ones it made, whose ids name the stored
// response holding them (ids.go), before the conversation is built. The door reads the
// stored responses (References, OutputItem, Resolve); a reference it cannot resolve keeps
// its refusal, reworded by Unresolved, on every route but the native one, which passes it
// on to OpenAI.

// Reference is an item_reference input item to an item the gateway made.
type Reference struct {
	Path     string // input[N]
	ID       string // the item's id
	Response string // the response whose output holds it (ItemResponse)
	index    int    // in the request's own items
}

// References lists the request's item_reference items to items the gateway made, in input
// order; nil when there are none (a request without references costs nothing more).
func (r *Request) References() []Reference {
	if len(r.refs) == 0 {
		return nil
	}
	out := make([]Reference, len(r.refs))
	for i, k := range r.refs {
		it := &r.own[k]
		out[i] = Reference{Path: it.path, ID: it.ref, Response: ItemResponse(it.ref), index: k}
	}
	return out
}

// Resolve puts the item a reference names in its place, as the stored response has it: the
// request then carries the item itself to whichever route serves it (OpenAI cannot resolve
// the gateway's ids either), and a stored response keeps the item, not the reference. The
// item is decoded as any input item at the reference's path.
func (r *Request) Resolve(ref Reference, item []byte) *llm.Error {
	rs := r.LLM.Responses
	kept := rs.Only[:0]
	for _, e := range rs.Only {
		if e.Param != ref.Path {
			kept = append(kept, e)
		}
	}
	rs.Only = kept
	d := decoder{r: r}
	it, err := d.item(ref.Path, item)
	if err != nil {
		return asError(err)
	}
	r.own[ref.index] = it
	r.Items[ref.index] = json.RawMessage(item)
	return nil
}

// Unresolved words the refusal of a reference the gateway could not resolve: why says what
// was missing. The native route still passes the reference on; OpenAI answers for it.
func (r *Request) Unresolved(ref Reference, why string) {
	for i, e := range r.LLM.Responses.Only {
		if e.Param == ref.Path {
			r.LLM.Responses.Only[i] = only(ref.Path, ref.Path+" is an item_reference to '"+ref.ID+"', "+why)
		}
	}
}

var errFound = errors.New("found")

// OutputItem returns the output item with the given id of a stored response object, or nil.
func OutputItem(response []byte, id string) []byte {
	if !json.Valid(response) {
		return nil // what a store gave back is read as untrusted
	}
	var found []byte
	_ = jsonx.Members(response, func(key string, v []byte) error {
		if key != "output" {
			return nil
		}
		return jsonx.Elements(v, func(_ int, el []byte) error {
			return jsonx.Members(el, func(key string, v []byte) error {
				if key == "id" {
					if s, err := str(key, v); err == nil && s == id {
						found = el
						return errFound
					}
				}
				return nil
			})
		})
	})
	return found
}

// reference reads an item_reference: its id, and nothing else.
func reference(p string, v []byte) (string, error) {
	id, hasID := "", false
	err := jsonx.Members(v, func(key string, el []byte) error {
		switch key {
		case "type":
			return nil
		case "id":
			hasID = true
			var err error
			id, err = str(p+".id", el)
			return err
		}
		return unknownParam(p+"."+key, key, "type", "id")
	})
	if err != nil {
		return "", err
	}
	if !hasID {
		return "", missing(p + ".id")
	}
	if id == "" {
		return "", invalid(p+".id", "Invalid '"+p+".id': empty string. Expected a string with minimum length 1.")
	}
	return id, nil
}

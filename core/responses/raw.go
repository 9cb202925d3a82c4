package responses

import (
	"errors"
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// A native upstream's response objects and events reach the client as OpenAI sent them, but
// for the names that are the gateway's: the response id (the one the gateway stores it
// under and previous_response_id refers to), the model (the gateway model), store (whether
// the gateway kept it) and previous_response_id (the gateway's, which the upstream never
// saw). Each event's sequence_number is the gateway's own count, so an event the gateway
// adds (a failure after the commit) follows on.

// PatchResponse returns a native upstream's response object with the gateway's names, or
// nil when obj is not an object.
func PatchResponse(obj []byte, o *Object) []byte {
	if jsonx.KindOf(obj) != jsonx.Object {
		return nil
	}
	prev := []byte("null")
	if o.Request != nil {
		if v := o.Request.echo["previous_response_id"]; v != nil {
			prev = v
		}
	}
	repl := map[string][]byte{
		"id":                   openai.AppendString(nil, o.ID),
		"model":                openai.AppendString(nil, o.Model),
		"store":                strconv.AppendBool(nil, o.Store),
		"previous_response_id": prev,
	}
	if o.Replayed {
		repl["created_at"] = strconv.AppendInt(nil, o.CreatedAt, 10)
		if completed(obj) {
			repl["completed_at"] = strconv.AppendInt(nil, max(o.CompletedAt, o.CreatedAt), 10)
		}
	}
	return patch(obj, repl)
}

// completed reports whether the response object obj has a completed_at.
func completed(obj []byte) bool {
	done := false
	_ = jsonx.Members(obj, func(key string, v []byte) error {
		if key == "completed_at" && string(v) != "null" {
			done = true
		}
		return nil
	})
	return done
}

// appendRaw writes an upstream event with the gateway's sequence number and, in an event
// that carries the response, the gateway's names. The terminal events' response is kept as
// the stream's final one.
func (e *StreamEncoder) appendRaw(b []byte, ev *llm.RawEvent) []byte {
	if out, ok := e.appendPlainRaw(b, ev); ok {
		return out
	}
	return e.appendRawGeneral(b, ev)
}

// appendRawGeneral is appendRaw for every event.
func (e *StreamEncoder) appendRawGeneral(b []byte, ev *llm.RawEvent) []byte {
	name := ev.Name
	var resp []byte
	repl := map[string][]byte{"sequence_number": strconv.AppendInt(nil, int64(e.seq), 10)}
	e.seq++
	_ = jsonx.Members(ev.Data, func(key string, v []byte) error {
		switch key {
		case "type":
			if name == "" {
				name, _ = str(key, v)
			}
		case "response":
			resp = PatchResponse(v, &e.obj)
		}
		return nil
	})
	if resp != nil {
		repl["response"] = resp
		switch name {
		case "response.completed", "response.incomplete", "response.failed":
			e.final = resp
		}
	}
	data := patch(ev.Data, repl)
	if data == nil {
		data = ev.Data // not an object: passed on as it came
	}
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// errNotPlain turns an event away from appendPlainRaw.
var errNotPlain = errors.New("not a plain event")

// appendPlainRaw is appendRaw for the events that make up nearly all of a stream: named,
// without a response object, with keys that are plain words. Their members are copied
// through in one pass and the sequence number replaced, which gives the bytes appendRaw's
// general path would (keys re-encoded as they were, values verbatim); ok is false for any
// other event.
func (e *StreamEncoder) appendPlainRaw(b []byte, ev *llm.RawEvent) (out []byte, ok bool) {
	if ev.Name == "" {
		return b, false
	}
	e.members = e.members[:0]
	err := jsonx.RawMembers(ev.Data, func(key, v []byte) error {
		if !plainKey(key) || string(key) == `"response"` {
			return errNotPlain
		}
		for _, m := range e.members {
			if string(m.key) == string(key) {
				return errNotPlain // a repeated key: the general path passes the event on as it came
			}
		}
		e.members = append(e.members, member{key, v})
		return nil
	})
	if err != nil {
		return b, false
	}
	seq := e.seq
	e.seq++
	b = append(b, "event: "...)
	b = append(b, ev.Name...)
	b = append(b, "\ndata: {"...)
	numbered := false
	for i, m := range e.members {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.key...)
		b = append(b, ':')
		if string(m.key) == `"sequence_number"` {
			b = strconv.AppendInt(b, int64(seq), 10)
			numbered = true
		} else {
			b = append(b, m.value...)
		}
	}
	if !numbered {
		if len(e.members) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"sequence_number":`...)
		b = strconv.AppendInt(b, int64(seq), 10)
	}
	return append(b, "}\n\n"...), true
}

// member is one member of an event, its key as written.
type member struct{ key, value []byte }

// plainKey reports whether a quoted key is letters, digits, '_', '.' and '-' only: written
// again by openai.AppendString it comes out as it is.
func plainKey(k []byte) bool {
	if len(k) < 3 || k[0] != '"' || k[len(k)-1] != '"' {
		return false
	}
	for _, c := range k[1 : len(k)-1] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// patch rewrites an object's members named in repl (valid JSON values), keeping their order;
// a sequence_number it lacks is added (an upstream event without one still gets the
// gateway's). It returns nil when obj is not an object.
func patch(obj []byte, repl map[string][]byte) []byte {
	if jsonx.KindOf(obj) != jsonx.Object {
		return nil
	}
	out := make([]byte, 0, len(obj)+64)
	out = append(out, '{')
	seq := false
	err := jsonx.Members(obj, func(key string, v []byte) error {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = openai.AppendString(out, key)
		out = append(out, ':')
		if r, ok := repl[key]; ok {
			seq = seq || key == "sequence_number"
			out = append(out, r...)
		} else {
			out = append(out, v...)
		}
		return nil
	})
	if err != nil {
		return nil
	}
	if r, ok := repl["sequence_number"]; ok && !seq {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, `"sequence_number":`...)
		out = append(out, r...)
	}
	return append(out, '}')
}

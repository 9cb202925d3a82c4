package openai

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/fngate/fngate/core/llm"
)

// Profile is how a door reads a request: the config's request_profile for the request's key.
//
// Under the strict profile (the zero value) a request holds the documented subset and
// anything else is refused, exactly as DecodeChat and DecodeCompletion do. Under the
// extended profile the fields mainstream SDKs send are accepted too (see extended.go), each
// carried into llm.Request for the routes to honour or refuse with the reason: nothing is
// dropped at the door but a tool message's name, which its tool_call_id already implies.
type Profile struct {
	// Extended accepts the extended profile's fields.
	Extended bool
	// NamesOptional lets a route that cannot carry a participant name leave it out rather
	// than refuse the request (request_profile_ignore: [messages.name]).
	NamesOptional bool
}

// DecodeChatProfile decodes and validates a chat completion body under p into the gateway's
// request; includeUsage reports stream_options.include_usage.
func DecodeChatProfile(body []byte, lim llm.Limits, p Profile) (req *llm.Request, includeUsage bool, e *llm.Error) {
	if !p.Extended {
		r, e := DecodeChat(body, lim)
		if e != nil {
			return nil, false, e
		}
		return r.Request(), r.IncludeUsage(), nil
	}
	r := new(extendedChat)
	if e := decodeStrict(body, r); e != nil {
		return nil, false, e
	}
	req, e = r.request(lim.WithDefaults())
	if e != nil {
		return nil, false, e
	}
	req.NamesOptional = p.NamesOptional
	return req, r.StreamOptions != nil && r.StreamOptions.IncludeUsage, nil
}

// DecodeCompletionProfile decodes and validates a legacy completion body under p.
func DecodeCompletionProfile(body []byte, p Profile) (req *llm.Request, includeUsage bool, e *llm.Error) {
	if !p.Extended {
		r, e := DecodeCompletion(body)
		if e != nil {
			return nil, false, e
		}
		return r.Request(), r.IncludeUsage(), nil
	}
	r := new(extendedCompletion)
	if e := decodeStrict(body, r); e != nil {
		if e.Param == "prompt" && e.Code == "" {
			e = llm.Unsupported("prompt", "prompt must be a single string: prompt arrays and token arrays are not supported")
		}
		return nil, false, e
	}
	req, e = r.request()
	if e != nil {
		return nil, false, e
	}
	return req, r.StreamOptions != nil && r.StreamOptions.IncludeUsage, nil
}

// decodeAt decodes raw, a part of the request at path, into v as decodeStrict decodes a
// whole body: unknown fields, wrong types, keys that differ by case are refused, each named
// by its full path. The body as a whole was valid JSON and its repeated keys were refused
// already.
func decodeAt(raw []byte, v any, path string) *llm.Error {
	t := reflect.TypeOf(v).Elem()
	err := newStrictDecoder(raw).Decode(v)
	if e := checkKeys(raw, t, path); e != nil {
		return e
	}
	if err == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var generic any
	_ = d.Decode(&generic)
	if e := walk(generic, t, path); e != nil {
		return e
	}
	return llm.BadRequest(path, path+": "+err.Error())
}

// isNull reports whether a raw member is absent or null.
func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

package openai

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// MaxEmbeddingInputs is the most inputs one embeddings request may carry: OpenAI's own limit,
// which the gateway keeps whatever the route. Routes whose upstream takes fewer per call split
// the request into upstream batches.
const MaxEmbeddingInputs = 2048

// maxTokenID bounds a token id: no tokenizer in use has 2^31 entries.
const maxTokenID = 1<<31 - 1

// EmbeddingsRequest is POST /v1/embeddings as the gateway serves it: every field OpenAI
// defines (model, input, encoding_format, dimensions, user), and nothing else.
type EmbeddingsRequest struct {
	llm.EmbedRequest
	// Base64 is encoding_format base64: each vector as its float32s, little-endian, in base64.
	Base64 bool
}

// embeddingFields are the request's fields; any other key is refused.
var embeddingFields = [...]string{"model", "input", "encoding_format", "dimensions", "user"}

// DecodeEmbeddings decodes and checks an embeddings request body as strictly as the chat
// door: keys are exact and appear once, every value has its type, and a field OpenAI does not
// define is a 400 naming it. The input is a non-empty string, an array of non-empty strings,
// or token ids (an array of integers, or an array of such arrays), at most
// MaxEmbeddingInputs of them.
func DecodeEmbeddings(body []byte) (*EmbeddingsRequest, *llm.Error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, llm.BadRequest("", "The request body is empty: send a JSON object.")
	}
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		if se, ok := err.(*json.SyntaxError); ok {
			return nil, llm.BadRequest("", fmt.Sprintf("We could not parse the JSON body of your request: %s (at byte %d).", se.Error(), se.Offset))
		}
		return nil, llm.BadRequest("", "We could not parse the JSON body of your request.")
	}
	if jsonx.KindOf(body) != jsonx.Object {
		return nil, llm.BadRequest("", "The request body must be a JSON object.")
	}
	req := &EmbeddingsRequest{}
	var input []byte
	var oe *llm.Error
	err := jsonx.Members(body, func(key string, v []byte) error {
		null := jsonx.KindOf(v) == jsonx.Null
		switch key {
		case "model":
			oe = decodeString(v, key, &req.Model)
		case "input":
			if !null {
				input = v
			}
		case "encoding_format":
			var f string
			if oe = decodeString(v, key, &f); oe == nil {
				switch f {
				case "", "float":
				case "base64":
					req.Base64 = true
				default:
					oe = llm.BadRequest(key, "encoding_format must be \"float\" or \"base64\", got "+quote(f))
				}
			}
		case "dimensions":
			if !null {
				oe = decodeDimensions(v, req)
			}
		case "user":
			oe = decodeString(v, key, &req.User)
		default:
			oe = unknownEmbeddingField(key)
		}
		if oe != nil {
			return oe
		}
		return nil
	})
	if oe != nil {
		return nil, oe
	}
	if de, ok := err.(*jsonx.DuplicateError); ok {
		return nil, &llm.Error{Status: 400, Type: llm.TypeInvalidRequest, Param: de.Key, Code: "duplicate_parameter",
			Message: "The key " + quote(de.Key) + " appears more than once in the request body: send each key once (parsers disagree on which value a repeated key keeps)."}
	}
	if err != nil {
		return nil, llm.BadRequest("", "We could not parse the JSON body of your request: "+err.Error()+".")
	}
	switch {
	case req.Model == "":
		return nil, llm.BadRequest("model", "you must provide a model parameter")
	case input == nil:
		return nil, llm.BadRequest("input", "input is required: a string, an array of strings, or token ids")
	}
	if oe := decodeInput(input, &req.EmbedRequest); oe != nil {
		return nil, oe
	}
	return req, nil
}

func unknownEmbeddingField(key string) *llm.Error {
	msg := "Unrecognized request argument supplied: " + key
	for _, f := range embeddingFields {
		if strings.EqualFold(f, key) {
			msg += " (keys are case-sensitive: did you mean " + quote(f) + "?)"
		}
	}
	return &llm.Error{Status: 400, Type: llm.TypeInvalidRequest, Param: key, Code: "unknown_parameter", Message: msg}
}

// decodeString decodes a string field; null leaves it empty, as encoding/json does.
func decodeString(v []byte, param string, dst *string) *llm.Error {
	switch jsonx.KindOf(v) {
	case jsonx.Null:
		return nil
	case jsonx.String:
		if err := json.Unmarshal(v, dst); err != nil {
			return llm.BadRequest(param, param+": "+err.Error())
		}
		return nil
	}
	return llm.BadRequest(param, param+": expected a string, got "+kindName(v))
}

func decodeDimensions(v []byte, req *EmbeddingsRequest) *llm.Error {
	if jsonx.KindOf(v) != jsonx.Number {
		return llm.BadRequest("dimensions", "dimensions: expected an integer, got "+kindName(v))
	}
	n, err := strconv.ParseInt(string(v), 10, 32)
	if err != nil {
		return llm.BadRequest("dimensions", "dimensions: expected an integer, got "+string(v))
	}
	if n < 1 {
		return llm.BadRequest("dimensions", "dimensions must be at least 1, got "+string(v))
	}
	d := int(n)
	req.Dimensions = &d
	return nil
}

// decodeInput reads the input's four shapes into texts or token arrays.
func decodeInput(v []byte, req *llm.EmbedRequest) *llm.Error {
	switch jsonx.KindOf(v) {
	case jsonx.String:
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return llm.BadRequest("input", "input: "+err.Error())
		}
		if s == "" {
			return llm.BadRequest("input", "input must not be an empty string")
		}
		req.Input = []string{s}
		return nil
	case jsonx.Array:
	default:
		return llm.BadRequest("input", "input: expected a string, an array of strings or token ids, got "+kindName(v))
	}
	var elems [][]byte
	_ = jsonx.Elements(v, func(_ int, e []byte) error { elems = append(elems, e); return nil })
	switch {
	case len(elems) == 0:
		return llm.BadRequest("input", "input must not be an empty array")
	case jsonx.KindOf(elems[0]) == jsonx.Number:
		ids, oe := decodeTokens(elems, "input")
		if oe != nil {
			return oe
		}
		req.Tokens = [][]int{ids}
		return nil
	case len(elems) > MaxEmbeddingInputs:
		return llm.BadRequest("input", fmt.Sprintf("input holds %d inputs: at most %d are allowed per request", len(elems), MaxEmbeddingInputs))
	}
	switch jsonx.KindOf(elems[0]) {
	case jsonx.String:
		req.Input = make([]string, len(elems))
		for i, e := range elems {
			p := "input[" + strconv.Itoa(i) + "]"
			if jsonx.KindOf(e) != jsonx.String {
				return llm.BadRequest(p, p+": expected a string like input[0], got "+kindName(e))
			}
			if err := json.Unmarshal(e, &req.Input[i]); err != nil {
				return llm.BadRequest(p, p+": "+err.Error())
			}
			if req.Input[i] == "" {
				return llm.BadRequest(p, p+" must not be an empty string")
			}
		}
		return nil
	case jsonx.Array:
		req.Tokens = make([][]int, len(elems))
		for i, e := range elems {
			p := "input[" + strconv.Itoa(i) + "]"
			if jsonx.KindOf(e) != jsonx.Array {
				return llm.BadRequest(p, p+": expected an array of token ids like input[0], got "+kindName(e))
			}
			var inner [][]byte
			_ = jsonx.Elements(e, func(_ int, t []byte) error { inner = append(inner, t); return nil })
			if len(inner) == 0 {
				return llm.BadRequest(p, p+" must not be an empty array")
			}
			ids, oe := decodeTokens(inner, p)
			if oe != nil {
				return oe
			}
			req.Tokens[i] = ids
		}
		return nil
	}
	return llm.BadRequest("input[0]", "input[0]: expected a string, a token id or an array of token ids, got "+kindName(elems[0]))
}

func decodeTokens(elems [][]byte, at string) ([]int, *llm.Error) {
	ids := make([]int, len(elems))
	for i, e := range elems {
		p := at + "[" + strconv.Itoa(i) + "]"
		n, err := strconv.ParseInt(string(e), 10, 64)
		if jsonx.KindOf(e) != jsonx.Number || err != nil || n < 0 || n > maxTokenID {
			return nil, llm.BadRequest(p, p+": a token id is an integer from 0 to "+strconv.Itoa(maxTokenID)+", got "+string(e))
		}
		ids[i] = int(n)
	}
	return ids, nil
}

func kindName(v []byte) string {
	switch jsonx.KindOf(v) {
	case jsonx.String:
		return "a string"
	case jsonx.Number:
		return "a number"
	case jsonx.Bool:
		return "a boolean"
	case jsonx.Array:
		return "an array"
	case jsonx.Object:
		return "an object"
	}
	return "null"
}

// AppendEmbeddings appends OpenAI's embeddings answer: the vectors in input order under their
// index, model the gateway model's name, and usage when the upstream reported it. An embedding
// has no output, so a total the upstream left out is its input count. Floats are written as
// OpenAI writes them: each float32 as the shortest decimal of its float64 value, which a
// float64 reader (Python, JavaScript) reads back as exactly that value and a float32 reader
// as the same float32; base64 is the float32s, little-endian, as OpenAI encodes them. Both
// formats thus decode to the very same numbers, whatever the reader's precision.
func AppendEmbeddings(b []byte, model string, base64Format bool, e *llm.Embeddings) []byte {
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	for i, v := range e.Vectors {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		if base64Format {
			raw = raw[:0]
			for _, f := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, `"}`...)
			continue
		}
		b = append(b, '[')
		for j, f := range v {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(f), 'g', -1, 64)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"model":`...)
	b = AppendString(b, model)
	if u := &e.Usage; u.InputTokens != nil || u.TotalTokens != nil {
		b = append(b, `,"usage":{`...)
		total := u.TotalTokens
		if total == nil {
			total = u.InputTokens
		}
		if u.InputTokens != nil {
			b = append(b, `"prompt_tokens":`...)
			b = appendInt(b, *u.InputTokens)
			b = append(b, ',')
		}
		b = append(b, `"total_tokens":`...)
		b = appendInt(b, *total)
		b = append(b, '}')
	}
	return append(b, '}')
}

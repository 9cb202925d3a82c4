package openaifake

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fngate/fngate/core/providers/mock"
)

// EmbeddingDims are the dimensions of OpenAI's embedding models, which the fake answers
// with; shorten says whether the dimensions parameter is allowed. Other models answer with
// Server.EmbedDims (or the dimensions asked).
var EmbeddingDims = map[string]struct {
	Dims    int
	Shorten bool
}{
	"text-embedding-3-small": {1536, true},
	"text-embedding-3-large": {3072, true},
	"text-embedding-ada-002": {1536, false},
}

// maxEmbeddingInputs is OpenAI's limit of inputs per request.
const maxEmbeddingInputs = 2048

// Vector is the fake's embedding of an input (a text, or token ids joined by spaces):
// mock.Embedding, the same vector the mock and the other fakes give it.
func Vector(input string, dims int) []float32 { return mock.Embedding(input, dims) }

// embeddingRequest is what the fake reads of a request, checked as OpenAI checks it.
type embeddingRequest struct {
	model  string
	inputs []string // texts, or token ids joined by spaces
	words  int      // the input tokens the fake reports: words of the texts, or token ids
	base64 bool
	dims   *int
}

// embeddings serves POST /v1/embeddings: the request is validated like OpenAI's (unknown
// arguments, a missing model or input, empty strings and arrays, more than 2,048 inputs,
// mixed input types, an encoding_format other than float and base64, dimensions on a model
// that cannot shorten or above its own), then the scripted reply's faults play, then each
// input gets its Vector, as floats written the way OpenAI writes them (the float32 value's
// float64 decimal) or as base64.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request, body map[string]any, raw []byte) {
	er, msg, param := parseEmbeddingRequest(body)
	if msg != "" {
		writeErrorParam(w, 400, msg, param)
		return
	}
	var dims int
	known, isKnown := EmbeddingDims[er.model]
	switch {
	case er.dims != nil && isKnown && !known.Shorten:
		writeErrorParam(w, 400, "This model does not support specifying dimensions.", "dimensions")
		return
	case er.dims != nil && isKnown && *er.dims > known.Dims:
		writeErrorParam(w, 400, "This model does not support specifying dimensions greater than "+strconv.Itoa(known.Dims)+".", "dimensions")
		return
	case er.dims != nil:
		dims = *er.dims
	case isKnown:
		dims = known.Dims
	default:
		dims = s.EmbedDims
	}
	rep := s.Default
	if s.Script != nil {
		rep = s.Script(Request{Path: r.URL.Path, Header: r.Header, Body: body, Raw: raw})
	} else {
		rep = s.next()
	}
	if rep.ResetBeforeHeaders {
		cut(w)
		return
	}
	if rep.StallBeforeHeaders > 0 {
		select {
		case <-time.After(rep.StallBeforeHeaders):
		case <-r.Context().Done():
			s.canceled.Add(1)
			return
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status != 0 && rep.Status/100 != 2 {
		if rep.ErrorBody != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.Status)
			_, _ = io.WriteString(w, rep.ErrorBody)
			return
		}
		writeError(w, rep.Status, errorType(rep.Status), "scripted failure "+strconv.Itoa(rep.Status))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Body != nil {
		_, _ = w.Write(rep.Body)
		return
	}
	if rep.EmbedDims != 0 {
		dims = rep.EmbedDims
	}
	_, _ = w.Write(embeddingsAnswer(er, dims, &rep))
}

func embeddingsAnswer(er *embeddingRequest, dims int, rep *Reply) []byte {
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	order := make([]int, len(er.inputs))
	for i := range order {
		order[i] = i
		if rep.Reversed {
			order[i] = len(order) - 1 - i
		}
	}
	for n, i := range order {
		if n > 0 {
			b.WriteByte(',')
		}
		v := Vector(er.inputs[i], dims)
		b.WriteString(`{"object":"embedding","index":` + strconv.Itoa(i) + `,"embedding":`)
		if er.base64 {
			raw := make([]byte, 0, 4*len(v))
			for _, f := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
			}
			b.WriteString(`"` + base64.StdEncoding.EncodeToString(raw) + `"}`)
			continue
		}
		b.WriteByte('[')
		for j, f := range v {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 64))
		}
		b.WriteString("]}")
	}
	b.WriteString(`],"model":` + strconv.Quote(er.model))
	switch {
	case rep.NoUsage:
	case rep.RawUsage != nil:
		b.WriteString(`,"usage":` + string(rep.RawUsage))
	default:
		b.WriteString(`,"usage":{"prompt_tokens":` + strconv.Itoa(er.words) + `,"total_tokens":` + strconv.Itoa(er.words) + `}`)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// parseEmbeddingRequest checks a request as OpenAI does; a refusal comes back as its message
// and param.
func parseEmbeddingRequest(body map[string]any) (*embeddingRequest, string, string) {
	invalid := func(param string) (*embeddingRequest, string, string) {
		return nil, "'$." + param + "' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", param
	}
	er := &embeddingRequest{}
	for k := range body {
		switch k {
		case "model", "input", "encoding_format", "dimensions", "user":
		default:
			return nil, "Unrecognized request argument supplied: " + k, ""
		}
	}
	er.model, _ = body["model"].(string)
	if er.model == "" {
		return nil, "you must provide a model parameter", ""
	}
	switch f := body["encoding_format"].(type) {
	case nil:
	case string:
		switch f {
		case "float":
		case "base64":
			er.base64 = true
		default:
			return nil, "'" + f + "' is not one of ['float', 'base64'] - 'encoding_format'", "encoding_format"
		}
	default:
		return invalid("encoding_format")
	}
	if d, ok := body["dimensions"]; ok && d != nil {
		n, ok := d.(float64)
		if !ok || n != math.Trunc(n) || n < 1 {
			return invalid("dimensions")
		}
		di := int(n)
		er.dims = &di
	}
	if u, ok := body["user"]; ok && u != nil {
		if _, ok := u.(string); !ok {
			return invalid("user")
		}
	}
	switch in := body["input"].(type) {
	case nil:
		return nil, "'input' is a required property", "input"
	case string:
		if in == "" {
			return invalid("input")
		}
		er.inputs, er.words = []string{in}, len(strings.Fields(in))
	case []any:
		if len(in) == 0 || len(in) > maxEmbeddingInputs {
			return invalid("input")
		}
		if _, ids := in[0].(float64); ids {
			key, n, ok := tokenKey(in)
			if !ok {
				return invalid("input")
			}
			er.inputs, er.words = []string{key}, n
			break
		}
		for _, el := range in {
			switch e := el.(type) {
			case string:
				if e == "" {
					return invalid("input")
				}
				er.inputs = append(er.inputs, e)
				er.words += len(strings.Fields(e))
			case []any:
				key, n, ok := tokenKey(e)
				if !ok || len(e) == 0 {
					return invalid("input")
				}
				er.inputs = append(er.inputs, key)
				er.words += n
			default:
				return invalid("input")
			}
		}
		_, texts := in[0].(string)
		for _, el := range in {
			if _, s := el.(string); s != texts {
				return invalid("input") // strings and token arrays mixed
			}
		}
	default:
		return invalid("input")
	}
	return er, "", ""
}

// tokenKey joins token ids by spaces, the input Vector embeds them as.
func tokenKey(ids []any) (string, int, bool) {
	parts := make([]string, len(ids))
	for i, id := range ids {
		n, ok := id.(float64)
		if !ok || n != math.Trunc(n) || n < 0 {
			return "", 0, false
		}
		parts[i] = strconv.Itoa(int(n))
	}
	return strings.Join(parts, " "), len(ids), true
}

func writeErrorParam(w http.ResponseWriter, status int, msg, param string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var p any
	if param != "" {
		p = param
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": p, "code": nil}})
	_, _ = w.Write(b)
}

package bedrockfake

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fngate/fngate/core/providers/mock"
)

// Embedding model families, as embeddingFamily names them.
const (
	titanV2  = "titan-v2"
	titanV1  = "titan-v1"
	cohereV3 = "cohere-v3"
	cohereV4 = "cohere-v4"
)

// embeddingFamily tells an embedding model's family from its id ("" for any other model).
func embeddingFamily(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "amazon.titan-embed-text-v2"):
		return titanV2
	case strings.Contains(m, "amazon.titan-embed-text-v1"):
		return titanV1
	case strings.Contains(m, "cohere.embed-v4"):
		return cohereV4
	case strings.Contains(m, "cohere.embed-english-v3"), strings.Contains(m, "cohere.embed-multilingual-v3"):
		return cohereV3
	}
	return ""
}

// Vector is the fake's embedding of a text: mock.Embedding, the vector the mock and the other
// fakes give it too.
func Vector(text string, dims int) []float32 { return mock.Embedding(text, dims) }

// malformed is Bedrock's ValidationException wording for a body its model's schema refuses.
func malformed(what string) string {
	return "Malformed input request: " + what + ", please reformat your input and try again."
}

// ValidateEmbedding checks an InvokeModel body for an embedding model as Bedrock does, by
// the model's documented schema: Titan v2 takes inputText (1 to 50,000 characters),
// dimensions (1024, 512 or 256), normalize and embeddingTypes; Titan v1 inputText alone;
// Cohere v3 texts (at most 96, each at most 2,048 characters), input_type (required: one of
// search_document, search_query, classification, clustering), truncate (NONE, START, END) and
// embedding_types; Cohere v4 the same texts and input_type, embedding_types, output_dimension
// (256, 512, 1024, 1536), max_tokens and truncate (NONE, LEFT, RIGHT). An extraneous key, a
// missing one or a value out of its enum is a ValidationException message; "" is valid.
func ValidateEmbedding(model string, body []byte) string {
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&m); err != nil || m == nil {
		return malformed("#: expected type: JSONObject")
	}
	fam := embeddingFamily(model)
	allowed := map[string][]string{
		titanV2:  {"inputText", "dimensions", "normalize", "embeddingTypes"},
		titanV1:  {"inputText"},
		cohereV3: {"texts", "input_type", "truncate", "embedding_types"},
		cohereV4: {"texts", "input_type", "embedding_types", "output_dimension", "max_tokens", "truncate"},
	}[fam]
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(allowed, k) {
			return malformed("#: extraneous key [" + k + "] is not permitted")
		}
	}
	switch fam {
	case titanV1, titanV2:
		var text string
		if err := json.Unmarshal(m["inputText"], &text); err != nil || m["inputText"] == nil {
			return malformed("#: required key [inputText] not found")
		}
		if n := utf8.RuneCountInString(text); n < 1 || n > 50000 {
			return malformed("#/inputText: expected minLength: 1, maxLength: 50000, actual: " + strconv.Itoa(n))
		}
		if raw, ok := m["dimensions"]; ok {
			if n, err := strconv.Atoi(string(raw)); err != nil || n != 1024 && n != 512 && n != 256 {
				return malformed("#/dimensions: " + string(raw) + " is not a valid enum value")
			}
		}
		if raw, ok := m["normalize"]; ok && string(raw) != "true" && string(raw) != "false" {
			return malformed("#/normalize: expected type: Boolean, found: " + string(raw))
		}
		return ""
	}
	var texts []string
	if err := json.Unmarshal(m["texts"], &texts); err != nil || m["texts"] == nil {
		return malformed("#: required key [texts] not found")
	}
	if len(texts) > 96 {
		return malformed("#/texts: expected maximum item count: 96, found: " + strconv.Itoa(len(texts)))
	}
	for i, s := range texts {
		if fam == cohereV3 && utf8.RuneCountInString(s) > 2048 {
			return malformed("#/texts/" + strconv.Itoa(i) + ": expected maxLength: 2048, actual: " + strconv.Itoa(utf8.RuneCountInString(s)))
		}
	}
	var inputType string
	if err := json.Unmarshal(m["input_type"], &inputType); err != nil || m["input_type"] == nil {
		return malformed("#: required key [input_type] not found")
	}
	if !contains([]string{"search_document", "search_query", "classification", "clustering"}, inputType) {
		return malformed("#/input_type: " + inputType + " is not a valid enum value")
	}
	if raw, ok := m["truncate"]; ok {
		var tr string
		_ = json.Unmarshal(raw, &tr)
		valid := []string{"NONE", "START", "END"}
		if fam == cohereV4 {
			valid = []string{"NONE", "LEFT", "RIGHT"}
		}
		if !contains(valid, tr) {
			return malformed("#/truncate: " + string(raw) + " is not a valid enum value")
		}
	}
	if raw, ok := m["embedding_types"]; ok {
		var types []string
		if err := json.Unmarshal(raw, &types); err != nil {
			return malformed("#/embedding_types: expected type: JSONArray")
		}
		for _, t := range types {
			if !contains([]string{"float", "int8", "uint8", "binary", "ubinary"}, t) {
				return malformed("#/embedding_types: " + t + " is not a valid enum value")
			}
		}
	}
	if raw, ok := m["output_dimension"]; ok {
		if n, err := strconv.Atoi(string(raw)); err != nil || n != 256 && n != 512 && n != 1024 && n != 1536 {
			return malformed("#/output_dimension: " + string(raw) + " is not a valid enum value")
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// embeddingAnswer is the answer to a valid embedding body, with the input tokens Bedrock's
// header reports (the texts' words): Titan's embedding and inputTextTokenCount (v2 repeats the
// vector in embeddingsByType); Cohere's id, texts and embeddings, by type when embedding_types
// was given (always on v4, which answers that shape), as a plain list otherwise.
func embeddingAnswer(model string, body []byte) ([]byte, int) {
	var req struct {
		InputText       string   `json:"inputText"`
		Dimensions      int      `json:"dimensions"`
		Texts           []string `json:"texts"`
		EmbeddingTypes  []string `json:"embedding_types"`
		OutputDimension int      `json:"output_dimension"`
	}
	_ = json.Unmarshal(body, &req)
	fam := embeddingFamily(model)
	switch fam {
	case titanV1, titanV2:
		dims := 1536
		if fam == titanV2 {
			dims = 1024
			if req.Dimensions != 0 {
				dims = req.Dimensions
			}
		}
		v := Vector(req.InputText, dims)
		tokens := len(strings.Fields(req.InputText))
		out := map[string]any{"embedding": floats(v), "inputTextTokenCount": tokens}
		if fam == titanV2 {
			out["embeddingsByType"] = map[string]any{"float": floats(v)}
		}
		b, _ := json.Marshal(out)
		return b, tokens
	}
	dims := 1024
	if fam == cohereV4 {
		dims = 1536
		if req.OutputDimension != 0 {
			dims = req.OutputDimension
		}
	}
	vectors := make([]json.RawMessage, len(req.Texts))
	tokens := 0
	for i, s := range req.Texts {
		vectors[i] = floats(Vector(s, dims))
		tokens += len(strings.Fields(s))
	}
	out := map[string]any{"id": "emb-fake-0001", "texts": req.Texts, "response_type": "embeddings_floats", "embeddings": vectors}
	if fam == cohereV4 || req.EmbeddingTypes != nil {
		out["response_type"] = "embeddings_by_type"
		out["embeddings"] = map[string]any{"float": vectors}
	}
	b, _ := json.Marshal(out)
	return b, tokens
}

// floats writes a vector as Bedrock's models do: each float32 as its float64 decimal.
func floats(v []float32) json.RawMessage {
	b := make([]byte, 0, 20*len(v))
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 64)
	}
	return append(b, ']')
}

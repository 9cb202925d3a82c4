package openai_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// The four input shapes OpenAI defines, and the fields around them.
func TestDecodeEmbeddings(t *testing.T) {
	for _, tc := range []struct {
		body   string
		input  []string
		tokens [][]int
		b64    bool
		dims   *int
		user   string
	}{
		{body: `{"model":"m","input":"one text"}`, input: []string{"one text"}},
		{body: `{"model":"m","input":["a","b\u00e9"],"encoding_format":"base64","dimensions":256,"user":"u-1"}`, input: []string{"a", "bé"}, b64: true, dims: llm.Int(256), user: "u-1"},
		{body: `{"model":"m","input":[1,2,3]}`, tokens: [][]int{{1, 2, 3}}},
		{body: `{"model":"m","input":[[1,2],[3]]}`, tokens: [][]int{{1, 2}, {3}}},
		{body: `{"model":"m","input":"x","encoding_format":"float","dimensions":null,"user":null}`, input: []string{"x"}},
		{body: `{"model":"m","input":"x","encoding_format":null}`, input: []string{"x"}},
	} {
		r, oe := openai.DecodeEmbeddings([]byte(tc.body))
		if oe != nil {
			t.Errorf("%s: %v", tc.body, oe)
			continue
		}
		if r.Model != "m" || !reflect.DeepEqual(r.Input, tc.input) || !reflect.DeepEqual(r.Tokens, tc.tokens) || r.Base64 != tc.b64 ||
			!reflect.DeepEqual(r.Dimensions, tc.dims) || r.User != tc.user {
			t.Errorf("%s: decoded %+v", tc.body, r)
		}
	}
	many := `{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(`"x",`, openai.MaxEmbeddingInputs), ",") + `]}`
	if r, oe := openai.DecodeEmbeddings([]byte(many)); oe != nil || r.Len() != openai.MaxEmbeddingInputs {
		t.Errorf("%d inputs: %v", openai.MaxEmbeddingInputs, oe)
	}
	// One array of token ids is one input, however long.
	long := `{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(`7,`, 5000), ",") + `]}`
	if r, oe := openai.DecodeEmbeddings([]byte(long)); oe != nil || r.Len() != 1 {
		t.Errorf("5000 token ids: %v", oe)
	}
}

func TestDecodeEmbeddingsRefusals(t *testing.T) {
	for _, tc := range []struct{ body, param, code, says string }{
		{``, "", "", "empty"},
		{`[]`, "", "", "JSON object"},
		{`{"model":"m","input":"a"} x`, "", "", "parse"},
		{`{"model":"m","input":"a","stream":true}`, "stream", "unknown_parameter", "Unrecognized request argument supplied: stream"},
		{`{"model":"m","Input":"a"}`, "Input", "unknown_parameter", `did you mean "input"`},
		{`{"model":"m","model":"n","input":"a"}`, "model", "duplicate_parameter", "more than once"},
		{`{"model":7,"input":"a"}`, "model", "", "expected a string, got a number"},
		{`{"input":"a"}`, "model", "", "model parameter"},
		{`{"model":"m","input":null}`, "input", "", "required"},
		{`{"model":"m","input":""}`, "input", "", "empty string"},
		{`{"model":"m","input":[]}`, "input", "", "empty array"},
		{`{"model":"m","input":["a",""]}`, "input[1]", "", "empty string"},
		{`{"model":"m","input":["a",2]}`, "input[1]", "", "expected a string"},
		{`{"model":"m","input":[1,"a"]}`, "input[1]", "", "token id"},
		{`{"model":"m","input":[1.5]}`, "input[0]", "", "token id"},
		{`{"model":"m","input":[[1],[]]}`, "input[1]", "", "empty array"},
		{`{"model":"m","input":[[1],[2.5]]}`, "input[1][0]", "", "token id"},
		{`{"model":"m","input":[[1],"a"]}`, "input[1]", "", "array of token ids"},
		{`{"model":"m","input":[{"text":"a"}]}`, "input[0]", "", "expected a string"},
		{`{"model":"m","input":true}`, "input", "", "got a boolean"},
		{`{"model":"m","input":"a","encoding_format":"binary"}`, "encoding_format", "", `"float" or "base64"`},
		{`{"model":"m","input":"a","dimensions":"256"}`, "dimensions", "", "expected an integer"},
		{`{"model":"m","input":"a","dimensions":-1}`, "dimensions", "", "at least 1"},
		{`{"model":"m","input":"a","dimensions":1e3}`, "dimensions", "", "expected an integer"},
		{`{"model":"m","input":"a","user":["u"]}`, "user", "", "expected a string"},
		{`{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(`"x",`, openai.MaxEmbeddingInputs+1), ",") + `]}`, "input", "", "at most 2048"},
	} {
		_, oe := openai.DecodeEmbeddings([]byte(tc.body))
		if oe == nil {
			t.Errorf("%.60s: accepted", tc.body)
			continue
		}
		if oe.Status != 400 || oe.Param != tc.param || oe.Code != tc.code || !strings.Contains(oe.Message, tc.says) {
			t.Errorf("%.60s: %d param %q code %q %q", tc.body, oe.Status, oe.Param, oe.Code, oe.Message)
		}
	}
}

// Both encodings carry the very float32s: the decimal reads back to the same value as a
// float32 and as a float64, the base64 is those bits little-endian. Usage holds what was reported; an embedding's total is
// its input when only the input was reported; none reported, none written.
func TestAppendEmbeddings(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	v := []float32{0, -0.0069292835, 1, -1, 1e-45, math.MaxFloat32, 3.4028235e+38, 0.1, 1.0000001}
	for range 500 {
		v = append(v, math.Float32frombits(r.Uint32()&^(0xff<<23)|uint32(r.IntN(254)+1)<<23))
	}
	e := &llm.Embeddings{Vectors: [][]float32{v, v[:3]}, Usage: llm.Usage{InputTokens: llm.Int(12)}}
	var floats struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Data   []struct {
			Object    string            `json:"object"`
			Index     int               `json:"index"`
			Embedding []json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage map[string]int `json:"usage"`
	}
	if err := json.Unmarshal(openai.AppendEmbeddings(nil, "gw/model", false, e), &floats); err != nil {
		t.Fatal(err)
	}
	if floats.Object != "list" || floats.Model != "gw/model" || len(floats.Data) != 2 || floats.Data[1].Index != 1 || floats.Data[0].Object != "embedding" {
		t.Fatalf("answer %+v", floats)
	}
	if floats.Usage["prompt_tokens"] != 12 || floats.Usage["total_tokens"] != 12 {
		t.Errorf("usage %v", floats.Usage)
	}
	for i, raw := range floats.Data[0].Embedding {
		f32, err32 := strconv.ParseFloat(string(raw), 32)
		f64, err64 := strconv.ParseFloat(string(raw), 64)
		if err32 != nil || err64 != nil || math.Float32bits(float32(f32)) != math.Float32bits(v[i]) || f64 != float64(v[i]) {
			t.Fatalf("number %d: %s reads back as %v (float32) and %v (float64), want %v", i, raw, f32, f64, v[i])
		}
	}
	var b64 struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(openai.AppendEmbeddings(nil, "gw/model", true, e), &b64); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(b64.Data[0].Embedding)
	if err != nil || len(raw) != 4*len(v) {
		t.Fatalf("%v, %d bytes", err, len(raw))
	}
	for i := range v {
		if got := binary.LittleEndian.Uint32(raw[4*i:]); got != math.Float32bits(v[i]) {
			t.Fatalf("number %d: bits %x, want %x", i, got, math.Float32bits(v[i]))
		}
	}
	none := openai.AppendEmbeddings(nil, "m", false, &llm.Embeddings{Vectors: [][]float32{{0.5}}})
	if want := `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model":"m"}`; string(none) != want {
		t.Errorf("got  %s\nwant %s", none, want)
	}
}

// FuzzDecodeEmbeddings: whatever the body, decoding answers or refuses without a panic; what
// it accepts has a model and one or more non-empty inputs of one kind, at most 2,048 of them
// (one array of token ids counting once), and is a JSON object encoding/json reads too.
func FuzzDecodeEmbeddings(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"a"}`, `{"model":"m","input":["a","b"],"encoding_format":"base64","dimensions":8,"user":"u"}`,
		`{"model":"m","input":[1,2]}`, `{"model":"m","input":[[1],[2,3]]}`, `{"model":"m","input":["a",[1]]}`, `{"model":"m","input":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, oe := openai.DecodeEmbeddings(body)
		if oe != nil {
			if oe.Status != 400 || oe.Message == "" {
				t.Fatalf("refusal %+v", oe)
			}
			return
		}
		var generic map[string]any
		if err := json.Unmarshal(body, &generic); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		if r.Model == "" || r.Len() == 0 || (r.Input != nil) == (r.Tokens != nil) {
			t.Fatalf("accepted %+v", r)
		}
		if r.Input != nil && len(r.Input) > openai.MaxEmbeddingInputs {
			t.Fatalf("%d inputs", len(r.Input))
		}
		for _, s := range r.Input {
			if s == "" {
				t.Fatal("an empty input")
			}
		}
		for _, ids := range r.Tokens {
			if len(ids) == 0 {
				t.Fatal("an empty token array")
			}
		}
	})
}

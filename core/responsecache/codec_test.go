package responsecache

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// fill sets every field of v, recursively, to a value of its own (n numbers them), so that a
// field the codec forgets cannot come back equal.
func fill(v reflect.Value, n *int, depth int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strconv.Itoa(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint8:
		v.SetUint(uint64(*n % 250))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n, depth)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n, depth)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // bytes and json.RawMessage
			v.SetBytes([]byte(`{"n":` + strconv.Itoa(*n) + `}`))
			return
		}
		if depth >= 2 {
			return // a part's content's content: enough nesting to tell
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), n, depth+1)
		}
		v.Set(s)
	default:
		panic("fill: a field of kind " + v.Kind().String() + ": teach fill and the codec about it")
	}
}

func TestCodecRoundTripsEveryField(t *testing.T) {
	n := 0
	var whole llm.Answer
	fill(reflect.ValueOf(&whole).Elem(), &n, 0)
	deltas := make([]llm.Delta, 2)
	for i := range deltas {
		fill(reflect.ValueOf(&deltas[i]).Elem(), &n, 0)
	}
	for name, rec := range map[string]*Recording{
		"whole":  {Whole: &whole},
		"stream": {Deltas: deltas},
		"empty":  {Deltas: []llm.Delta{{Text: "x"}, {}}},
		"bare":   {Whole: &llm.Answer{Parts: []llm.Part{{Kind: llm.PartText, Text: "hi", Content: []llm.Part{}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			body, err := rec.Encode()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(body)
			if err != nil {
				t.Fatal(err)
			}
			want := *rec
			want.V = recordingVersion
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip:\n got %#v\nwant %#v", got, &want)
			}
		})
	}
}

// TestCodecRefusesWhatItDidNotWrite: every cut of a body, and bodies of another kind, read as
// unreadable, never as an answer and never a panic.
func TestCodecRefusesWhatItDidNotWrite(t *testing.T) {
	n := 0
	var whole llm.Answer
	fill(reflect.ValueOf(&whole).Elem(), &n, 0)
	for _, rec := range []*Recording{{Whole: &whole}, {Deltas: []llm.Delta{{Text: "a"}, {Stop: llm.StopEnd}}}} {
		body, _ := rec.Encode()
		for cut := range len(body) {
			if _, err := Decode(body[:cut]); err != ErrUnreadable {
				t.Errorf("a body cut at %d of %d: %v", cut, len(body), err)
			}
		}
		if _, err := Decode(append(body, 0)); err != ErrUnreadable {
			t.Errorf("a body with a byte more: %v", err)
		}
	}
	for _, body := range []string{"", "fngc", "fngc\x01X", "fngc\x02S\x00", `{"v":1,"deltas":[{"Text":"hi"}]}`, "fngc\x01S\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"} {
		if _, err := Decode([]byte(body)); err != ErrUnreadable {
			t.Errorf("%q: %v", body, err)
		}
	}
	if _, err := (&Recording{}).Encode(); err == nil {
		t.Error("an empty recording encoded")
	}
}

func FuzzDecode(f *testing.F) {
	body, _ := (&Recording{Deltas: []llm.Delta{{Text: "a", ToolCalls: []llm.ToolCallDelta{{Index: 1, Name: "f"}}}, {Stop: llm.StopEnd}}}).Encode()
	f.Add(body)
	whole, _ := (&Recording{Whole: &llm.Answer{Parts: []llm.Part{{Kind: llm.PartToolResult, Content: []llm.Part{{Text: "x"}}}}}}).Encode()
	f.Add(whole)
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := Decode(b)
		if err != nil {
			return
		}
		again, err := rec.Encode()
		if err != nil {
			t.Fatalf("a decoded recording does not encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("a re-encoded recording does not decode: %v", err)
		}
	})
}

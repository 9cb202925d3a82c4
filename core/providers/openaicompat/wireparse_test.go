package openaicompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// referenceChunk decodes what parseChunk reads, with encoding/json.
type referenceChunk struct {
	Choices []struct {
		Text  *string `json:"text"`
		Delta struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				Index    int     `json:"index"`
				ID       *string `json:"id"`
				Function struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
	Model *string         `json:"model"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// toChunk is what parseChunk reads with wantModel set, as the tests call it.
func (r *referenceChunk) toChunk() chunk {
	c := chunk{wantModel: true, model: deref(r.Model)}
	if len(r.Choices) > 0 {
		ch := r.Choices[0]
		c.content = deref(ch.Delta.Content)
		if ch.Text != nil {
			c.content = *ch.Text
		}
		c.refusal = deref(ch.Delta.Refusal)
		for _, tc := range ch.Delta.ToolCalls {
			c.toolCalls = append(c.toolCalls, llm.ToolCallDelta{Index: tc.Index, ID: deref(tc.ID), Name: deref(tc.Function.Name), Arguments: deref(tc.Function.Arguments)})
		}
		c.finish = deref(ch.FinishReason)
	}
	c.usage = r.Usage
	if len(r.Error) > 0 && string(r.Error) != "null" {
		c.errRaw = r.Error
	}
	return c
}

var chunkSeeds = []string{
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"content":" h\u00e9llo \"q\" \\ \n \ud83c\udf89"},"finish_reason":null}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":1}}}`,
	`{"choices":[{"index":0,"text":" once","finish_reason":null}]}`,
	`{"error":{"code":502,"message":"down"}}`,
	`{"choices":[{"index":0,"delta":{"content":"x","reasoning":"think","reasoning_details":[{"a":[1,2.5e3,true,false,null]}]}}],"obfuscation":"abc"}`,
	`{"choices":[{"delta":{"content":null,"refusal":"I can't"}}]}`,
	`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`,
}

func TestParseChunkMatchesEncodingJSON(t *testing.T) {
	for _, s := range chunkSeeds {
		var ref referenceChunk
		if err := json.Unmarshal([]byte(s), &ref); err != nil {
			t.Fatalf("seed %s: %v", s, err)
		}
		got := chunk{wantModel: true}
		if err := parseChunk([]byte(s), &got); err != nil {
			t.Fatalf("parseChunk(%s): %v", s, err)
		}
		if want := ref.toChunk(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", s, got, want)
		}
	}
	for _, bad := range []string{`{"choices":[{"delta":{"content":"x}}]}`, `{"choices":[`, `{"a":tru}`, `{"a":1}x`, `{"a":"\q"}`, `{"a":01x}`} {
		var c chunk
		if parseChunk([]byte(bad), &c) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// FuzzParseChunk: nothing panics, and wherever encoding/json accepts a chunk parseChunk reads
// the same fields. The comparison is limited to inputs in the form providers write: keys
// matched exactly (encoding/json also folds their case) and no key twice in an object
// (encoding/json merges repeats in ways no provider relies on).
func FuzzParseChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	// Beyond the parser's bounds, within encoding/json's.
	f.Add([]byte(inner(deep(maxDepth, true), true)))
	f.Add([]byte(toolCalls(calls(maxToolCalls+1), true)))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := chunk{wantModel: true}
		gerr := parseChunk(b, &got)
		if !providerForm(b) {
			return
		}
		var ref referenceChunk
		if err := json.Unmarshal(b, &ref); err != nil {
			return
		}
		want := ref.toChunk()
		if errs := overBounds(b, len(want.toolCalls)); errs != nil {
			if !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(gerr, e) }) {
				t.Fatalf("%q is beyond the parser's bounds but parseChunk says %v", b, gerr)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("encoding/json accepts %q but parseChunk says %v", b, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

// FuzzChunkStrings covers escapes and Unicode in the fields the gateway forwards.
func FuzzChunkStrings(f *testing.F) {
	f.Add("hello", `{"a":1}`, "stop")
	f.Add("\u2028 \"q\" \xff \U0001F389", "", "")
	f.Fuzz(func(t *testing.T, content, args, finish string) {
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
			"delta": map[string]any{"content": content, "tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": args}}}}}}})
		got := chunk{wantModel: true}
		if err := parseChunk(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		var ref referenceChunk
		if err := json.Unmarshal(b, &ref); err != nil {
			t.Fatal(err)
		}
		if want := ref.toChunk(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

// overBounds returns the errors the parser may refuse b with although encoding/json, which
// nests up to 10,000 levels and takes any number of calls, accepts it: nesting deeper than
// maxDepth, more than maxToolCalls calls. None for an input within the bounds.
func overBounds(b []byte, calls int) []error {
	var errs []error
	if nesting(b) > maxDepth {
		errs = append(errs, errTooDeep)
	}
	if calls > maxToolCalls {
		errs = append(errs, errTooManyCalls)
	}
	return errs
}

// nesting is the deepest nesting of objects and arrays in a valid JSON text.
func nesting(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func providerForm(b []byte) bool {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			return false
		}
	}
	d := json.NewDecoder(bytes.NewReader(b))
	var stack []map[string]bool
	expectKey := false
	for {
		tok, err := d.Token()
		if err != nil {
			return true
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = true
				continue
			case '}':
				stack = stack[:len(stack)-1]
			case '[':
				stack = append(stack, nil)
			case ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey && len(stack) > 0 && stack[len(stack)-1] != nil {
				if stack[len(stack)-1][v] {
					return false
				}
				stack[len(stack)-1][v] = true
				expectKey = false
				continue
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}

// referenceCompletion decodes what parseCompletion reads, with encoding/json.
type referenceCompletion struct {
	Choices []struct {
		Text    *string `json:"text"`
		Message struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				ID       *string `json:"id"`
				Function struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Model *string    `json:"model"`
}

func (r *referenceCompletion) toCompletion() completion {
	c := completion{choices: len(r.Choices), usage: r.Usage, model: deref(r.Model)}
	if len(r.Choices) > 0 {
		ch := r.Choices[0]
		c.content, c.refusal, c.finish = ch.Message.Content, ch.Message.Refusal, deref(ch.FinishReason)
		if ch.Text != nil {
			c.content = ch.Text
		}
		for _, tc := range ch.Message.ToolCalls {
			c.toolCalls = append(c.toolCalls, toolCall{ID: deref(tc.ID), Name: deref(tc.Function.Name), Arguments: deref(tc.Function.Arguments)})
		}
	}
	return c
}

var completionSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"h\u00e9llo \"q\"","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":1,"audio_tokens":0}},"service_tier":"default","system_fingerprint":null}`,
	`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"text":" once upon","logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":2,"completion_tokens":16}}`,
	`{"choices":[{"message":{"content":null,"refusal":"I can't help with that"},"finish_reason":"stop"}]}`,
	`{"choices":[]}`,
	`{"object":"chat.completion"}`,
}

func TestParseCompletionMatchesEncodingJSON(t *testing.T) {
	for _, s := range completionSeeds {
		var ref referenceCompletion
		if err := json.Unmarshal([]byte(s), &ref); err != nil {
			t.Fatalf("seed %s: %v", s, err)
		}
		var got completion
		if err := parseCompletion([]byte(s), &got); err != nil {
			t.Fatalf("parseCompletion(%s): %v", s, err)
		}
		if want := ref.toCompletion(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", s, got, want)
		}
	}
}

// FuzzParseCompletion: as FuzzParseChunk, for whole answers.
func FuzzParseCompletion(f *testing.F) {
	for _, s := range completionSeeds {
		f.Add([]byte(s))
	}
	// Beyond the parser's bounds, within encoding/json's.
	f.Add([]byte(inner(deep(maxDepth, true), false)))
	f.Add([]byte(toolCalls(calls(maxToolCalls+1), false)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got completion
		gerr := parseCompletion(b, &got)
		if !providerForm(b) {
			return
		}
		var ref referenceCompletion
		if err := json.Unmarshal(b, &ref); err != nil {
			return
		}
		want := ref.toCompletion()
		if errs := overBounds(b, len(want.toolCalls)); errs != nil {
			if !slices.ContainsFunc(errs, func(e error) bool { return errors.Is(gerr, e) }) {
				t.Fatalf("%q is beyond the parser's bounds but parseCompletion says %v", b, gerr)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("encoding/json accepts %q but parseCompletion says %v", b, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

func BenchmarkParseChunk(b *testing.B) {
	data := []byte(chunkSeeds[0])
	b.ReportAllocs()
	for b.Loop() {
		var c chunk
		_ = parseChunk(data, &c)
	}
}

func BenchmarkUnmarshalChunk(b *testing.B) {
	data := []byte(chunkSeeds[0])
	b.ReportAllocs()
	for b.Loop() {
		var c referenceChunk
		_ = json.Unmarshal(data, &c)
	}
}

// deep is a value nested n levels deep: arrays, or objects when objects is set.
func deep(n int, objects bool) string {
	if objects {
		return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
	}
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

// calls is a tool_calls array of n calls.
func calls(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(`{"index":0,"function":{"arguments":"{}"}},`, n), ",") + "]"
}

// TestParsersBoundNestingAndCalls: an upstream's answer nested millions of levels deep used to
// overflow the goroutine stack (a fatal error no recover catches, so the process died with
// every request in it), and one padded with empty tool calls held some 20 times its size. Both
// parsers refuse either with an error, and accept what is within the bounds as encoding/json
// reads it.
func TestParsersBoundNestingAndCalls(t *testing.T) {
	const millions = 3_000_000
	cases := []struct {
		name string
		// wrap puts the value into a chunk, or into a whole answer.
		wrap  func(v string, chunk bool) string
		value string
		want  error
	}{
		{"arrays in a skipped top-level value", top, deep(millions, false), errTooDeep},
		{"objects in a skipped delta or message value", inner, deep(millions, true), errTooDeep},
		{"in the usage object", usage, deep(millions, false), errTooDeep},
		{"in the error value", errValue, deep(millions, true), errTooDeep},
		// top puts the value one level down: with it the nesting is exactly maxDepth.
		{"at the bound", top, deep(maxDepth-1, false), nil},
		{"one past the bound", top, deep(maxDepth, false), errTooDeep},
		{"as many calls as allowed", toolCalls, calls(maxToolCalls), nil},
		{"one call too many", toolCalls, calls(maxToolCalls + 1), errTooManyCalls},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, isChunk := range []bool{true, false} {
				b := []byte(tc.wrap(tc.value, isChunk))
				var err error
				if isChunk {
					c := chunk{wantModel: true}
					err = parseChunk(b, &c)
					if tc.want == nil {
						var ref referenceChunk
						if jerr := json.Unmarshal(b, &ref); jerr != nil || !reflect.DeepEqual(c, ref.toChunk()) {
							t.Errorf("chunk: parseChunk and encoding/json (%v) disagree", jerr)
						}
					}
				} else {
					var c completion
					err = parseCompletion(b, &c)
					if tc.want == nil {
						var ref referenceCompletion
						if jerr := json.Unmarshal(b, &ref); jerr != nil || !reflect.DeepEqual(c, ref.toCompletion()) {
							t.Errorf("completion: parseCompletion and encoding/json (%v) disagree", jerr)
						}
					}
				}
				if !errors.Is(err, tc.want) {
					t.Errorf("chunk=%v: got %v, want %v", isChunk, err, tc.want)
				}
			}
		})
	}
}

func top(v string, _ bool) string { return `{"x":` + v + `}` }

func inner(v string, chunk bool) string {
	if chunk {
		return `{"choices":[{"delta":{"x":` + v + `}}]}`
	}
	return `{"choices":[{"message":{"x":` + v + `}}]}`
}

func usage(v string, _ bool) string { return `{"choices":[],"usage":{"x":` + v + `}}` }

// errValue: a completion has no error key, so there the value is skipped like any other.
func errValue(v string, _ bool) string { return `{"error":` + v + `}` }

func toolCalls(v string, chunk bool) string {
	if chunk {
		return `{"choices":[{"delta":{"tool_calls":` + v + `}}]}`
	}
	return `{"choices":[{"message":{"tool_calls":` + v + `}}]}`
}

// validNumber accepts exactly the numbers encoding/json accepts.
func TestValidNumber(t *testing.T) {
	for _, n := range []string{"0", "-0", "7", "-12", "10", "0.5", "-0.25e10", "1E+2", "1e-2", "123.456E789",
		"", "-", "00", "01", "-01", "1.", ".5", "1e", "1e+", "+1", "1.e5", "0x1", "1-2", "--1", "1ee2", "1.2.3", "Infinity"} {
		if got, want := validNumber([]byte(n)), json.Valid([]byte(n)); got != want {
			t.Errorf("validNumber(%q) = %v, encoding/json says %v", n, got, want)
		}
	}
}

func FuzzValidNumber(f *testing.F) {
	for _, n := range []string{"0", "-1.5e3", "01", "1."} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n string) {
		for _, c := range []byte(n) {
			if !isNumberByte(c) {
				return // skip stops at the first byte that is not one of these
			}
		}
		if got, want := validNumber([]byte(n)), json.Valid([]byte(n)); got != want {
			t.Errorf("validNumber(%q) = %v, encoding/json says %v", n, got, want)
		}
	})
}

// parseDeltaEvent reads what encoding/json reads whenever it takes an event at all.
func FuzzParseDeltaEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"a\":"}`,
		`{"type":"response.output_text.delta","delta":null}`,
		`{"type":"response.output_text.delta","Delta":"x"}`,
		`{"type":"response.output_text.delta","delta":"a","delta":"b"}`,
		`{"type":"response.output_text.delta","delta":5}`,
		`{"type":"response.completed","response":{"status":"completed"}}`,
		`{"type":"x","delta":"\ud83d\ude00 \u00e9"}`,
		`null`, `{}`, `{"type":"x",}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var fast wireEvent
		if !parseDeltaEvent([]byte(s), &fast) {
			return
		}
		var slow wireEvent
		if err := json.Unmarshal([]byte(s), &slow); err != nil {
			t.Fatalf("parseDeltaEvent took %q, which encoding/json refuses: %v", s, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%q: parseDeltaEvent %+v, encoding/json %+v", s, fast, slow)
		}
	})
}

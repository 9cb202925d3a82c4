package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// A key that encoding/json would match to a field by folding case, or a key repeated in one
// object, means a proxy in front and the gateway read different requests: both are refused
// with a 400 naming the key, at any depth, on the fast path and on the diagnosing one.
func TestKeysAreExactAndUnique(t *testing.T) {
	user := `{"role":"user","content":"hi"}`
	tool := func(params string) string {
		return `"tools":[{"type":"function","function":{"name":"f","parameters":` + params + `}}]`
	}
	chat := func(fields ...string) string {
		return "{" + strings.Join(append([]string{`"model":"m"`, `"messages":[` + user + `]`}, fields...), ",") + "}"
	}
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf(`"p%d":{"type":"string"}`, i))
	}
	// Objects nested six deep with fifteen keys each: more keys in scope than the scanner holds
	// in its fixed array.
	deep := func(last string) string {
		obj := `{"type":"string"` + last + `}`
		for range 6 {
			var ps []string
			for i := range 14 {
				ps = append(ps, fmt.Sprintf(`"q%d":{}`, i))
			}
			obj = `{` + strings.Join(ps, ",") + `,"next":` + obj + `}`
		}
		return obj
	}
	deepPath := "tools[0].function.parameters" + strings.Repeat(".next", 6) + ".type"
	cases := []struct {
		name  string
		body  string
		param string // "" = accepted
		code  string
	}{
		// case
		{"top-level key in upper case", `{"MODEL":"m","messages":[` + user + `]}`, "MODEL", "unknown_parameter"},
		{"case variant beside the field", chat(`"Model":"other"`), "Model", "unknown_parameter"},
		{"nested struct key", `{"model":"m","messages":[` + user + `,{"Role":"user","content":"x"}]}`, "messages[1].Role", "unknown_parameter"},
		{"stream option key", chat(`"stream":true`, `"stream_options":{"Include_Usage":true}`), "stream_options.Include_Usage", "unknown_parameter"},
		{"tool function key", chat(`"tools":[{"type":"function","function":{"NAME":"f"}}]`), "tools[0].function.NAME", "unknown_parameter"},
		{"tool_choice key", chat(tool(`{}`), `"tool_choice":{"type":"function","Function":{"name":"f"}}`), "tool_choice.Function", "unknown_parameter"},
		{"non-ASCII fold (long s)", chat(`"ſtream":true`), "ſtream", "unknown_parameter"},
		{"non-ASCII fold encoding/json makes and EqualFold does not (dotted I)", chat(`"max_completİon_tokens":5`), "max_completİon_tokens", "unknown_parameter"},
		{"escaped upper case", `{"\u004dodel":"m","messages":[` + user + `]}`, "Model", "unknown_parameter"},
		{"case refused on the diagnosing path too", `{"MODEL":"m","messages":"not an array"}`, "MODEL", "unknown_parameter"},
		{"metadata keys differing by case are two keys", chat(`"metadata":{"team":"a","Team":"b"}`), "", ""},
		{"schema keys are free", chat(tool(`{"type":"object","properties":{"Type":{"TYPE":"string"}}}`)), "", ""},
		// repetition
		{"repeated top-level key", chat(`"model":"other"`), "model", "duplicate_parameter"},
		{"repeated key spelled with an escape", chat(`"mod\u0065l":"other"`), "model", "duplicate_parameter"},
		{"repeated message key", `{"model":"m","messages":[` + user + `,{"role":"user","content":"a","content":"b"}]}`, "messages[1].content", "duplicate_parameter"},
		{"repeated metadata key", chat(`"metadata":{"team":"a","team":"b"}`), "metadata.team", "duplicate_parameter"},
		{"repeated key in a tool schema", chat(tool(`{"type":"object","properties":{"city":{"type":"string","type":"integer"}}}`)), "tools[0].function.parameters.properties.city.type", "duplicate_parameter"},
		{"repeated key in a large schema object", chat(tool(`{"type":"object","properties":{` + strings.Join(many, ",") + `,"p7":{}}}`)), "tools[0].function.parameters.properties.p7", "duplicate_parameter"},
		{"repeated key deep in many-keyed objects", chat(tool(deep(`,"type":"integer"`))), deepPath, "duplicate_parameter"},
		{"deep many-keyed objects without repetition", chat(tool(deep(``))), "", ""},
		{"repeated key in tool_choice", chat(tool(`{}`), `"tool_choice":{"type":"function","type":"function","function":{"name":"f"}}`), "tool_choice.type", "duplicate_parameter"},
		{"repeated key whose first value is the wrong type", `{"model":1,"model":"m","messages":[` + user + `]}`, "model", "duplicate_parameter"},
		{"the same key in sibling objects", `{"model":"m","messages":[` + user + `,` + user + `]}`, "", ""},
		{"the same key at two depths", chat(`"metadata":{"model":"x"}`), "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, e := DecodeChat([]byte(tc.body), llm.Limits{})
			checkKeyRefusal(t, e, tc.param, tc.code)
		})
	}
}

func TestCompletionKeysAreExactAndUnique(t *testing.T) {
	cases := []struct {
		name, body, param, code string
	}{
		{"upper-case prompt", `{"model":"m","PROMPT":"hi"}`, "PROMPT", "unknown_parameter"},
		{"case variant of a nested key", `{"model":"m","prompt":"hi","stream":true,"stream_options":{"INCLUDE_USAGE":true}}`, "stream_options.INCLUDE_USAGE", "unknown_parameter"},
		{"repeated prompt", `{"model":"m","prompt":"hi","prompt":"ignore the above"}`, "prompt", "duplicate_parameter"},
		{"repeated model", `{"model":"m","prompt":"hi","model":"n"}`, "model", "duplicate_parameter"},
		{"plain request", `{"model":"m","prompt":"hi"}`, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, e := DecodeCompletion([]byte(tc.body))
			checkKeyRefusal(t, e, tc.param, tc.code)
		})
	}
}

func checkKeyRefusal(t *testing.T, e *llm.Error, param, code string) {
	t.Helper()
	if param == "" {
		if e != nil {
			t.Fatalf("refused: %v", e)
		}
		return
	}
	if e == nil {
		t.Fatal("accepted")
	}
	if e.Status != 400 || e.Param != param || e.Code != code || !strings.Contains(e.Message, param) && !strings.Contains(e.Message, param[strings.LastIndexAny(param, ".]")+1:]) {
		t.Errorf("got %d param %q code %q %q, want param %q code %q", e.Status, e.Param, e.Code, e.Message, param, code)
	}
}

// FuzzCheckKeys: no input panics the scan, and on well-formed JSON it finds a repeated key
// exactly when encoding/json's own tokenizer, keys decoded, sees one.
func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":{"a":2}}`, `{"a":1,"a":2}`, `[{"x":[]},{"x":{"y":1,"y":2}}]`, `{"\u0061":1,"a":2}`,
		`{"a\"b":1,"a\\b":2}`, "{\"\xff\":1,\"\xfe\":2}", `{"k":"v\\","k2":"\""}`, `{`, `"`, `{"a"`, `[1,,2]`,
	} {
		f.Add([]byte(s))
	}
	raw := reflect.TypeFor[json.RawMessage]()
	f.Fuzz(func(t *testing.T, body []byte) {
		e := checkKeys(body, raw, "")
		if !json.Valid(body) {
			return
		}
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		want, err := hasRepeatedKey(d)
		if err != nil {
			t.Fatalf("%q is valid JSON, but: %v", body, err)
		}
		if (e != nil) != want {
			t.Fatalf("%q: scan says %v, the tokenizer says repeated=%v", body, e, want)
		}
	})
}

// hasRepeatedKey reads one value from d and reports whether any of its objects repeats a key.
func hasRepeatedKey(d *json.Decoder) (repeated bool, err error) {
	tok, err := d.Token()
	if err != nil {
		return false, err
	}
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return false, nil
	}
	seen := map[string]bool{}
	for d.More() {
		if tok == json.Delim('{') {
			k, err := d.Token()
			if err != nil {
				return false, err
			}
			key, _ := k.(string)
			repeated = repeated || seen[key]
			seen[key] = true
		}
		r, err := hasRepeatedKey(d)
		if err != nil {
			return false, err
		}
		repeated = repeated || r
	}
	_, err = d.Token()
	return repeated, err
}

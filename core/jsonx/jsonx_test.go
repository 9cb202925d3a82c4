package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzMembers checks the walker against encoding/json: for any valid object without repeated
// keys it yields the same members, values byte for byte; a repeated key is an error.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, ` { "a" : [1, {"b":"}"}] , "c\"d" : "e\\"f" , "g":null,"h":true} `,
		`{"a":1,"a":2}`, `{"\u0061":1}`, `{"x":{"y":{"z":[[[]]]}}}`, `[1,2]`, `"s"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want map[string]json.RawMessage
		isObject := json.Unmarshal(b, &want) == nil && KindOf(b) == Object
		got := map[string][]byte{}
		err := Members(b, func(k string, v []byte) error {
			got[k] = v
			return nil
		})
		if !isObject {
			if err == nil && KindOf(b) != Object {
				t.Fatalf("Members accepted a non-object %s", b)
			}
			return
		}
		var dup *DuplicateError
		if errors.As(err, &dup) {
			if strings.Count(string(b), `"`) < 4 {
				t.Fatalf("duplicate %q reported in %s", dup.Key, b)
			}
			return
		}
		if err != nil {
			t.Fatalf("Members(%s): %v", b, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d members, want %d, in %s", len(got), len(want), b)
		}
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
				t.Fatalf("member %q = %s, want %s", k, got[k], v)
			}
		}
	})
}

func TestDepthAndCount(t *testing.T) {
	for _, tc := range []struct {
		in           string
		depth, count int
	}{
		{`1`, 0, -1}, {`[]`, 1, 0}, {`[1,[2,[3]],"]]]"]`, 3, 3}, {`{"a":[{}]}`, 3, -1},
	} {
		if d := Depth([]byte(tc.in)); d != tc.depth {
			t.Errorf("Depth(%s) = %d, want %d", tc.in, d, tc.depth)
		}
		if c := Count([]byte(tc.in)); c != tc.count {
			t.Errorf("Count(%s) = %d, want %d", tc.in, c, tc.count)
		}
	}
}

package record

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
)

func TestKeysNeverCollide(t *testing.T) {
	pairs := [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"a", "b%3Ac"}, {"a%3Ab", "c"}, {"", "a:c"}, {"a", ":c"}, {"a/b", "c"}, {"a", "b/c"}, {"__y", "x__"}, {"_", "_"}, {"%5F", "_"}, {"", "__"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := Key(p[0], p[1])
		if other, dup := seen[k]; dup {
			t.Errorf("Key%v = Key%v = %q", p, other, k)
		}
		seen[k] = p
		if strings.Contains(k, "/") || k == "." || k == ".." || strings.HasPrefix(k, "__") && strings.HasSuffix(k, "__") {
			t.Errorf("Key%v = %q is no Firestore document id", p, k)
		}
	}
}

func TestPackRoundTripsBytes(t *testing.T) {
	random := make([]byte, 70_000) // more than one deflate block
	_, _ = rand.Read(random)
	for _, tc := range []struct{ input, response []byte }{
		{nil, nil},
		{[]byte(`[{"type":"message","role":"user","content":"<b>&</b>"}]`), []byte("{\n  \"id\": \"resp_1\"\n}")},
		{nil, []byte(`{"id":"resp_2"}`)},
		{random, random[:10]},
	} {
		body, err := Pack(tc.input, tc.response)
		if err != nil {
			t.Fatal(err)
		}
		in, resp, err := Unpack(body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(in, tc.input) || !bytes.Equal(resp, tc.response) || (tc.input == nil) != (in == nil) {
			t.Errorf("round trip of %.40q, %.40q gave %.40q, %.40q", tc.input, tc.response, in, resp)
		}
	}
	for _, bad := range [][]byte{nil, []byte("not gzip")} {
		if _, _, err := Unpack(bad); err == nil {
			t.Errorf("Unpack(%q) succeeded", bad)
		}
	}
}

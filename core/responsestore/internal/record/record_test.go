package record

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
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

func TestSplitJoins(t *testing.T) {
	body := make([]byte, 1000)
	_, _ = rand.Read(body)
	for _, size := range []int{1, 7, 999, 1000, 1001} {
		parts := Split(body, size)
		var joined []byte
		for _, p := range parts {
			if len(p) > size || len(p) == 0 {
				t.Errorf("size %d: a part of %d bytes", size, len(p))
			}
			joined = append(joined, p...)
		}
		if !bytes.Equal(joined, body) || len(parts) != (len(body)+size-1)/size {
			t.Errorf("size %d: %d parts do not join to the body", size, len(parts))
		}
	}
	if k := PartKey(Key("a#b", "c"), "g", 2); strings.Count(k, "#") != 2 {
		t.Errorf("a '#' of the owner survived escaping: %q", k)
	}
}

func TestEachRunsAllAndReportsAnError(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	running, most := 0, 0
	err := Each(20, 3, func(i int) error {
		mu.Lock()
		seen[i] = true
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		if i == 7 {
			return errors.New("seven")
		}
		return nil
	})
	if err == nil || err.Error() != "seven" || len(seen) != 20 || most > 3 {
		t.Errorf("Each: %v, ran %d, at most %d at once", err, len(seen), most)
	}
}

package recordfile

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type header struct {
	A int `json:"a"`
	B int `json:"b"`
}

// TestPartsComeBackAsTheyWent: parts holding newlines, nothing, and bytes that are not
// text read back byte for byte after their header; a file cut short or with more than its
// header says is an error.
func TestPartsComeBackAsTheyWent(t *testing.T) {
	parts := [][]byte{[]byte("line one\nline two\n"), nil, {0, 0xff, '\n'}}
	data, err := Encode(header{A: len(parts[0]), B: len(parts[2])}, parts...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"a":18,"b":3}`+"\nline one\n") {
		t.Errorf("the layout is %q", data)
	}
	read := func(data []byte) ([][]byte, error) {
		r := bufio.NewReader(bytes.NewReader(data))
		var h header
		if err := ReadHeader(r, &h); err != nil {
			return nil, err
		}
		var got [][]byte
		for _, n := range []int{h.A, 0, h.B} {
			p, err := ReadPart(r, n)
			if err != nil {
				return nil, err
			}
			got = append(got, p)
		}
		return got, nil
	}
	got, err := read(data)
	if err != nil || len(got) != 3 || !bytes.Equal(got[0], parts[0]) || got[1] != nil || !bytes.Equal(got[2], parts[2]) {
		t.Fatalf("read back %q, %v; want %q", got, err, parts)
	}
	for name, bad := range map[string][]byte{
		"cut short":  data[:len(data)-2],
		"longer":     bytes.Replace(data, []byte("line two"), []byte("line two, and more"), 1),
		"no header":  []byte(`{"a":1`),
		"not json":   []byte("a\n"),
		"negative":   []byte(`{"a":-1}` + "\n"),
		"empty file": nil,
	} {
		if got, err := read(bad); err == nil {
			t.Errorf("%s: read %q", name, got)
		}
	}
}

// TestSweepRemovesExpiredAtMostOncePerEvery: a sweep removes the files with the suffix that
// expired names, leaves every other file, and runs again only Every later.
func TestSweepRemovesExpiredAtMostOncePerEvery(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"old.rec", "new.rec", "old.txt", "old.rec.tmp-1"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := Sweeper{Every: time.Minute}
	now := time.Now()
	asked := 0
	expired := func(path string) bool { asked++; return strings.HasPrefix(filepath.Base(path), "old") }
	s.Sweep(dir, ".rec", now, expired)
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "new.rec old.rec.tmp-1 old.txt" || asked != 2 {
		t.Errorf("after a sweep that asked about %d files the directory holds %v", asked, left)
	}
	s.Sweep(dir, ".rec", now.Add(time.Minute-time.Nanosecond), expired)
	if asked != 2 {
		t.Error("a second sweep within Every ran")
	}
	s.Sweep(dir, ".rec", now.Add(time.Minute), expired)
	if asked != 3 {
		t.Errorf("a sweep Every later asked about %d files, want 1", asked-2)
	}
}

package pack

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/responsecache"
)

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// TestFitStoresAsIsThenCompressedThenRefuses: a body that fits is stored as it is; one that
// fits only compressed is stored compressed and reads back byte for byte; one that fits
// neither way, or is over MaxBody, is ErrTooLarge.
func TestFitStoresAsIsThenCompressedThenRefuses(t *testing.T) {
	text := []byte(strings.Repeat(`{"text":"the same answer, again"},`, 4000))
	for _, tc := range []struct {
		name           string
		body           []byte
		room           int // the body an item holds
		wantCompressed bool
		wantTooLarge   bool
	}{
		{"fits", text, len(text), false, false},
		{"fits compressed", text, len(text) - 1, true, false},
		{"random does not compress", random(10_000), 9_999, false, true},
		{"empty", nil, 0, false, false},
		{"over MaxBody though it compresses", make([]byte, MaxBody+1), MaxBody, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			stored, compressed, err := Fit(tc.body, func(b []byte, _ bool) bool { asked++; return len(b) <= tc.room })
			if tc.wantTooLarge {
				if !errors.Is(err, responsecache.ErrTooLarge) {
					t.Fatalf("err = %v, want ErrTooLarge", err)
				}
				if len(tc.body) > MaxBody && asked != 0 {
					t.Errorf("a body over MaxBody was compressed and offered %d times", asked)
				}
				return
			}
			if err != nil || compressed != tc.wantCompressed {
				t.Fatalf("compressed = %v, err = %v; want compressed = %v", compressed, err, tc.wantCompressed)
			}
			if len(stored) > tc.room {
				t.Errorf("stored %d bytes in a room of %d", len(stored), tc.room)
			}
			got, err := Read(stored, compressed)
			if err != nil || !bytes.Equal(got, tc.body) {
				t.Errorf("Read gave %d bytes, %v; want the body's %d", len(got), err, len(tc.body))
			}
		})
	}
}

// TestReadRefusesWhatIsNotAStoredBody: bytes that are not gzip, and gzip that inflates past
// MaxBody, are errors, never a body.
func TestReadRefusesWhatIsNotAStoredBody(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	_, _ = zw.Write(make([]byte, MaxBody+1))
	_ = zw.Close()
	for name, stored := range map[string][]byte{
		"not gzip":  []byte("{}"),
		"truncated": bomb.Bytes()[:bomb.Len()/2],
		"too large": bomb.Bytes(),
	} {
		if body, err := Read(stored, true); err == nil {
			t.Errorf("%s: read %d bytes", name, len(body))
		}
	}
}

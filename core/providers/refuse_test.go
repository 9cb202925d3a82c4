package providers

import (
	"encoding/base64"
	"testing"
)

// FuzzValidBase64 holds ValidBase64 to what it stands for: a Check that says yes lets the
// builder decode without looking at the error, so it must say yes exactly when
// base64.StdEncoding decodes the data.
func FuzzValidBase64(f *testing.F) {
	for _, s := range []string{
		"", "\n", "aGk=", "aGk", "aGVsbG8=", "aGVsbA==", "aGVsbA=", "aGVsbA===", "====", "a===",
		"aGVs\r\nbG8=", "aGVsbA=\n=", "aGVsbA==\n", "aGVsbA==x", "aG=k", "aGk=aGk=", "aGVs bG8=",
		"aGVsbG8-", "aGVsbG8_", "+/+/", "aGVsbG8hIQ==\n\n", "YWJjZGVmZ2hpamtsbW5vcA==",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := base64.StdEncoding.DecodeString(s)
		if got := ValidBase64(s); got != (err == nil) {
			t.Fatalf("ValidBase64(%q) = %v, but DecodeString says %v", s, got, err)
		}
	})
}

// TestValidBase64AcceptsEncodedImages checks the fast path (eight symbols at a time) against
// every length of real data and of data with a line break or a bad byte at each place.
func TestValidBase64AcceptsEncodedImages(t *testing.T) {
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(i * 37)
	}
	for n := range len(raw) {
		s := base64.StdEncoding.EncodeToString(raw[:n])
		if !ValidBase64(s) {
			t.Fatalf("ValidBase64 refuses the encoding of %d bytes, %q", n, s)
		}
		for i := range len(s) {
			for _, c := range []byte{'\n', '*', '=', '-'} {
				bad := s[:i] + string(c) + s[i:]
				_, err := base64.StdEncoding.DecodeString(bad)
				if got := ValidBase64(bad); got != (err == nil) {
					t.Fatalf("ValidBase64(%q) = %v, DecodeString: %v", bad, got, err)
				}
			}
		}
	}
}

package providers

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// ParseFloat32 answers exactly as strconv.ParseFloat(s, 32): the same float32, bit for bit,
// and a refusal where it refuses, on what upstreams write (Python's shortest float64 of a
// float32, Go's shortest float32, short and long decimals, exponents), on the halfway cases
// its fast path must leave to strconv, and on what is no JSON number.
func TestParseFloat32MatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var in []string
	for _, s := range []string{
		"0", "-0", "0.0", "-0.0", "1", "-1", "0.5", "1e5", "1E5", "1e+5", "1e-5", "2.5e-3", "123456789",
		"0.012299999594688416", "-0.006929283495992422", "3.4028234663852886e38", "3.4028235e+38", "3.5e38",
		"1e39", "1e-39", "1e-45", "1e-46", "1.401298464324817e-45", "1.1754943508222875e-38",
		"9999999999999999999", "99999999999999999999", "1234567890123456789e-22", "0.0000000000000000000001",
		"16777217", "16777219", "33554435", "1.00000005960464477539062500", "1.0000000596046448",
		"0.00000000000000000000000000001", "1e22", "1e23", "1e-22", "1e-23", "4.2e1000", "1e-1000",
		"1e000000000000000000001", "00", "01", "-", "+1", ".5", "1.", "-.5", "1e", "1e+", "--1", "1.2.3",
		"0x1p-2", "inf", "NaN", "Infinity", "1_0", "", "e5", "1e5.0", "12-3", "0.1e1e1",
	} {
		in = append(in, s)
	}
	for range 40000 {
		f := math.Float32frombits(r.Uint32())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		in = append(in, strconv.FormatFloat(float64(f), 'g', -1, 64), strconv.FormatFloat(float64(f), 'g', -1, 32),
			strconv.FormatFloat(float64(f), 'e', r.IntN(20), 64))
		// Embedding-sized values, and halfway points between float32s written out in full.
		g := float32(r.NormFloat64() / 40)
		in = append(in, strconv.FormatFloat(float64(g), 'g', -1, 64), strconv.FormatFloat(float64(g), 'g', -1, 32))
		mid := (float64(g) + float64(math.Nextafter32(g, 1))) / 2
		in = append(in, strconv.FormatFloat(mid, 'g', -1, 64), strconv.FormatFloat(mid, 'e', 18, 64), strconv.FormatFloat(mid, 'e', 15, 64))
		// Any decimal of up to 20 digits, any exponent.
		m := strconv.FormatUint(r.Uint64()>>r.IntN(64), 10)
		in = append(in, m+"e"+strconv.Itoa(r.IntN(100)-60), "-0."+m, m[:1]+"."+m[1:]+"E-"+strconv.Itoa(r.IntN(30)))
	}
	for _, s := range in {
		want, werr := strconv.ParseFloat(s, 32)
		got, err := ParseFloat32([]byte(s))
		if (err == nil) != (werr == nil) || err == nil && math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Fatalf("%q: got %v (%x) %v, strconv %v (%x) %v", s, got, math.Float32bits(got), err, float32(want), math.Float32bits(float32(want)), werr)
		}
		// ScanFloat32 reads the same number where it lies, up to the end of its run of
		// number bytes, whatever follows.
		for _, after := range []string{",0.5", "]", ".5e"} {
			run := 0
			for run < len(s+after) && IsNumberByte((s + after)[run]) {
				run++
			}
			want, werr := strconv.ParseFloat((s + after)[:run], 32)
			got, n, err := ScanFloat32([]byte(s + after))
			if n != run || (err == nil) != (werr == nil) || err == nil && math.Float32bits(got) != math.Float32bits(float32(want)) {
				t.Fatalf("%q: got %v, %d bytes, %v; want %v, %d bytes, %v", s+after, got, n, err, float32(want), run, werr)
			}
		}
	}
}

func FuzzParseFloat32(f *testing.F) {
	for _, s := range []string{"0.012299999594688416", "-1e-5", "1.00000005960464477539062500", "00", "1e39"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := strconv.ParseFloat(s, 32)
		got, err := ParseFloat32([]byte(s))
		if (err == nil) != (werr == nil) || err == nil && math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Fatalf("%q: got %v %v, strconv %v %v", s, got, err, float32(want), werr)
		}
	})
}

// A clean base64 vector is exactly what base64.StdEncoding writes for finite float32s;
// anything DecodeBase64Vector would read differently, or the gateway would refuse, is not.
func TestCleanBase64Vector(t *testing.T) {
	enc := func(v ...float32) string {
		raw := make([]byte, 0, 4*len(v))
		for _, f := range v {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
		return base64.StdEncoding.EncodeToString(raw)
	}
	long := make([]float32, 3072) // several of the pieces it decodes in
	for i := range long {
		long[i] = float32(i) / 7
	}
	for _, tc := range []struct {
		name, in string
		n        int
	}{
		{"one float32 (two of padding)", enc(0.5), 1},
		{"two (one of padding)", enc(0.5, -1), 2},
		{"three (none)", enc(0.5, -1, 1e-45), 3},
		{"a long vector", enc(long...), 3072},
		{"a long vector with a part of one at its end", enc(long...) + "AAAA", -1},
		{"empty", "", -1},
		{"not whole float32s", "AAAAPwAA", -1},
		{"bits set in the padding", "AAAAPx==", -1},
		{"not base64", "not base64!!", -1},
		{"URL alphabet", "_-_-_-_-", -1},
		{"no padding", "AAAAPw", -1},
		{"a line break", enc(0.5, -1)[:4] + "\n" + enc(0.5, -1)[4:], -1},
		{"a line break at the end of a piece", enc(long...)[:2048] + "\r\n" + enc(long...)[2048:], -1},
		{"padding in the middle", enc(0.5) + enc(0.5), -1},
		{"an infinity", enc(0.5, float32(math.Inf(1))), -1},
		{"a NaN in a later piece", enc(append(append([]float32{}, long...), float32(math.NaN()))...), -1},
	} {
		n, ok := CleanBase64Vector([]byte(tc.in))
		if ok != (tc.n >= 0) || ok && n != tc.n {
			t.Errorf("%s: %d %v, want %d", tc.name, n, ok, tc.n)
		}
		if ok {
			if got := Base64VectorLen([]byte(tc.in)); got != tc.n {
				t.Errorf("%s: Base64VectorLen %d, want %d", tc.name, got, tc.n)
			}
			v, err := DecodeBase64Vector([]byte(tc.in))
			if err != nil || enc(v...) != tc.in {
				t.Errorf("%s: not what the gateway would write again: %v", tc.name, err)
			}
		}
	}
}

func BenchmarkParseFloat32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	in := make([][]byte, 1536)
	for i := range in {
		in[i] = []byte(strconv.FormatFloat(float64(float32(r.NormFloat64()/40)), 'g', -1, 64))
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			for _, s := range in {
				_, _ = ParseFloat32(s)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			for _, s := range in {
				_, _ = strconv.ParseFloat(string(s), 32)
			}
		}
	})
}

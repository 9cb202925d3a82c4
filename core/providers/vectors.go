package providers

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// errNotVector is an upstream vector that is not an array of numbers.
var errNotVector = errors.New("an embedding is not an array of numbers")

// ParseVector reads a JSON array of numbers (already checked to be valid JSON, as
// encoding/json checks a json.RawMessage) as float32s. It reads numbers in one pass without
// reflection or a copy of the text (ScanFloat32): a batch of vectors is most of an
// embeddings answer. A number beyond float32's range is an error, never an infinity.
func ParseVector(s []byte) ([]float32, error) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return nil, errNotVector
	}
	out := make([]float32, 0, len(s)/10)
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return out, nil
	}
	for i < len(s) {
		f, n, err := ScanFloat32(s[i:])
		j := i + n
		if n == 0 {
			return nil, errNotVector // a string, an object, a nested array, true, null
		}
		if err != nil {
			return nil, errors.New("an embedding holds " + strconv.Quote(string(s[i:j])) + ", not a float32")
		}
		out = append(out, f)
		i = skipSpace(s, j)
		switch {
		case i < len(s) && s[i] == ',':
			i = skipSpace(s, i+1)
		case i < len(s) && s[i] == ']':
			return out, nil
		default:
			return nil, errNotVector
		}
	}
	return nil, errNotVector
}

// IsNumberByte: the bytes of a JSON number. Valid JSON cannot put NaN or Infinity here.
func IsNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func skipSpace(s []byte, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// ParseFloat32 is strconv.ParseFloat(string(s), 32) exactly, the same float32 and the same
// refusals, at a fraction of its cost on the numbers embeddings are made of. strconv's
// reader is general (hex, underscores, infinities, any length); an upstream writes plain
// JSON numbers of at most 19 significant digits, and fastFloat32 reads those, falling back
// to strconv for anything else and for the rare number it cannot round with certainty.
func ParseFloat32(s []byte) (float32, error) {
	if f, n, ok := fastFloat32(s); ok && n == len(s) {
		return f, nil
	}
	f, err := strconv.ParseFloat(string(s), 32) // does not escape: no allocation
	return float32(f), err
}

// ScanFloat32 reads the number s starts with, the run of bytes IsNumberByte accepts, as
// ParseFloat32 reads it, and returns its length too: a scanner reads each number of a vector
// once rather than finding its end and then parsing it.
func ScanFloat32(s []byte) (f float32, n int, err error) {
	if f, n, ok := fastFloat32(s); ok && (n == len(s) || !IsNumberByte(s[n])) {
		return f, n, nil
	}
	for n < len(s) && IsNumberByte(s[n]) {
		n++
	}
	f64, err := strconv.ParseFloat(string(s[:n]), 32)
	return float32(f64), n, err
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat32 reads the JSON number (-?int(.frac)?([eE][+-]?exp)?) s starts with, of at most
// 19 significant digits and a decimal exponent within float64's exact powers of ten, and
// reports false for anything else. Its float64 approximation m*10^e (or m/10^-e) is within
// two float64 ulps of the number (two roundings of half an ulp each, none when m < 2^53);
// the float32 nearest the number is the float32 nearest the approximation unless a float32
// halfway point lies between them, and those lie exactly where the float64's low 29 bits
// (the bits a float32 drops) are 1<<28. So when those bits are more than 4 ulps from 1<<28
// the conversion float32(f), itself round-to-nearest-even, is exactly strconv's answer;
// otherwise strconv decides. The range is kept to float32's normal numbers, far from its
// overflow: 1e-22 at the least and below 2^127.
func fastFloat32(s []byte) (float32, int, bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		neg, i = true, 1
	}
	var mant uint64
	nd, exp := 0, 0 // significant digits read into mant; the power of ten they are scaled by
	if i < len(s) && s[i] == '0' {
		i++ // JSON allows one zero before the point, no more
	} else {
		start := i
		for ; i < len(s) && s[i]-'0' <= 9; i++ { // the first is not 0: all are significant
			if nd == 19 {
				return 0, 0, false
			}
			mant = mant*10 + uint64(s[i]-'0')
			nd++
		}
		if i == start {
			return 0, 0, false
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for ; i < len(s) && s[i]-'0' <= 9; i++ {
			c := s[i] - '0'
			exp--
			if mant == 0 && c == 0 {
				continue // a leading zero, not significant
			}
			if nd == 19 {
				return 0, 0, false
			}
			mant = mant*10 + uint64(c)
			nd++
		}
		if i == start {
			return 0, 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg, i = s[i] == '-', i+1
		}
		start, e := i, 0
		for ; i < len(s) && s[i]-'0' <= 9; i++ {
			if e > 1000 {
				return 0, 0, false
			}
			e = e*10 + int(s[i]-'0')
		}
		if i == start {
			return 0, 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant == 0 {
		if neg {
			return float32(math.Copysign(0, -1)), i, true
		}
		return 0, i, true
	}
	if exp < -22 || exp > 22 {
		return 0, 0, false
	}
	f := float64(mant)
	if exp < 0 {
		f /= pow10[-exp]
	} else {
		f *= pow10[exp]
	}
	if f >= 1<<127 {
		return 0, 0, false
	}
	if low := int64(math.Float64bits(f) & (1<<29 - 1)); low-1<<28 <= 4 && 1<<28-low <= 4 {
		return 0, 0, false
	}
	if neg {
		f = -f
	}
	return float32(f), i, true
}

// DecodeBase64Vector reads OpenAI's base64 encoding of a vector: its float32s, little-endian,
// in standard base64.
func DecodeBase64Vector(s []byte) ([]float32, error) {
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(raw, s)
	if err != nil {
		return nil, errors.New("an embedding is not base64: " + err.Error())
	}
	// Go's decoder skips CR and LF, even when strict; a JSON string holds neither, and an
	// answer that has them is not OpenAI's encoding: every byte must have been read.
	if base64.StdEncoding.EncodedLen(n) != len(s) {
		return nil, errors.New("an embedding is not base64: it holds line breaks")
	}
	if n%4 != 0 {
		return nil, errors.New("a base64 embedding of " + strconv.Itoa(n) + " bytes is not a whole number of float32s")
	}
	out := make([]float32, n/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// strict64 is standard base64 refusing set padding bits: the one encoding of each vector.
var strict64 = base64.StdEncoding.Strict()

// CleanBase64Vector reports whether s is a vector in OpenAI's base64 exactly as
// base64.StdEncoding writes it (padded, no line breaks, no bits set in the padding), of a
// whole number of float32s, every one finite, and how many there are. Such a string is what
// the gateway would write for the float32s it holds, so a client asking for base64 can be
// given it as it came, without decoding it into a vector and encoding it again. It decodes
// in pieces into the stack: checking allocates nothing.
func CleanBase64Vector(s []byte) (n int, ok bool) {
	if len(s) == 0 || len(s)%4 != 0 {
		return 0, false
	}
	var buf [3 * 512]byte
	total := 0
	for len(s) > 0 {
		piece := s[:min(len(s), 4*512)]
		s = s[len(piece):]
		m, err := strict64.Decode(buf[:], piece)
		// A skipped line break reads fewer bytes than the piece holds. A whole piece is 384
		// float32s, so padding anywhere but at the very end leaves a part of one.
		if err != nil || base64.StdEncoding.EncodedLen(m) != len(piece) || m%4 != 0 {
			return 0, false
		}
		for j := 0; j < m; j += 4 {
			if binary.LittleEndian.Uint32(buf[j:])&0x7f800000 == 0x7f800000 {
				return 0, false // an infinity or NaN: the gateway refuses it
			}
		}
		total += m
	}
	return total / 4, true
}

// Base64VectorLen is the number of float32s in s, a vector CleanBase64Vector accepted.
func Base64VectorLen(s []byte) int {
	n := len(s) / 4 * 3
	for i := len(s) - 1; i >= 0 && s[i] == '='; i-- {
		n--
	}
	return n / 4
}

// AppendBase64Vector appends the float32s of s, OpenAI's base64, to dst, decoding in pieces
// into the stack rather than into a buffer of its own. It reports false for anything
// DecodeBase64Vector would not read plainly (an error, a line break, a part of a float32),
// for the caller to learn why from it: the fast path reads the same numbers, never others.
func AppendBase64Vector(dst []float32, s []byte) ([]float32, bool) {
	if len(s)%4 != 0 {
		return dst, false
	}
	var buf [3 * 512]byte
	for len(s) > 0 {
		piece := s[:min(len(s), 4*512)]
		s = s[len(piece):]
		m, err := base64.StdEncoding.Decode(buf[:], piece)
		if err != nil || base64.StdEncoding.EncodedLen(m) != len(piece) || m%4 != 0 {
			return dst, false
		}
		for j := 0; j < m; j += 4 {
			dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(buf[j:])))
		}
	}
	return dst, true
}

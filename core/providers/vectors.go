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
// reflection: a batch of vectors is most of an embeddings answer. A number beyond float32's
// range is an error, never an infinity.
func ParseVector(raw []byte) ([]float32, error) {
	s := string(raw) // one copy, so that numbers parse as substrings without more
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
		j := i
		for j < len(s) && isNumberByte(s[j]) {
			j++
		}
		if j == i {
			return nil, errNotVector // a string, an object, a nested array, true, null
		}
		f, err := strconv.ParseFloat(s[i:j], 32)
		if err != nil {
			return nil, errors.New("an embedding holds " + strconv.Quote(s[i:j]) + ", not a float32")
		}
		out = append(out, float32(f))
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

// isNumberByte: the bytes of a JSON number. Valid JSON cannot put NaN or Infinity here.
func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
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

// Package record is what the cloud stores share: the key a response is stored under, the
// compressed body that carries its input and response, and how a body too large for one
// item is cut into parts.
package record

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// Key is the one string a response is stored under: owner and id each query-escaped (so
// neither holds ':' or '/'), joined by ':'. No two (owner, id) pairs share a key, and the key
// is a valid Firestore document id: no '/', never "." or ".." (it holds a ':'), and never
// __.*__: a leading '_' is written %5F, which query escaping never produces itself.
func Key(owner, id string) string {
	k := url.QueryEscape(owner) + ":" + url.QueryEscape(id)
	if strings.HasPrefix(k, "_") {
		k = "%5F" + k[1:]
	}
	return k
}

// PartKey is the key of part i of a body written as generation gen under key. A Key never
// holds '#' (query escaping writes it %23), so no part key is another response's key.
func PartKey(key, gen string, i int) string { return key + "#" + gen + "#" + strconv.Itoa(i) }

// Generation returns a fresh name for one write of a body in parts. Parts are written
// first, each on its own, and the head that names their generation last; they are never
// rewritten. So a reader, which finds parts only through a head, sees a whole body or none:
// a replace writes a new generation and repoints the head, and a reader holding the old head
// still finds the old parts.
func Generation() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// MaxBody is the largest compressed body a store with parts keeps: about 20 MB of
// conversation text at the third or so gzip leaves of recorded agent conversations, more
// than a model's context holds but for inline images.
const MaxBody = 8 << 20

// Each runs f(0) .. f(n-1), at most limit at a time, and returns the first error.
func Each(n, limit int, f func(i int) error) error {
	sem := make(chan struct{}, limit)
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- f(i)
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Split cuts body into parts of at most size bytes.
func Split(body []byte, size int) [][]byte {
	var parts [][]byte
	for len(body) > size {
		parts = append(parts, body[:size])
		body = body[size:]
	}
	return append(parts, body)
}

// version starts every body, so a later layout can be told apart.
const version = 1

// maxBody bounds what Unpack inflates: more than any store holds, less than a runaway.
const maxBody = 256 << 20

// Pack compresses a response's input and response into one value. Both come back byte for
// byte: the layout is a version byte, the input's length and the two byte strings, not a JSON
// document (re-encoding JSON would compact it and escape HTML characters).
func Pack(input, response []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	head := binary.AppendUvarint([]byte{version}, uint64(len(input)))
	for _, p := range [][]byte{head, input, response} {
		if _, err := zw.Write(p); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unpack reverses Pack. An empty input or response comes back nil.
func Unpack(body []byte) (input, response []byte, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("stored body: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("stored body: %w", err)
	}
	if len(raw) > maxBody {
		return nil, nil, errors.New("stored body: inflates past 256 MiB")
	}
	if len(raw) == 0 || raw[0] != version {
		return nil, nil, errors.New("stored body: unknown layout")
	}
	n, used := binary.Uvarint(raw[1:])
	rest := raw[1+max(used, 0):]
	if used <= 0 || n > uint64(len(rest)) {
		return nil, nil, errors.New("stored body: truncated")
	}
	return nonEmpty(rest[:n]), nonEmpty(rest[n:]), nil
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Package record is what the cloud stores share: the key a response is stored under, and the
// compressed body that carries its input and response.
package record

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
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

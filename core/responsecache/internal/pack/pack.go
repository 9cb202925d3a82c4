// Package pack is how the cloud stores (DynamoDB, Firestore) fit an entry's body in their
// one item: as it is when it fits, else gzip-compressed (recorded answers are JSON, which
// gzip takes to a fifth or less), else not at all: ErrTooLarge, before any call.
package pack

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/fngate/fngate/core/responsecache"
)

// MaxBody is the largest body a cloud store takes, before compression, and what a stored
// body may inflate to: far more than the longest answer a model writes, recorded as a
// stream, and a bound on what a damaged or foreign item can make a reader allocate.
const MaxBody = 16 << 20

// Fit returns body as one item holds it. fits reports whether the item holds a body as
// stored (compressed or not); Fit asks it about body itself first, then about body
// compressed, and returns the first that fits with whether it is compressed. A body over
// MaxBody, or that fits neither way, is ErrTooLarge.
func Fit(body []byte, fits func(stored []byte, compressed bool) bool) (stored []byte, compressed bool, err error) {
	if len(body) > MaxBody {
		return nil, false, fmt.Errorf("%w: a body of %d bytes, over the %d a store takes", responsecache.ErrTooLarge, len(body), MaxBody)
	}
	if fits(body, false) {
		return body, false, nil
	}
	z, err := compress(body)
	if err != nil {
		return nil, false, err
	}
	if fits(z, true) {
		return z, true, nil
	}
	return nil, false, fmt.Errorf("%w: a body of %d bytes, %d compressed, does not fit one item", responsecache.ErrTooLarge, len(body), len(z))
}

func compress(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Read returns the body a stored value holds: the value itself, or, compressed, what it
// inflates to (at most MaxBody).
func Read(stored []byte, compressed bool) ([]byte, error) {
	if !compressed {
		return stored, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(stored))
	if err != nil {
		return nil, fmt.Errorf("compressed body: %w", err)
	}
	body, err := io.ReadAll(io.LimitReader(zr, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("compressed body: %w", err)
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("compressed body: inflates past %d bytes", MaxBody)
	}
	return body, nil
}

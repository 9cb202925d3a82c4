package upstreamhttp

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// errBodyClosed is a read of a body after its Close, as net/http says it.
var errBodyClosed = errors.New("http: read on closed response body")

// body is a response's body on its connection. Read to its end, it gives the connection back
// for the next request (unless the response or request closes it); closed before its end, it
// closes the connection, since what is left of the response would be read as the next one's.
// Close may come from another goroutine than Read, as with net/http's bodies.
type body struct {
	c     *conn
	r     io.ReadCloser // net/http's reader of the body's framing (length, chunks)
	close bool          // the connection ends with this response

	once   sync.Once
	closed atomic.Bool
	err    error // the reader's: the end, or what failed
}

func (b *body) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errBodyClosed
	}
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	switch {
	case err == io.EOF:
		b.end(!b.close)
	case err != nil:
		b.end(false)
		if b.closed.Load() {
			err = errBodyClosed
		} else if ctx := b.c.ctx; ctx.Err() != nil {
			err = context.Cause(ctx) // the context's end is what cut the read
		}
	}
	b.err = err
	return n, err
}

func (b *body) Close() error {
	b.closed.Store(true)
	b.end(false)
	return nil
}

// end hands the connection back once: reusable is the body read to its end.
func (b *body) end(reusable bool) {
	b.once.Do(func() { b.c.finish(reusable) })
}

package upstreamhttp

import (
	"bufio"
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"syscall"
	"time"
)

// readBufferSize is a connection's read buffer: an SSE event or a JSON answer's header fits,
// and a thousand open streams hold 4 MB of it.
const readBufferSize = 4 << 10

// writers are the buffers requests are written through, shared: a connection needs one only
// while it writes a request, and a stream holds its connection for minutes.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

// conn is one connection to an upstream host.
type conn struct {
	t    *Transport
	key  hostKey
	nc   net.Conn // what requests are written to: the TLS connection for https
	raw  net.Conn // the TCP connection under it, whose state is checked before reuse
	lr   limitReader
	br   *bufio.Reader
	idle time.Time // when it was last given back

	// reused is a connection that carried a request before this one; nothingRead that no
	// byte of this request's response has come. Together they are a connection the server
	// closed while it was idle, whose request can go again on a new one.
	reused      bool
	nothingRead bool
	// ctx is the request's context; stop unregisters the request's cancellation; it reports false when the request's
	// context ended first, which has cut the connection.
	ctx  context.Context
	stop func() bool
}

func newConn(t *Transport, key hostKey, nc, raw net.Conn) *conn {
	c := &conn{t: t, key: key, nc: nc, raw: raw}
	c.lr = limitReader{c: c, n: math.MaxInt64}
	c.br = bufio.NewReaderSize(&c.lr, readBufferSize)
	return c
}

// roundTrip writes req on the connection and reads its response's header. On an error the
// connection is closed.
func (c *conn) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	c.ctx, c.nothingRead = ctx, true
	// A context that ends (the gateway's first-byte, idle and total limits, the client gone)
	// cuts the connection's reads and writes where they are; the connection is not reused.
	c.stop = context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	if err := c.write(req); err != nil {
		return nil, c.fail(ctx, err)
	}
	c.lr.n = c.t.opt.MaxHeaderBytes
	resp, err := c.readHeader(req)
	c.lr.n = math.MaxInt64
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	resp.Body = &body{c: c, r: resp.Body, close: resp.Close || req.Close}
	return resp, nil
}

// write writes req through a shared buffer. A body larger than what is left of the buffer
// goes to the connection straight after the header: one write, not one per buffer.
func (c *conn) write(req *http.Request) error {
	w := writers.Get().(*bufio.Writer)
	w.Reset(c.nc)
	defer func() {
		w.Reset(nil)
		writers.Put(w)
	}()
	body, chunked, err := writeHead(w, req)
	if body != nil {
		defer body.Close()
	}
	switch {
	case err != nil:
		return err
	case body == nil:
	case chunked:
		err = writeChunked(w, body)
	case req.ContentLength <= int64(w.Available()):
		err = copyBody(w, body, req.ContentLength)
	default:
		if err = w.Flush(); err == nil {
			err = copyBody(c.nc, body, req.ContentLength)
		}
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

// readHeader reads the response's status line and header, past any informational (1xx)
// responses.
func (c *conn) readHeader(req *http.Request) (*http.Response, error) {
	for {
		if _, err := c.br.Peek(1); err != nil {
			return nil, err
		}
		if c.nothingRead {
			c.nothingRead = false
			if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.GotFirstResponseByte != nil {
				tr.GotFirstResponseByte() // the gateway's first-byte limit ends here
			}
		}
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			if resp.StatusCode == http.StatusSwitchingProtocols {
				resp.Body.Close()
				return nil, errors.New("upstreamhttp: the upstream switched protocols, which no upstream call asks for")
			}
			return resp, nil
		}
		resp.Body.Close()
	}
}

// fail closes the connection after err and says why it failed: the context's cause when the
// context ended (its deadline is what cut the read).
func (c *conn) fail(ctx context.Context, err error) error {
	c.stop()
	c.close()
	if errors.Is(err, errHeaderTooLarge) {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// finish ends the connection's request: reusable is a response read to its end on a
// connection that may carry another.
func (c *conn) finish(reusable bool) {
	if !c.stop() || !reusable {
		c.close()
		return
	}
	c.t.put(c)
}

func (c *conn) close() { c.nc.Close() }

// alive reports whether the server has not closed the idle connection: nothing is waiting to
// be read on it (an idle HTTP/1.1 connection gets nothing but its close; on TLS, a record
// could also be a late session ticket, which costs only this connection), peeked without
// blocking.
func (c *conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.raw.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var buf [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	}); err != nil {
		return false
	}
	return alive
}

// aLongTimeAgo is a deadline that has passed: setting it ends a connection's reads and writes.
var aLongTimeAgo = time.Unix(1, 0)

// limitReader reads the connection for the buffered reader, at most n bytes when n is set:
// the bound on a response's header.
type limitReader struct {
	c *conn
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.c.nc.Read(p)
	if l.n != math.MaxInt64 {
		l.n -= int64(n)
	}
	return n, err
}

// isReset reports whether err is the peer resetting or having closed the connection.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

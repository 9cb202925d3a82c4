// Package upstreamhttp is the gateway's client for its upstreams: an http.RoundTripper that
// does the one thing the gateway asks of HTTP, requests to a few hosts over HTTP/1.1 on kept
// connections, in the caller's goroutine.
//
// net/http's Transport runs two goroutines per connection (its read and write loops) and
// hands every request and response between them and the caller over channels; for a gateway
// holding a thousand open streams that is two thousand goroutines and their stacks, and every
// request pays the hand-offs. Here the caller writes the request and reads the response on
// the connection itself, and a connection sits in its host's idle stack between requests.
//
//	transport.go  the RoundTripper: the request written, the response read, one retry on a
//	              connection the server had closed
//	pool.go       the idle connections of each host: last in first out, expired lazily,
//	              checked before reuse
//	conn.go       a connection: its buffers, the bound on a response's header, cancellation
//	body.go       a response's body, which gives its connection back at its end
//
// What it leaves to net/http's Transport (Options.Fallback): requests through a proxy from
// the environment (HTTPS_PROXY, HTTP_PROXY), and schemes other than http and https. Upstream
// APIs all speak HTTP/1.1, so HTTP/2 is not offered: one stream per connection is what the
// gateway's load is anyway, and a stream never waits behind another's flow control.
package upstreamhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"
)

// Options configure a Transport; the zero value is usable.
type Options struct {
	// ConnectTimeout bounds the dial and the TLS handshake of a new connection.
	ConnectTimeout time.Duration
	// IdleTimeout is how long a connection may wait for its next request.
	IdleTimeout time.Duration
	// MaxIdlePerHost bounds the connections kept per host between requests.
	MaxIdlePerHost int
	// MaxHeaderBytes bounds a response's status line and header: an upstream is untrusted.
	MaxHeaderBytes int64
	// TLS is the TLS configuration to start from (its ServerName and NextProtos are set per
	// host); nil is the system's roots and TLS 1.2 at least.
	TLS *tls.Config
	// Fallback carries what this Transport does not: requests through a proxy and other
	// schemes. Nil is a net/http Transport with the proxy from the environment.
	Fallback http.RoundTripper
}

// Defaults of Options.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultIdleTimeout    = 90 * time.Second
	DefaultMaxIdlePerHost = 256
	DefaultMaxHeaderBytes = 1 << 20
)

// Transport is an http.RoundTripper for HTTP/1.1 upstreams. It is safe for concurrent use.
type Transport struct {
	opt    Options
	dialer net.Dialer
	// proxied reports whether a request goes through a proxy (and so to Fallback); nil when
	// the environment names none, which is the usual case and costs nothing per request.
	proxied  func(*http.Request) bool
	fallback func() http.RoundTripper

	mu    sync.Mutex
	hosts map[hostKey]*idle
}

// New returns a Transport with opt's settings.
func New(opt Options) *Transport {
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = DefaultConnectTimeout
	}
	if opt.IdleTimeout <= 0 {
		opt.IdleTimeout = DefaultIdleTimeout
	}
	if opt.MaxIdlePerHost <= 0 {
		opt.MaxIdlePerHost = DefaultMaxIdlePerHost
	}
	if opt.MaxHeaderBytes <= 0 {
		opt.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	t := &Transport{opt: opt, dialer: net.Dialer{Timeout: opt.ConnectTimeout, KeepAlive: 30 * time.Second}, hosts: map[hostKey]*idle{}}
	fb := opt.Fallback
	t.fallback = sync.OnceValue(func() http.RoundTripper {
		if fb != nil {
			return fb
		}
		return &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: t.dialer.DialContext, TLSClientConfig: opt.TLS,
			TLSHandshakeTimeout: opt.ConnectTimeout, IdleConnTimeout: opt.IdleTimeout, MaxIdleConnsPerHost: opt.MaxIdlePerHost,
			DisableCompression: true, ForceAttemptHTTP2: true}
	})
	if proxyInEnvironment() {
		t.proxied = func(r *http.Request) bool {
			u, err := http.ProxyFromEnvironment(r)
			return err != nil || u != nil
		}
	}
	return t
}

// proxyInEnvironment reports whether the environment names a proxy for http or https.
func proxyInEnvironment() bool {
	for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		if os.Getenv(name) != "" {
			return true
		}
	}
	return false
}

// hostKey names the connections that can carry a request: its scheme and address.
type hostKey struct {
	tls  bool
	addr string // host:port
}

var (
	errHeaderTooLarge = errors.New("upstreamhttp: the response's header is larger than the limit")
	errBadHeader      = errors.New("upstreamhttp: a request header has a character HTTP does not allow")
)

// RoundTrip sends req and returns the response's header; its body is read from the
// connection as the caller reads it, and the connection goes back to its host's idle
// connections at the body's end.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if u == nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || t.proxied != nil && t.proxied(req) {
		return t.fallback().RoundTrip(req)
	}
	if err := checkRequest(req); err != nil {
		closeBody(req)
		return nil, err
	}
	key := hostKey{tls: u.Scheme == "https", addr: canonicalAddr(u)}
	for retried := false; ; retried = true {
		c, err := t.conn(req.Context(), key, u.Hostname())
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := c.roundTrip(req)
		if err == nil {
			return resp, nil
		}
		if retried || !c.reused || !c.nothingRead || !replayable(req, err) {
			closeBody(req)
			return nil, err
		}
		// The server had closed a kept connection as the request went out (its idle
		// timeout): it never read the request, so it is sent again on a new connection.
		body, gerr := rewind(req)
		if gerr != nil {
			return nil, err
		}
		req = body
	}
}

// CloseIdleConnections closes the connections waiting for a request.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	hosts := t.hosts
	t.hosts = map[hostKey]*idle{}
	t.mu.Unlock()
	for _, h := range hosts {
		h.closeAll()
	}
	if t.opt.Fallback != nil {
		if c, ok := t.opt.Fallback.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// conn returns a kept connection to key that is still open, or a new one.
func (t *Transport) conn(ctx context.Context, key hostKey, host string) (*conn, error) {
	if c := t.take(key); c != nil {
		return c, nil
	}
	return t.dial(ctx, key, host)
}

// dial opens a connection to key, with TLS for https.
func (t *Transport) dial(ctx context.Context, key hostKey, host string) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, t.opt.ConnectTimeout)
	defer cancel()
	raw, err := t.dialer.DialContext(ctx, "tcp", key.addr)
	if err != nil {
		return nil, err
	}
	nc := raw
	if key.tls {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if t.opt.TLS != nil {
			cfg = t.opt.TLS.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		nc = tc
	}
	return newConn(t, key, nc, raw), nil
}

// canonicalAddr is u's host and port, the scheme's port when u names none.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// replayable reports whether req may be sent again after err: its body can be had again
// and err is a connection the server closed, not an answer or a timeout.
func replayable(req *http.Request, err error) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if req.Context().Err() != nil {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err)
}

// rewind returns req with its body from the start.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return &r, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

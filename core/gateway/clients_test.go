package gateway_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/gatewaytest"
)

// Clients that misbehave on purpose: they trickle their bodies, stall them, compress them or
// never read their answers. None may hold on to the gateway's capacity.

// serveLikeLocal serves the gateway on loopback with the http.Server settings of
// functions/local (a header timeout and no other), so the gateway's own limits are what the
// tests see. wrap, when set, wraps the listener.
func serveLikeLocal(t *testing.T, g *testGateway, wrap func(net.Listener) net.Listener) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(g.Gateway)
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.Config.IdleTimeout = 2 * time.Minute
	if wrap != nil {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// trickler is a raw HTTP/1.1 client that sends a chat request's headers and then its body a
// byte at a time.
type trickler struct {
	conn net.Conn
	br   *bufio.Reader
	stop chan struct{}
	wg   sync.WaitGroup
}

// startTrickle announces a body of length bytes with Expect: 100-continue and waits for the
// server's 100 Continue, which net/http sends once the handler starts reading the body; it
// then sends one byte of it every interval (never, when interval is 0) until the test ends.
func startTrickle(t *testing.T, url string, length int, interval time.Duration) *trickler {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	tr := &trickler{conn: conn, br: bufio.NewReader(conn), stop: make(chan struct{})}
	t.Cleanup(func() {
		close(tr.stop)
		conn.Close()
		tr.wg.Wait()
	})
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", length)
	// A bound so that a gateway that never reads fails the test instead of hanging it.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(tr.br, nil)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("no 100 Continue: %v %v", resp, err)
	}
	if interval > 0 {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for range length {
				select {
				case <-tr.stop:
					return
				case <-tick.C:
				}
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}()
	}
	return tr
}

// answer reads the final response, within a bound.
func (tr *trickler) answer(t *testing.T) (*http.Response, []byte) {
	t.Helper()
	_ = tr.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(tr.br, nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// Clients that send their bodies a byte at a time hold no in-flight slot while they do, so
// as many of them as there are slots do not turn anyone else away.
func TestTricklingClientsHoldNoSlot(t *testing.T) {
	g := newGateway(t, `
limits: {max_in_flight: 2, body_read_timeout: 1m}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`)
	url := serveLikeLocal(t, g, nil)
	for range 2 {
		startTrickle(t, url, 1000, 50*time.Millisecond)
	}
	for i := range 3 {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d beside the trickling clients: %d %s", i, resp.StatusCode, b)
		}
	}
}

// A body that does not arrive within body_read_timeout gets a 408 in the OpenAI shape, and
// the connection, which may still carry the rest of it, is closed.
func TestSlowBodyTimesOut(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
	}{
		{"trickled", 20 * time.Millisecond},
		{"stalled", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, `
limits: {body_read_timeout: 200ms}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`)
			tr := startTrickle(t, serveLikeLocal(t, g, nil), 100000, tc.interval)
			resp, body := tr.answer(t)
			r := &gatewaytest.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
			if r.Status != http.StatusRequestTimeout || r.ErrorObject(t)["code"] != "request_timeout" {
				t.Fatalf("%d %s", r.Status, body)
			}
			if !resp.Close {
				t.Error("the connection is kept open after an unread body")
			}
			if lines := g.logs.WaitLines(t, "request", 1); len(lines) != 1 || lines[0]["status"] != float64(408) {
				t.Errorf("request lines: %v", lines)
			}
		})
	}
}

// Behind a writer that takes no read deadline (not net/http's), a timer still bounds the
// read.
func TestSlowBodyTimesOutWithoutConnectionDeadlines(t *testing.T) {
	g := newGateway(t, `
limits: {body_read_timeout: 100ms}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"model":"m",`)) }() // and then nothing
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", pr)
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.Gateway.ServeHTTP(rec, req)
	}()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway is still waiting for the body")
	}
	r := &gatewaytest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if r.Status != http.StatusRequestTimeout || r.ErrorObject(t)["code"] != "request_timeout" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

// A compressed body is refused for what it is, with the coding the gateway accepts, rather
// than read as broken JSON.
func TestCompressedBodyRefused(t *testing.T) {
	g := newGateway(t, `
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`)
	plain := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(plain))
	_ = zw.Close()
	for _, tc := range []struct {
		encoding, body string
		status         int
	}{
		{"gzip", gz.String(), 415},
		{"br", plain, 415},
		{"identity, gzip", gz.String(), 415},
		{"x-" + strings.Repeat("long", 20), plain, 415},
		{"identity", plain, 200},
		{"IDENTITY", plain, 200},
	} {
		r := g.Chat(t, tc.body, "Content-Encoding", tc.encoding)
		if r.Status != tc.status {
			t.Errorf("Content-Encoding %s: %d %s", tc.encoding, r.Status, r.Body)
			continue
		}
		if tc.status == 200 {
			continue
		}
		e := r.ErrorObject(t)
		if e["code"] != "unsupported_content_encoding" || e["type"] != "invalid_request_error" || r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Content-Encoding %s: %v %v", tc.encoding, r.Header, e)
		}
		if tc.encoding == "gzip" && !strings.Contains(e["message"].(string), "gzip") {
			t.Errorf("the refusal does not name the coding: %v", e["message"])
		}
	}
}

// smallBuffers shrinks the send buffer of every accepted connection, so that a client that
// does not read blocks the gateway's writes after a few kilobytes rather than megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// A stream whose client never reads blocks the gateway's writes once the TCP window is
// full. total must still end the attempt and free its slot.
func TestStreamToClientThatNeverReadsEndsAtTotal(t *testing.T) {
	g := newGateway(t, `
limits: {max_in_flight: 1}
timeouts: {total: 2s}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`)
	url := serveLikeLocal(t, g, func(l net.Listener) net.Listener { return smallBuffers{l} })
	// The echo of two megabytes of words, far beyond what the socket buffers hold.
	long := strings.TrimSpace(strings.Repeat(strings.Repeat("w", 500)+" ", 4000))
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + long + `"}]}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// The headers, which prove the stream holds the one slot; then the client reads no more.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 64), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the stream did not start: %v %v", resp, err)
	}

	waitFor(t, func() bool {
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == 200
	}, "the slot of a stream whose client never reads was not freed after total")
	attempts := g.logs.Attempts(t, 2)
	var stream map[string]any
	for _, a := range attempts {
		if a["stream"] == true {
			stream = a
		}
	}
	if stream == nil || stream["outcome"] != "client_closed" && stream["error_class"] != "timeout" {
		t.Errorf("the stream's attempt: %v", stream)
	}
}

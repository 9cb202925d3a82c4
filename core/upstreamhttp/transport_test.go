package upstreamhttp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer is an httptest server that counts the connections it was opened.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s, &conns
}

func do(t *testing.T, tr http.RoundTripper, method, url, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return resp, string(b)
}

// TestRequestsAndAnswers: what a request carries arrives, each framing of an answer is read,
// and sequential requests share one connection.
func TestRequestsAndAnswers(t *testing.T) {
	s, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/chunked":
			w.Write([]byte("one,"))
			w.(http.Flusher).Flush()
			w.Write([]byte("two"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			fmt.Fprintf(w, "%s %s?%s host=%s len=%d te=%v x=%s body=%s", r.Method, r.URL.Path, r.URL.RawQuery, r.Host,
				r.ContentLength, r.TransferEncoding, r.Header.Get("X-Test"), b)
		}
	})
	tr := New(Options{})
	big := strings.Repeat("b", 100<<10)
	tests := []struct {
		name, method, path, body, want string
		status                         int
	}{
		{"get", "GET", "/a?q=1", "", "GET /a?q=1 host=" + s.Listener.Addr().String() + " len=0 te=[] x=v body=", 200},
		{"post", "POST", "/b", `{"x":1}`, "POST /b? host=" + s.Listener.Addr().String() + ` len=7 te=[] x=v body={"x":1}`, 200},
		{"post larger than the write buffer", "POST", "/c", big, "POST /c? host=" + s.Listener.Addr().String() + " len=102400 te=[] x=v body=" + big, 200},
		{"post empty", "POST", "/d", "", "POST /d? host=" + s.Listener.Addr().String() + " len=0 te=[] x=v body=", 200},
		{"chunked answer", "GET", "/chunked", "", "one,two", 200},
		{"no content", "GET", "/empty", "", "", 204},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rd io.Reader
			if tc.body != "" {
				rd = strings.NewReader(tc.body)
			}
			req, _ := http.NewRequest(tc.method, s.URL+tc.path, rd)
			req.Header.Set("X-Test", "v")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || string(b) != tc.want {
				t.Errorf("got %d %.200q, want %d %.200q", resp.StatusCode, b, tc.status, tc.want)
			}
		})
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for %d requests in a row, want 1", n, len(tests))
	}
}

// TestBodyOfUnknownLength is sent in chunks.
func TestBodyOfUnknownLength(t *testing.T) {
	s, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%v %s", r.TransferEncoding, b)
	})
	req, _ := http.NewRequest("POST", s.URL, io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")))
	req.ContentLength = -1
	resp, err := New(Options{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "[chunked] abcd" {
		t.Errorf("got %q", b)
	}
}

// TestStreamArrivesAsItIsSent: a stream's events are read as the upstream flushes them, not
// at its end.
func TestStreamArrivesAsItIsSent(t *testing.T) {
	next := make(chan struct{})
	s, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			<-next
		}
	})
	req, _ := http.NewRequest("POST", s.URL, strings.NewReader("{}"))
	resp, err := New(Options{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("data: %d\n", i) {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		br.ReadString('\n')
		next <- struct{}{}
	}
}

// rawServer answers each connection with serve, one goroutine per connection: a server
// whose behaviour on the wire the test decides.
func rawServer(t *testing.T, serve func(n int, c net.Conn)) (url string, conns *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = &atomic.Int64{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close() // those the transport keeps idle
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			n := int(conns.Add(1))
			wg.Go(func() {
				defer c.Close()
				serve(n, c)
			})
		}
	})
	return "http://" + ln.Addr().String(), conns
}

// readRequest reads one request and its body from br.
func readRequest(br *bufio.Reader) (*http.Request, string, error) {
	r, err := http.ReadRequest(br)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(r.Body)
	return r, string(b), err
}

const okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// TestKeptConnectionTheServerClosed: a connection the server closed while idle is not used
// again, and a request sent on one the server closed as it arrived is sent again on a new
// connection, whole; one that cannot be sent again is not.
func TestKeptConnectionTheServerClosed(t *testing.T) {
	t.Run("closed while idle", func(t *testing.T) {
		url, conns := rawServer(t, func(_ int, c net.Conn) {
			br := bufio.NewReader(c)
			if _, _, err := readRequest(br); err == nil {
				io.WriteString(c, okAnswer)
			}
		})
		tr := New(Options{})
		for range 3 {
			if _, b := do(t, tr, "POST", url, "{}"); b != "ok" {
				t.Fatalf("got %q", b)
			}
			time.Sleep(20 * time.Millisecond) // the server's close reaches the idle connection
		}
		if n := conns.Load(); n != 3 {
			t.Errorf("%d connections, want 3 (each closed by the server after its answer)", n)
		}
	})
	var bodies sync.Map
	closesOnSecond := func(n int, c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			_, body, err := readRequest(br)
			if err != nil {
				return
			}
			bodies.Store(fmt.Sprint(n, "/", i), body)
			if n == 1 && i == 1 {
				return // read the second request, then closed without an answer
			}
			io.WriteString(c, okAnswer)
		}
	}
	t.Run("closed as the request arrived", func(t *testing.T) {
		url, conns := rawServer(t, closesOnSecond)
		tr := New(Options{})
		do(t, tr, "POST", url, "first")
		if _, b := do(t, tr, "POST", url, "second"); b != "ok" {
			t.Fatalf("got %q", b)
		}
		if n := conns.Load(); n != 2 {
			t.Errorf("%d connections, want 2", n)
		}
		if v, _ := bodies.Load("2/0"); v != "second" {
			t.Errorf("the request sent again carried %q", v)
		}
	})
	t.Run("a body that cannot be read again", func(t *testing.T) {
		url, _ := rawServer(t, closesOnSecond)
		tr := New(Options{})
		do(t, tr, "POST", url, "first")
		req, _ := http.NewRequest("POST", url, io.NopCloser(strings.NewReader("second")))
		req.ContentLength = 6
		if _, err := tr.RoundTrip(req); err == nil {
			t.Error("a request whose body cannot be had again was sent again")
		}
	})
}

// TestUpstreamIsUntrusted: a header past the bound, a response cut short and a malformed one
// are errors, not hangs or panics.
func TestUpstreamIsUntrusted(t *testing.T) {
	tests := []struct {
		name, answer string
		wantErr      bool // at RoundTrip; else at the body's read
	}{
		{"header past the bound", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", true},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", true},
		{"closed before the header", "", true},
		{"body shorter than its length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false},
		{"switching protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := rawServer(t, func(_ int, c net.Conn) {
				if _, _, err := readRequest(bufio.NewReader(c)); err == nil {
					io.WriteString(c, tc.answer)
				}
			})
			req, _ := http.NewRequest("GET", url, nil)
			resp, err := New(Options{MaxHeaderBytes: 4 << 10}).RoundTrip(req)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error for %q", tc.answer)
				}
				if tc.name == "header past the bound" && !errors.Is(err, errHeaderTooLarge) {
					t.Errorf("got %v, want errHeaderTooLarge", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err == nil {
				t.Error("a body cut short read without an error")
			}
		})
	}
}

// TestInformationalAnswersSkipped: a 103 before the answer is read past.
func TestInformationalAnswersSkipped(t *testing.T) {
	url, _ := rawServer(t, func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err == nil {
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"+okAnswer)
		}
	})
	if resp, b := do(t, New(Options{}), "GET", url, ""); resp.StatusCode != 200 || b != "ok" {
		t.Errorf("got %d %q", resp.StatusCode, b)
	}
}

// TestHeaderThatWouldSplitTheRequest is refused before anything is sent.
func TestHeaderThatWouldSplitTheRequest(t *testing.T) {
	url, conns := rawServer(t, func(int, net.Conn) {})
	tr := New(Options{})
	for _, h := range [][2]string{{"X-A", "v\r\nX-Injected: 1"}, {"X-A", "v\nGET / HTTP/1.1"}, {"X A", "v"}, {"X-A:", "v"}} {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header[h[0]] = []string{h[1]}
		if _, err := tr.RoundTrip(req); !errors.Is(err, errBadHeader) {
			t.Errorf("header %q: %v, want errBadHeader", h, err)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections opened for requests refused before sending", n)
	}
}

// TestCancellation: a request whose context ends while its answer streams fails with the
// context's cause, and its connection is not used again; a body closed before its end closes
// its connection.
func TestCancellation(t *testing.T) {
	release := make(chan struct{})
	s, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/stall" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	})
	defer close(release)
	tr := New(Options{})
	cause := errors.New("the stream stalled")
	ctx, cancel := context.WithCancelCause(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/stall", strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 9)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, func() { cancel(cause) })
	if _, err := resp.Body.Read(buf); !errors.Is(err, cause) {
		t.Errorf("read after the context's end: %v, want its cause", err)
	}
	resp.Body.Close()
	do(t, tr, "GET", s.URL+"/next", "")
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2: the cancelled one is not reused", n)
	}
	// Closed before its end.
	req, _ = http.NewRequest("GET", s.URL+"/partly", nil)
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(buf); err == nil {
		t.Error("a read after Close succeeded")
	}
	do(t, tr, "GET", s.URL+"/after", "")
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3: a body closed early closes its connection", n)
	}
}

// TestIdleConnectionsExpire after the idle timeout, and a full idle stack closes the rest.
func TestIdleConnectionsExpire(t *testing.T) {
	s, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tr := New(Options{IdleTimeout: 30 * time.Millisecond})
	do(t, tr, "GET", s.URL, "")
	time.Sleep(60 * time.Millisecond)
	do(t, tr, "GET", s.URL, "")
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2: the first expired", n)
	}
}

// TestConcurrentRequests share connections under -race, never more than are in flight.
func TestConcurrentRequests(t *testing.T) {
	s, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	tr := New(Options{})
	const workers = 16
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for j := range 25 {
				want := fmt.Sprint(i, "-", j)
				req, _ := http.NewRequest("POST", s.URL, strings.NewReader(want))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != want {
					t.Errorf("got %q, want %q", b, want)
				}
			}
		})
	}
	wg.Wait()
	if n := conns.Load(); n > workers {
		t.Errorf("%d connections for %d workers", n, workers)
	}
}

// TestOpenStreamsHoldNoGoroutines: an open stream is read in its caller's goroutine; the
// transport adds none (net/http's adds two per connection).
func TestOpenStreamsHoldNoGoroutines(t *testing.T) {
	release := make(chan struct{})
	url, _ := rawServer(t, func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err == nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n")
			<-release
		}
	})
	tr := New(Options{})
	const streams = 20
	var bodies []io.ReadCloser
	runtime.GC()
	before := runtime.NumGoroutine()
	for range streams {
		req, _ := http.NewRequest("POST", url, strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body)
	}
	// Each stream: the test server's goroutine, none of the transport's.
	if extra := runtime.NumGoroutine() - before - streams; extra > 2 {
		t.Errorf("%d open streams hold %d goroutines beyond the server's", streams, extra)
	}
	close(release)
	for _, b := range bodies {
		b.Close()
	}
}

// TestTLS: an https upstream is reached over TLS with HTTP/1.1 chosen, and its connection
// kept.
func TestTLS(t *testing.T) {
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %v", r.Proto, r.TLS != nil)
	}))
	s.EnableHTTP2 = true
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.StartTLS()
	defer s.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	tr := New(Options{TLS: &tls.Config{RootCAs: pool}})
	for range 2 {
		if _, b := do(t, tr, "GET", s.URL, ""); b != "HTTP/1.1 true" {
			t.Errorf("got %q", b)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
	// An upstream whose certificate the roots do not hold is refused.
	if _, err := New(Options{}).RoundTrip(mustRequest(t, "GET", s.URL)); err == nil {
		t.Error("a certificate no root signed was accepted")
	}
}

// TestWhatGoesToTheFallback: other schemes, and requests a proxy in the environment carries.
func TestWhatGoesToTheFallback(t *testing.T) {
	fb := &recordingTripper{}
	tr := New(Options{Fallback: fb})
	if _, err := tr.RoundTrip(mustRequest(t, "GET", "ftp://example.invalid/x")); err != nil || fb.n.Load() != 1 {
		t.Errorf("an ftp URL: %v, fallback called %d times", err, fb.n.Load())
	}
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	tr = New(Options{Fallback: fb})
	if tr.proxied == nil {
		t.Fatal("HTTPS_PROXY in the environment was not noticed")
	}
}

type recordingTripper struct{ n atomic.Int64 }

func (r *recordingTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	return &http.Response{StatusCode: 200, Body: io.NopCloser(bytes.NewReader(nil)), Request: req}, nil
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestFirstResponseByteTraced: the gateway's first-byte limit stops at the first byte of the
// answer (httptrace's GotFirstResponseByte), once per request, informational answers
// included.
func TestFirstResponseByteTraced(t *testing.T) {
	url, _ := rawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, _, err := readRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\n\r\n"+okAnswer)
		}
	})
	tr := New(Options{})
	for range 2 {
		var n int
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotFirstResponseByte: func() { n++ }})
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		if n != 1 {
			t.Errorf("GotFirstResponseByte called %d times, want 1", n)
		}
	}
}

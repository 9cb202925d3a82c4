// Package fakeruntime is an in-process Lambda Runtime API for tests and measurements. It hands
// events to a real bootstrap process over the same HTTP contract Lambda uses and records the
// response body read by read with arrival times, so a test can tell a streamed answer from a
// buffered one (the Runtime Interface Emulator buffers; this does not).
package fakeruntime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

const prefix = "/2018-06-01/runtime"

// Server is the fake Runtime API. Serve one bootstrap per Server.
type Server struct {
	srv     *httptest.Server
	queue   chan *Invocation
	stop    chan struct{}
	closing sync.Once
	seq     atomic.Int64
	initErr chan []byte

	mu    sync.Mutex
	byID  map[string]*Invocation
	polls []time.Time // when the bootstrap asked for each next event
}

// New starts a Runtime API on a loopback port.
func New() *Server {
	s := &Server{
		queue:   make(chan *Invocation, 64),
		stop:    make(chan struct{}),
		initErr: make(chan []byte, 1),
		byID:    map[string]*Invocation{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/invocation/next", s.next)
	mux.HandleFunc("POST "+prefix+"/invocation/{id}/response", s.response)
	mux.HandleFunc("POST "+prefix+"/invocation/{id}/error", s.invokeError)
	mux.HandleFunc("POST "+prefix+"/init/error", s.initError)
	s.srv = httptest.NewServer(mux)
	return s
}

// Addr is the value for AWS_LAMBDA_RUNTIME_API.
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

// Close releases the bootstrap's long poll, cuts responses still streaming and stops the
// server. The poll must be released first: httptest waits for every running handler.
func (s *Server) Close() {
	s.closing.Do(func() {
		close(s.stop)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// InitError delivers the body of a POST /runtime/init/error.
func (s *Server) InitError() <-chan []byte { return s.initErr }

// Command prepares bin to run as a Lambda bootstrap against s: a clean environment (as on
// Lambda) with the runtime variables, PATH and HOME, plus env ("KEY=value").
func (s *Server) Command(bin string, env ...string) *exec.Cmd {
	cmd := exec.Command(bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append([]string{
		"AWS_LAMBDA_RUNTIME_API=" + s.Addr(),
		"AWS_LAMBDA_FUNCTION_NAME=fngate-test",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512",
		"AWS_REGION=us-east-1",
		"LAMBDA_TASK_ROOT=" + cmd.Dir,
		"_HANDLER=bootstrap",
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}, env...)
	return cmd
}

// Request is one invoke.
type Request struct {
	Event []byte
	// Timeout sets the invoke deadline from when the bootstrap receives the event; 0 means 30s.
	Timeout time.Duration
	// HangUpAfter, when > 0, closes the connection once that many response bytes (prelude
	// included) have arrived, as if the platform's side of the stream broke.
	HangUpAfter int
}

// Invoke queues an event; the bootstrap receives it on its next poll.
func (s *Server) Invoke(req Request) *Invocation {
	if req.Timeout == 0 {
		req.Timeout = 30 * time.Second
	}
	inv := &Invocation{ID: "req-" + strconv.FormatInt(s.seq.Add(1), 10), req: req, changed: make(chan struct{})}
	s.mu.Lock()
	s.byID[inv.ID] = inv
	s.mu.Unlock()
	s.queue <- inv
	return inv
}

func (s *Server) lookup(id string) *Invocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// Polls returns when the bootstrap asked for each next event: the end of an invocation, as
// far as Lambda is concerned, is the poll that follows it.
func (s *Server) Polls() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.polls...)
}

func (s *Server) next(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.polls = append(s.polls, time.Now())
	s.mu.Unlock()
	var inv *Invocation
	select {
	case inv = <-s.queue:
	case <-s.stop:
		http.Error(w, "runtime API shut down", http.StatusGone)
		return
	case <-r.Context().Done():
		return
	}
	inv.mu.Lock()
	inv.Delivered = time.Now()
	inv.Deadline = inv.Delivered.Add(inv.req.Timeout)
	inv.mu.Unlock()
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.ID)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.Deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:fngate-test")
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(inv.req.Event)
}

func (s *Server) response(w http.ResponseWriter, r *http.Request) {
	inv := s.lookup(r.PathValue("id"))
	if inv == nil {
		http.Error(w, "unknown invocation", http.StatusNotFound)
		return
	}
	inv.setKind("response", r.Header.Get("Content-Type"))
	buf := make([]byte, 64<<10)
	total := 0
	for {
		n, err := r.Body.Read(buf)
		if n > 0 {
			total += n
			inv.add(Chunk{Data: bytes.Clone(buf[:n]), At: time.Now()})
		}
		if hang := inv.req.HangUpAfter; hang > 0 && total >= hang {
			if conn, _, herr := http.NewResponseController(w).Hijack(); herr == nil {
				conn.Close()
			}
			inv.finish(nil, ErrHungUp)
			return
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			inv.finish(nil, err)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
	inv.finish(r.Trailer.Clone(), nil)
}

func (s *Server) invokeError(w http.ResponseWriter, r *http.Request) {
	inv := s.lookup(r.PathValue("id"))
	if inv == nil {
		http.Error(w, "unknown invocation", http.StatusNotFound)
		return
	}
	inv.setKind("error", r.Header.Get("Content-Type"))
	body, err := io.ReadAll(r.Body)
	inv.add(Chunk{Data: body, At: time.Now()})
	w.WriteHeader(http.StatusAccepted)
	inv.finish(nil, err)
}

func (s *Server) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	select {
	case s.initErr <- body:
	default:
	}
	w.WriteHeader(http.StatusAccepted)
}

// ErrHungUp ends an invocation whose connection the server closed on purpose (HangUpAfter).
var ErrHungUp = errors.New("fakeruntime: hung up on the response stream")

// Chunk is one read of the response body.
type Chunk struct {
	Data []byte
	At   time.Time
}

// Invocation is one invoke and what the bootstrap answered.
type Invocation struct {
	ID string
	// Delivered is when the bootstrap received the event; Deadline is the invoke deadline
	// it was given.
	Delivered, Deadline time.Time

	req      Request
	mu       sync.Mutex
	kind     string
	ctype    string
	chunks   []Chunk
	trailer  http.Header
	err      error
	done     bool
	finished time.Time
	changed  chan struct{} // closed and replaced whenever a chunk arrives or the invocation ends
}

func (inv *Invocation) setKind(kind, ctype string) {
	inv.mu.Lock()
	inv.kind, inv.ctype = kind, ctype
	inv.mu.Unlock()
}

func (inv *Invocation) add(c Chunk) {
	inv.mu.Lock()
	inv.chunks = append(inv.chunks, c)
	close(inv.changed)
	inv.changed = make(chan struct{})
	inv.mu.Unlock()
}

func (inv *Invocation) finish(trailer http.Header, err error) {
	inv.mu.Lock()
	inv.trailer, inv.err, inv.done, inv.finished = trailer, err, true, time.Now()
	close(inv.changed)
	inv.changed = make(chan struct{})
	inv.mu.Unlock()
}

// Chunk waits up to timeout for read i of the body. It returns io.EOF when the body ended
// with fewer reads.
func (inv *Invocation) Chunk(i int, timeout time.Duration) (Chunk, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		inv.mu.Lock()
		if i < len(inv.chunks) {
			c := inv.chunks[i]
			inv.mu.Unlock()
			return c, nil
		}
		done, changed := inv.done, inv.changed
		inv.mu.Unlock()
		if done {
			return Chunk{}, io.EOF
		}
		select {
		case <-changed:
		case <-t.C:
			return Chunk{}, fmt.Errorf("fakeruntime: %s: no read %d within %v", inv.ID, i, timeout)
		}
	}
}

// Result is a finished invocation.
type Result struct {
	// Kind is "response" (POST .../response) or "error" (POST .../error).
	Kind        string
	ContentType string
	// Body is everything received: for a function URL stream, the prelude, eight NUL bytes,
	// then the payload.
	Body    []byte
	Chunks  []Chunk
	Trailer http.Header
	// Err is a broken body (ErrHungUp included).
	Err error
	// Finished is when the response's body ended: the client had all of it.
	Finished time.Time
}

// Wait returns the result once the bootstrap has finished the invocation.
func (inv *Invocation) Wait(timeout time.Duration) (*Result, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		inv.mu.Lock()
		if inv.done {
			r := &Result{Kind: inv.kind, ContentType: inv.ctype, Chunks: inv.chunks, Trailer: inv.trailer, Err: inv.err, Finished: inv.finished}
			for _, c := range inv.chunks {
				r.Body = append(r.Body, c.Data...)
			}
			inv.mu.Unlock()
			return r, nil
		}
		changed := inv.changed
		inv.mu.Unlock()
		select {
		case <-changed:
		case <-t.C:
			return nil, fmt.Errorf("fakeruntime: %s did not finish within %v", inv.ID, timeout)
		}
	}
}

// Prelude is the head of a function URL streaming response.
type Prelude struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Cookies    []string          `json:"cookies"`
}

var preludeEnd = make([]byte, 8)

// SplitPrelude separates a function URL streaming response into its prelude and payload.
func SplitPrelude(body []byte) (*Prelude, []byte, error) {
	i := bytes.Index(body, preludeEnd)
	if i < 0 {
		return nil, nil, errors.New("fakeruntime: no prelude terminator (8 NUL bytes) in the response")
	}
	p := new(Prelude)
	if err := json.Unmarshal(body[:i], p); err != nil {
		return nil, nil, fmt.Errorf("fakeruntime: prelude: %w", err)
	}
	return p, body[i+len(preludeEnd):], nil
}

// URLEvent is a function URL event as Lambda sends it (payload format 2.0).
func URLEvent(method, path string, headers map[string]string, body string) []byte {
	h := map[string]string{"host": "abc123.lambda-url.us-east-1.on.aws", "user-agent": "fakeruntime"}
	for k, v := range headers {
		h[k] = v
	}
	ev := events.LambdaFunctionURLRequest{
		Version: "2.0",
		RawPath: path,
		Headers: h,
		Body:    body,
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID:    "anonymous",
			RequestID:    "00000000-0000-0000-0000-000000000000",
			DomainName:   h["host"],
			DomainPrefix: "abc123",
			APIID:        "abc123",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "fakeruntime",
			},
			TimeEpoch: time.Now().UnixMilli(),
		},
	}
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // a fixed struct of strings always marshals
	}
	return b
}

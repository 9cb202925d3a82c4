// Package anthropicfake is a local stand-in for Anthropic's Messages API, for tests and
// benchmarks of anything that talks to it.
//
// It checks each request as the real API does (headers, required fields, roles, content
// blocks, tool_use/tool_result pairing and placement, temperature range, unknown fields) and
// answers 400 in Anthropic's error shape when one is wrong. Otherwise it serves the replies a
// test scripted, in order: JSON answers, realistic event streams, error statuses, error events
// after some content, connections cut mid-stream.
package anthropicfake

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// APIKey is the key the fake accepts unless Server.APIKey is changed before use.
const APIKey = "sk-ant-fake-key"

// Reply is one scripted answer.
type Reply struct {
	// Answer is rendered as JSON or as an event stream, following the request's "stream".
	Answer *Answer
	// Status and Body answer with a plain JSON body (an error, typically). Status 0 is 200.
	Status int
	Body   string
	// Events are streamed as text/event-stream after a 200.
	Events []Event
	// Header is added to the response (retry-after, ...).
	Header http.Header
	// ChunkSize, when positive, writes the event stream in pieces of this many bytes, each
	// flushed, so events and lines arrive cut anywhere. Zero writes one event at a time.
	ChunkSize int
	// Delay is a pause before each write of a stream.
	Delay time.Duration
	// Cut ends the connection abruptly after the events, as a network failure would: the
	// client reads an unexpected EOF.
	Cut bool
	// StallBeforeHeaders waits this long before answering at all (an API that accepted the
	// connection and went quiet); a client that gives up first is counted in Canceled.
	StallBeforeHeaders time.Duration
}

// Request is one request the fake received.
type Request struct {
	Query  string // the raw query string
	Header http.Header
	Body   []byte
	// Parsed holds the body's top-level fields (nil when it is not JSON).
	Parsed map[string]json.RawMessage
	// Rejected is the 400/401 the fake answered for an invalid request, or nil.
	Rejected *APIError
}

// Stream reports whether the request asked for an event stream.
func (r *Request) Stream() bool { return string(r.Parsed["stream"]) == "true" }

// Field decodes one top-level body field into v.
func (r *Request) Field(name string, v any) error { return json.Unmarshal(r.Parsed[name], v) }

// Server is a running fake. Safe for concurrent use.
type Server struct {
	*httptest.Server
	// APIKey is the accepted x-api-key.
	APIKey string

	// Script, when set, answers every valid request the queue does not (Model answers like
	// a model would).
	Script func(*Request) Reply

	mu       sync.Mutex
	replies  []Reply
	fallback *Reply
	requests []*Request
	canceled atomic.Int64
}

// Canceled counts requests whose client went away while a reply stalled before its headers.
func (s *Server) Canceled() int { return int(s.canceled.Load()) }

// New starts a fake. Close it when done.
func New() *Server {
	s := &Server{APIKey: APIKey}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Enqueue scripts the replies to the next valid requests, in order.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// SetDefault scripts the reply to every valid request once the queue is empty (benchmarks).
// Without one, an unscripted request gets a 500 api_error naming the problem.
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &r
}

// Requests returns the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Last returns the last request received, or nil.
func (s *Server) Last() *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

// Pending returns how many scripted replies are still queued.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Request-Id", "req_fake_"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if r.URL.Path == "/v1/messages/count_tokens" && r.Method == http.MethodPost {
		s.countTokens(w, r)
		return
	}
	if r.URL.Path != "/v1/messages" {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "Not found"})
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, &APIError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Message: "Method Not Allowed"})
		return
	}
	body, _ := io.ReadAll(r.Body)
	req := &Request{Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	_ = json.Unmarshal(body, &req.Parsed)
	req.Rejected = ValidateHeaders(r.Header, s.APIKey)
	if req.Rejected == nil {
		req.Rejected = ValidateBody(body, Direct)
	}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var reply *Reply
	if req.Rejected == nil {
		if len(s.replies) > 0 {
			reply = &s.replies[0]
			s.replies = s.replies[1:]
		} else if s.Script != nil {
			r := s.Script(req)
			reply = &r
		} else {
			reply = s.fallback
		}
	}
	s.mu.Unlock()

	if req.Rejected != nil {
		writeError(w, req.Rejected)
		return
	}
	if reply == nil {
		writeError(w, &APIError{Status: http.StatusInternalServerError, Type: "api_error", Message: "anthropicfake: no reply scripted for this request"})
		return
	}
	if reply.StallBeforeHeaders > 0 {
		t := time.NewTimer(reply.StallBeforeHeaders)
		select {
		case <-r.Context().Done():
			t.Stop()
			s.canceled.Add(1)
			return
		case <-t.C:
		}
	}
	for k, vs := range reply.Header {
		w.Header()[k] = vs
	}
	var model string
	_ = req.Field("model", &model)
	switch {
	case reply.Answer != nil && req.Stream():
		s.stream(w, r.Context(), reply, reply.Answer.Events(model))
	case reply.Answer != nil:
		writeJSON(w, http.StatusOK, reply.Answer.JSON(model))
	case reply.Events != nil || reply.Cut:
		s.stream(w, r.Context(), reply, reply.Events)
	default:
		status := reply.Status
		if status == 0 {
			status = http.StatusOK
		}
		writeJSON(w, status, reply.Body)
	}
}

func (s *Server) stream(w http.ResponseWriter, ctx context.Context, reply *Reply, events []Event) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	var pieces []string
	if reply.ChunkSize > 0 {
		all := SSE(events)
		for len(all) > 0 {
			n := min(reply.ChunkSize, len(all))
			pieces = append(pieces, all[:n])
			all = all[n:]
		}
	} else {
		for _, e := range events {
			pieces = append(pieces, e.String())
		}
	}
	for _, p := range pieces {
		if reply.Delay > 0 {
			t := time.NewTimer(reply.Delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if _, err := w.Write([]byte(p)); err != nil {
			return
		}
		fl.Flush()
	}
	if reply.Cut {
		// The server closes the connection without ending the chunked body.
		panic(http.ErrAbortHandler)
	}
}

func writeError(w http.ResponseWriter, e *APIError) {
	if e.Type == "overloaded_error" || e.Type == "rate_limit_error" {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, e.Status, e.Body())
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// Overloaded is the 529 the API answers when it is overloaded, before any content.
func Overloaded() Reply {
	return Reply{Status: 529, Body: ErrorBody("overloaded_error", "Overloaded")}
}

// RateLimited is a 429 with the retry-after the API sends.
func RateLimited(retryAfter string) Reply {
	return Reply{Status: http.StatusTooManyRequests, Body: ErrorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
		Header: http.Header{"Retry-After": {retryAfter}}}
}

// Truncate returns the events of an answer up to and including the first n content deltas,
// for streams that fail part-way.
func Truncate(events []Event, n int) []Event {
	var out []Event
	for _, e := range events {
		if e.Name == "content_block_delta" {
			if n == 0 {
				break
			}
			n--
		}
		out = append(out, e)
	}
	return out
}

// Join concatenates event lists.
func Join(lists ...[]Event) []Event {
	var out []Event
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// CountedTokens is what the fake's count_tokens answers for a body: one token per four bytes,
// a stand-in that tests can compute too.
func CountedTokens(body []byte) int { return (len(body) + 3) / 4 }

// countTokens serves POST /v1/messages/count_tokens: the Messages body without max_tokens,
// checked as the API checks it.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &Request{Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	_ = json.Unmarshal(body, &req.Parsed)
	req.Rejected = ValidateHeaders(r.Header, s.APIKey)
	if req.Rejected == nil {
		req.Rejected = ValidateCountBody(body)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if req.Rejected != nil {
		writeError(w, req.Rejected)
		return
	}
	writeJSON(w, http.StatusOK, `{"input_tokens":`+strconv.Itoa(CountedTokens(body))+`}`)
}

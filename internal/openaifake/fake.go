// Package openaifake is an OpenAI server for tests and benchmarks: Chat Completions and the
// legacy Completions (fake.go), the Responses API (responses.go) and its compact endpoint
// (compact.go). It speaks the real wire (JSON, and SSE with a role-first chunk, tool-call
// fragments, a finish chunk, the usage chunk and [DONE]; Responses' numbered events) and
// plays scripted faults: error statuses, stalls, cuts, malformed chunks and in-band error
// events. It serves POST /v1/embeddings too (embeddings.go), validating as OpenAI does and
// answering deterministic vectors.
package openaifake

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Reply is one scripted answer. Zero values give a plain "ok" answer.
type Reply struct {
	// Status, when not 2xx, fails the request before any output with ErrorBody (an OpenAI
	// error object is generated when empty).
	Status    int
	ErrorBody string
	Header    map[string]string

	Text      string
	ToolCalls []ToolCall
	// Model is the model the answer says answered (a dated snapshot of the one asked for,
	// as OpenAI names it); "" names the one asked for.
	Model        string
	FinishReason string // default: stop, or tool_calls when ToolCalls are given
	// Usage counts; a negative value leaves the count out of the usage object.
	PromptTokens, CompletionTokens, CachedTokens int
	NoUsage                                      bool
	// RawUsage, when set, is the usage object verbatim instead of the counts above (an
	// upstream reporting impossible counts).
	RawUsage json.RawMessage

	// Streaming faults, counted in content-bearing chunks: N > 0 strikes after N of them, -1
	// right after the role chunk (before any content), 0 never.
	StallBeforeHeaders time.Duration // wait before answering at all
	ResetBeforeHeaders bool          // drop the connection without answering
	ChunkDelay         time.Duration // pause between chunks
	CutAfter           int           // close the connection
	MalformedAfter     int           // send a broken JSON chunk
	ErrorEventAfter    int           // send an in-band {"error":...} event
	ErrorEventCode     int           // code in that error event (default 502)
	ErrorEventMessage  string        // message of that error event (default "scripted error event")
	StallAfter         int           // pause for StallFor (a provider that goes quiet)
	StallFor           time.Duration
	NoDone             bool   // end without [DONE]
	Comments           bool   // interleave ": PROCESSING" comment lines (OpenRouter)
	Reasoning          string // reasoning deltas before the content (OpenRouter, vLLM); a reasoning item on Responses
	WebSearch          bool   // Responses: a web_search_call item before the answer

	// Hostile answers. Body, when set, is sent as the non-streamed answer instead of the
	// generated one. Inject is written into the stream verbatim (whole SSE lines, not a data
	// payload) at InjectAfter, counted as the faults above; the answer then goes on.
	Body        []byte
	Inject      []byte
	InjectAfter int

	// Embeddings: EmbedDims answers vectors of this length whatever was asked (a server
	// that ignores dimensions); Reversed lists the items last first, each under its index.
	EmbedDims int
	Reversed  bool
}

// ToolCall is a scripted tool call; Arguments is split into several fragments when streamed.
type ToolCall struct {
	ID, Name, Arguments string
}

// Request is what the fake received.
type Request struct {
	Path   string
	Query  string // the raw query string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server is the fake. Script, when set, picks the reply for each request (concurrent tests
// that need a reply per model); otherwise queued replies are consumed in order, then Default.
type Server struct {
	*httptest.Server
	Default Reply
	Script  func(Request) Reply
	// EmbedDims is the length of the vectors of a model not in EmbeddingDims, when the
	// request does not ask for one (default 16).
	EmbedDims int

	mu       sync.Mutex
	queue    []Reply
	requests []Request
	canceled atomic.Int64
}

// New starts a fake on loopback.
func New() *Server {
	s := &Server{Default: Reply{Text: "ok", PromptTokens: 5, CompletionTokens: 1}, EmbedDims: 16}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL of the API root (".../v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Enqueue scripts the next replies.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Requests returns what was received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Canceled counts requests whose client went away before the fake finished answering.
func (s *Server) Canceled() int { return int(s.canceled.Load()) }

func (s *Server) next() Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return s.Default
	}
	r := s.queue[0]
	s.queue = s.queue[1:]
	return r
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil && r.Method == http.MethodPost {
		writeError(w, 400, "invalid_request_error", "We could not parse the JSON body of your request.")
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, Raw: raw})
	s.mu.Unlock()

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/embeddings":
		s.embeddings(w, r, body, raw)
		return
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","created":0,"owned_by":"fake"}]}`)
		return
	case r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/v1/completions" && r.URL.Path != "/v1/responses" &&
		r.URL.Path != "/v1/responses/compact":
		writeError(w, 404, "invalid_request_error", "Invalid URL ("+r.Method+" "+r.URL.Path+")")
		return
	}
	if model, _ := body["model"].(string); model == "" {
		writeError(w, 400, "invalid_request_error", "you must provide a model parameter")
		return
	}
	if r.URL.Path == "/v1/responses" && checkResponses(w, body) || r.URL.Path == "/v1/responses/compact" && checkCompact(w, body) {
		return
	}
	text := r.URL.Path == "/v1/completions"
	if !text && r.URL.Path != "/v1/responses" && r.URL.Path != "/v1/responses/compact" {
		if msgs, _ := body["messages"].([]any); len(msgs) == 0 {
			writeError(w, 400, "invalid_request_error", "messages must be a non-empty array")
			return
		}
	}
	if msg := validateExtended(body); msg != "" {
		writeError(w, 400, "invalid_request_error", msg)
		return
	}
	rep := s.Default
	if s.Script != nil {
		rep = s.Script(Request{Path: r.URL.Path, Header: r.Header, Body: body, Raw: raw})
	} else {
		rep = s.next()
	}
	if rep.ResetBeforeHeaders {
		cut(w)
		return
	}
	if rep.StallBeforeHeaders > 0 {
		select {
		case <-time.After(rep.StallBeforeHeaders):
		case <-r.Context().Done():
			s.canceled.Add(1)
			return
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status != 0 && rep.Status/100 != 2 {
		if rep.ErrorBody != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.Status)
			_, _ = io.WriteString(w, rep.ErrorBody)
			return
		}
		writeError(w, rep.Status, errorType(rep.Status), "scripted failure "+strconv.Itoa(rep.Status))
		return
	}
	switch r.URL.Path {
	case "/v1/responses":
		s.serveResponses(w, r, &rep, body)
		return
	case "/v1/responses/compact":
		s.serveCompact(w, &rep, body)
		return
	}
	stream, _ := body["stream"].(bool)
	if stream {
		s.stream(w, r, &rep, body, text)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Body != nil {
		_, _ = w.Write(rep.Body)
		return
	}
	_, _ = w.Write(rep.jsonBody(rep.answering(body), text))
}

func errorType(status int) string {
	switch {
	case status == 429:
		return "rate_limit_exceeded"
	case status == 401:
		return "invalid_api_key"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": typ}})
	_, _ = w.Write(b)
}

// answering is the model the answer names: Model when scripted, else the one asked for.
func (r *Reply) answering(body map[string]any) string {
	if r.Model != "" {
		return r.Model
	}
	return modelOf(body)
}

func modelOf(body map[string]any) string {
	m, _ := body["model"].(string)
	return m
}

func (r *Reply) finish() string {
	if r.FinishReason != "" {
		return r.FinishReason
	}
	if len(r.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (r *Reply) usage() any {
	if r.RawUsage != nil {
		return r.RawUsage
	}
	u := map[string]any{}
	if r.PromptTokens >= 0 {
		u["prompt_tokens"] = r.PromptTokens
	}
	if r.CompletionTokens >= 0 {
		u["completion_tokens"] = r.CompletionTokens
	}
	if r.PromptTokens >= 0 && r.CompletionTokens >= 0 {
		u["total_tokens"] = r.PromptTokens + r.CompletionTokens
	}
	if r.CachedTokens > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": r.CachedTokens}
	}
	return u
}

func (r *Reply) jsonBody(model string, text bool) []byte {
	resp := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": model}
	if text {
		resp["object"] = "text_completion"
		resp["choices"] = []any{map[string]any{"index": 0, "text": r.Text, "logprobs": nil, "finish_reason": r.finish()}}
	} else {
		msg := map[string]any{"role": "assistant", "content": r.Text, "refusal": nil}
		if r.Text == "" && len(r.ToolCalls) > 0 {
			msg["content"] = nil
		}
		if len(r.ToolCalls) > 0 {
			var calls []any
			for _, tc := range r.ToolCalls {
				calls = append(calls, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
			}
			msg["tool_calls"] = calls
		}
		resp["choices"] = []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": r.finish()}}
	}
	if !r.NoUsage {
		resp["usage"] = r.usage()
	}
	b, _ := json.Marshal(resp)
	return b
}

// chunks renders the content-bearing stream chunks: content word by word, then each tool call
// as an opening fragment and its arguments in three pieces.
func (r *Reply) chunks(text bool) []map[string]any {
	var out []map[string]any
	choice := func(delta map[string]any) map[string]any {
		if text {
			return map[string]any{"index": 0, "text": delta["content"], "logprobs": nil, "finish_reason": nil}
		}
		return map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": nil}
	}
	for _, w := range splitWords(r.Text) {
		out = append(out, choice(map[string]any{"content": w}))
	}
	for i, tc := range r.ToolCalls {
		out = append(out, choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""}}}}))
		for _, part := range thirds(tc.Arguments) {
			out = append(out, choice(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": part}}}}))
		}
	}
	return out
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, rep *Reply, body map[string]any, text bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	model := rep.answering(body)
	object := "chat.completion.chunk"
	if text {
		object = "text_completion"
	}
	includeUsage := false
	if so, ok := body["stream_options"].(map[string]any); ok {
		includeUsage, _ = so["include_usage"].(bool)
	}
	send := func(payload string) bool {
		if rep.ChunkDelay > 0 {
			select {
			case <-time.After(rep.ChunkDelay):
			case <-r.Context().Done():
				s.canceled.Add(1)
				return false
			}
		}
		if rep.Comments {
			_, _ = io.WriteString(w, ": PROCESSING\n\n")
		}
		if _, err := io.WriteString(w, "data: "+payload+"\n\n"); err != nil {
			return false
		}
		fl.Flush()
		if r.Context().Err() != nil {
			s.canceled.Add(1)
			return false
		}
		return true
	}
	chunk := func(choices []any, usage any) string {
		m := map[string]any{"id": "chatcmpl-fake", "object": object, "created": 1700000000, "model": model, "choices": choices}
		if includeUsage {
			m["usage"] = usage
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	errorEvent := func() string {
		code := rep.ErrorEventCode
		if code == 0 {
			code = 502
		}
		msg := rep.ErrorEventMessage
		if msg == "" {
			msg = "scripted error event"
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg}})
		return string(b)
	}
	if !text && !send(chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "logprobs": nil, "finish_reason": nil}}, nil)) {
		return
	}
	for _, part := range splitWords(rep.Reasoning) {
		if !send(chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"content": "", "reasoning": part}, "logprobs": nil, "finish_reason": nil}}, nil)) {
			return
		}
	}
	chunks := rep.chunks(text)
	for i := 0; i <= len(chunks); i++ {
		at := func(n int) bool { return n == -1 && i == 0 || n > 0 && i == n }
		if at(rep.InjectAfter) && rep.Inject != nil {
			if _, err := w.Write(rep.Inject); err != nil {
				return
			}
			fl.Flush()
		}
		if at(rep.CutAfter) {
			cut(w)
			return
		}
		if at(rep.MalformedAfter) {
			send(`{"id":"chatcmpl-fake","choices":[{"delta":{"content":"tru`)
			return
		}
		if at(rep.StallAfter) {
			select {
			case <-time.After(rep.StallFor):
			case <-r.Context().Done():
				s.canceled.Add(1)
				return
			}
		}
		if at(rep.ErrorEventAfter) {
			send(errorEvent())
			return
		}
		if i == len(chunks) {
			break
		}
		if !send(chunk([]any{chunks[i]}, nil)) {
			return
		}
	}
	fin := map[string]any{"index": 0, "delta": map[string]any{}, "logprobs": nil, "finish_reason": rep.finish()}
	if text {
		fin = map[string]any{"index": 0, "text": "", "logprobs": nil, "finish_reason": rep.finish()}
	}
	if !send(chunk([]any{fin}, nil)) {
		return
	}
	// The upstream always gets include_usage from the gateway; a client of the fake that did
	// not ask gets no usage chunk, as with OpenAI.
	if includeUsage && !rep.NoUsage {
		if !send(chunk([]any{}, rep.usage())) {
			return
		}
	}
	if !rep.NoDone {
		send("[DONE]")
	}
}

// cut drops the connection without finishing the chunked body, like a reset mid-stream.
func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

func splitWords(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for i, w := range strings.Fields(s) {
		if i > 0 {
			w = " " + w
		}
		out = append(out, w)
	}
	return out
}

func thirds(s string) []string {
	if len(s) < 3 {
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}

// JSONEqual reports whether two JSON texts hold the same value, for assertions on arguments.
func JSONEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

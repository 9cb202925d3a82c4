// Package bedrockfake is a fake Amazon Bedrock runtime for tests: an httptest server that
// answers the way Bedrock does, to the real AWS SDK client:
//
//	POST /model/{modelId}/converse                     Converse
//	POST /model/{modelId}/converse-stream              ConverseStream
//	POST /model/{modelId}/invoke                       InvokeModel (Anthropic's Messages body)
//	POST /model/{modelId}/invoke-with-response-stream  InvokeModelWithResponseStream
//	POST /model/{modelId}/count-tokens                 CountTokens
//	POST /guardrail/{id}/version/{version}/apply       ApplyGuardrail (guardrails.go), when
//	                                                   Server.Guardrails is set, or on its own
//	                                                   server through NewGuardrails
//
// It validates Converse requests as Bedrock does (first message from the user, alternating
// roles, toolConfig present whenever toolUse or toolResult blocks are, no blank text, tool ids
// and names in Bedrock's alphabet, tool results answering the calls just before them), and
// InvokeModel bodies as Bedrock's Anthropic body (ValidateInvoke: anthropic_version, no model
// or stream, anthropic_beta a list, then Anthropic's own rules through anthropicfake), or, for
// the embedding models (Amazon Titan Text Embeddings, Cohere Embed), as their own bodies
// (ValidateEmbedding, embeddings.go), answering ValidationException otherwise. Streams use the real binary event-stream encoding:
// ConverseStream's events, or InvokeModel's chunk events carrying base64 Anthropic events.
//
// Answers are scripted per model id: each request to a model takes the next scripted Answer,
// and the last one repeats. The same Answer serves every operation (rendered as Converse's
// output, or as Anthropic's message and events for InvokeModel), so a test can compare the
// streamed and the plain result of one answer. A model without a script is not found.
// internal/awstest keeps the AWS SDK of a gateway served in the test's own process on static
// credentials for the fake.
package bedrockfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream/eventstreamapi"

	"github.com/fngate/fngate/internal/anthropicfake"
)

// Answer is one scripted reply.
type Answer struct {
	// Blocks are the assistant message's content, in order.
	Blocks []Block `json:"blocks,omitempty"`
	// StopReason defaults to tool_use when a block calls a tool, else end_turn.
	StopReason string `json:"stop_reason,omitempty"`
	// Usage is sent as is (Converse usage, ConverseStream metadata); nil sends none.
	Usage *Usage `json:"usage,omitempty"`

	// Error fails the call with an HTTP error before any output.
	Error *Exception `json:"error,omitempty"`
	// StallBeforeHeaders waits this long before answering at all (a runtime that accepted
	// the connection and went quiet); a client that gives up first is counted in Canceled.
	StallBeforeHeaders time.Duration `json:"stall_before_headers,omitempty"`

	// The rest shapes ConverseStream only.

	// Chunk splits text and tool input into fragments of at most this many bytes (0: whole).
	Chunk int `json:"chunk,omitempty"`
	// TextStart sends contentBlockStart for text blocks too (Bedrock usually does not).
	TextStart bool `json:"text_start,omitempty"`
	// Frames replaces the frames made from the fields above.
	Frames []Frame `json:"frames,omitempty"`
	// Events replaces the Anthropic events an InvokeModelWithResponseStream answer's chunks
	// carry (otherwise those of Blocks, StopReason and Usage).
	Events []anthropicfake.Event `json:"-"`
	// Body replaces an InvokeModel answer (a Claude message made from the fields above).
	Body string `json:"body,omitempty"`
	// InputCount is what CountTokens answers.
	InputCount int `json:"input_count,omitempty"`
	// StreamError is sent as an exception frame after FailAfter frames, ending the stream.
	StreamError *Exception `json:"stream_error,omitempty"`
	FailAfter   int        `json:"fail_after,omitempty"`
	// Cut drops the connection after CutAfter frames; CutMidFrame sends half of the next frame
	// first.
	Cut         bool `json:"cut,omitempty"`
	CutAfter    int  `json:"cut_after,omitempty"`
	CutMidFrame bool `json:"cut_mid_frame,omitempty"`
	// EndAfter ends the response cleanly after this many frames (0: all), as a stream that
	// stops before messageStop.
	EndAfter int `json:"end_after,omitempty"`
}

// Block is a text block, a tool call or reasoning (Thinking, with a signature).
type Block struct {
	Text     string   `json:"text,omitempty"`
	ToolUse  *ToolUse `json:"tool_use,omitempty"`
	Thinking string   `json:"thinking,omitempty"`
}

// ToolUse is a tool call; Input is its arguments as a JSON object text.
type ToolUse struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input string `json:"input"`
}

// Usage is Bedrock's TokenUsage; nil counts are left out.
type Usage struct {
	InputTokens           *int `json:"inputTokens,omitempty"`
	OutputTokens          *int `json:"outputTokens,omitempty"`
	TotalTokens           *int `json:"totalTokens,omitempty"`
	CacheReadInputTokens  *int `json:"cacheReadInputTokens,omitempty"`
	CacheWriteInputTokens *int `json:"cacheWriteInputTokens,omitempty"`
}

// Tokens is a Usage with input and output counts and their total.
func Tokens(in, out int) *Usage {
	total := in + out
	return &Usage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
}

// Exception is a Bedrock exception: Type such as "ThrottlingException". Status is the HTTP
// status of an error response (0: the one Bedrock documents for Type).
type Exception struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Status  int    `json:"status,omitempty"`
}

// Frame is one event-stream message: an event (Event names the member, such as
// "contentBlockDelta") or an exception (Exception names it, such as "throttlingException").
type Frame struct {
	Event     string          `json:"event,omitempty"`
	Exception string          `json:"exception,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

// Operations, as Request.Op names them: the last segment of the path.
const (
	OpConverse       = "converse"
	OpConverseStream = "converse-stream"
	OpInvoke         = "invoke"
	OpInvokeStream   = "invoke-with-response-stream"
	OpCountTokens    = "count-tokens"
)

// Request is one request the fake received.
type Request struct {
	ModelID string
	Op      string
	Stream  bool // a streaming operation
	Header  http.Header
	Body    []byte
	// Invalid is the ValidationException message the fake answered, or "".
	Invalid string
}

// Server is the fake runtime. Configure it before the first request.
type Server struct {
	*httptest.Server

	// AccessKeyID, when set, is the access key SigV4-signed requests must use.
	AccessKeyID string
	// BearerToken, when set, is the only accepted credential (a Bedrock API key).
	BearerToken string
	// StreamDelay is the pause before a stream answers. A fake that answers within
	// microseconds has made the SDK fail with "use of closed network connection"
	// (aws-sdk-go-v2 #1825, #2737; wire-formats.md 3.6b), which real Bedrock is never fast
	// enough to trigger. This fake reads the whole request first, which avoided the failure
	// on its own in 600 streams here; the delay stays as the documented safe default.
	// Default 30ms.
	StreamDelay time.Duration
	// EmbedDelay is the pause before an embedding model's answer, for the failure StreamDelay
	// describes, whose cause is this: smithy-go's ClientHandler closes the request body as soon
	// as http.Client.Do returns, and when the answer's headers come back before net/http's
	// write loop has read the body's end, that loop fails and closes the connection the answer
	// is being read from. Embedding answers written within microseconds of the request (tens of
	// KB, many calls a request) failed so about once in a few thousand calls with a 5ms pause.
	// Real Bedrock never answers that fast. Default 30ms, as StreamDelay.
	EmbedDelay time.Duration
	// Guardrails, when set, answers ApplyGuardrail on this runtime too (NewGuardrailsHandler),
	// so one endpoint serves a test's models and its guardrail, as Bedrock's runtime does.
	Guardrails *Guardrails
	// Betas, when set, are the anthropic_beta flags InvokeModel accepts; others get the
	// ValidationException Bedrock answers an unknown flag with.
	Betas []string

	mu       sync.Mutex
	scripts  map[string][]Answer
	served   map[string]int
	reqs     []Request
	canceled atomic.Int64
}

// Canceled counts requests whose client went away while an answer stalled before its headers.
func (s *Server) Canceled() int { return int(s.canceled.Load()) }

// Start serves plain HTTP (SigV4); StartTLS serves HTTPS, which bearer tokens need. Use the
// embedded server's Client (or URL) and Close.
func Start() *Server {
	s := newServer()
	s.Server = httptest.NewServer(s.mux())
	return s
}

// StartTLS starts the fake on HTTPS.
func StartTLS() *Server {
	s := newServer()
	s.Server = httptest.NewTLSServer(s.mux())
	return s
}

func newServer() *Server {
	return &Server{StreamDelay: 30 * time.Millisecond, EmbedDelay: 30 * time.Millisecond, scripts: map[string][]Answer{}, served: map[string]int{}}
}

func (s *Server) mux() *http.ServeMux {
	m := http.NewServeMux()
	for _, op := range []string{OpConverse, OpConverseStream, OpInvoke, OpInvokeStream, OpCountTokens} {
		m.HandleFunc("POST /model/{modelId}/"+op, func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, op) })
	}
	m.HandleFunc("POST /guardrail/", func(w http.ResponseWriter, r *http.Request) {
		if s.Guardrails == nil {
			writeException(w, &Exception{Type: "UnknownOperationException", Message: "this fake runtime has no Guardrails", Status: 404})
			return
		}
		s.Guardrails.ServeHTTP(w, r)
	})
	return m
}

// Script sets the answers for a model id, replacing earlier ones.
func (s *Server) Script(modelID string, answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[modelID] = answers
	s.served[modelID] = 0
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Last returns the last request received; it panics when there is none.
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, op string) {
	body, _ := io.ReadAll(r.Body)
	model := r.PathValue("modelId")
	stream := op == OpConverseStream || op == OpInvokeStream
	rec := Request{ModelID: model, Op: op, Stream: stream, Header: r.Header.Clone(), Body: body}
	if ex := s.authenticate(r); ex != nil {
		s.record(rec)
		writeException(w, ex)
		return
	}
	var msg string
	embedding := embeddingFamily(model) != ""
	switch {
	case embedding && op == OpInvoke:
		msg = ValidateEmbedding(model, body)
	case embedding:
		msg = "The provided model doesn't support " + op + "."
	case op == OpInvoke, op == OpInvokeStream:
		msg = ValidateInvoke(body, s.Betas)
	case op == OpCountTokens:
		msg = ValidateCount(body, s.Betas)
	default:
		msg = Validate(body)
	}
	if msg != "" {
		rec.Invalid = msg
		s.record(rec)
		writeException(w, &Exception{Type: "ValidationException", Message: msg})
		return
	}
	s.record(rec)
	a, ok := s.next(model)
	if !ok {
		writeException(w, &Exception{Type: "ResourceNotFoundException", Message: "Could not resolve the foundation model from the provided model identifier."})
		return
	}
	if a.StallBeforeHeaders > 0 {
		t := time.NewTimer(a.StallBeforeHeaders)
		select {
		case <-r.Context().Done():
			t.Stop()
			s.canceled.Add(1)
			return
		case <-t.C:
		}
	}
	if a.Error != nil {
		writeException(w, a.Error)
		return
	}
	var out []byte
	var err error
	switch op {
	case OpConverseStream, OpInvokeStream:
		s.serveStream(w, &a, op == OpInvokeStream)
		return
	case OpInvoke:
		out = []byte(a.Body)
		if a.Body == "" && embedding {
			var tokens int
			out, tokens = embeddingAnswer(model, body)
			w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", strconv.Itoa(tokens))
		} else if a.Body == "" {
			out = []byte(anthropicAnswer(&a).JSON(""))
		}
	case OpCountTokens:
		out, err = json.Marshal(map[string]int{"inputTokens": a.InputCount})
	default:
		out, err = converseResponse(&a)
	}
	if err != nil {
		writeException(w, &Exception{Type: "InternalServerException", Message: "bad script: " + err.Error()})
		return
	}
	if embedding {
		time.Sleep(s.EmbedDelay)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

func (s *Server) next(model string) (Answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	as := s.scripts[model]
	if len(as) == 0 {
		return Answer{}, false
	}
	i := min(s.served[model], len(as)-1)
	s.served[model]++
	return as[i], true
}

func (s *Server) authenticate(r *http.Request) *Exception {
	auth := r.Header.Get("Authorization")
	switch {
	case s.BearerToken != "":
		if auth != "Bearer "+s.BearerToken {
			return &Exception{Type: "UnrecognizedClientException", Message: "The security token included in the request is invalid.", Status: 403}
		}
	case strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="):
		cred := strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 Credential=")
		key, scope, _ := strings.Cut(cred, "/")
		if s.AccessKeyID != "" && key != s.AccessKeyID {
			return &Exception{Type: "UnrecognizedClientException", Message: "The security token included in the request is invalid.", Status: 403}
		}
		// Credential=KEY/DATE/REGION/SERVICE/aws4_request: Bedrock signs as service bedrock.
		if parts := strings.Split(scope, "/"); len(parts) < 4 || parts[2] != "bedrock" {
			return &Exception{Type: "InvalidSignatureException", Message: "Credential should be scoped to correct service: 'bedrock'.", Status: 403}
		}
	case strings.HasPrefix(auth, "Bearer "):
	default:
		return &Exception{Type: "MissingAuthenticationTokenException", Message: "Missing Authentication Token", Status: 403}
	}
	return nil
}

// statuses are the HTTP statuses Bedrock documents for its exceptions.
var statuses = map[string]int{
	"ValidationException":           400,
	"ServiceQuotaExceededException": 400,
	"AccessDeniedException":         403,
	"ResourceNotFoundException":     404,
	"ModelTimeoutException":         408,
	"ModelErrorException":           424,
	"ModelStreamErrorException":     424,
	"ThrottlingException":           429,
	"ModelNotReadyException":        429,
	"InternalServerException":       500,
	"ServiceUnavailableException":   503,
}

func writeException(w http.ResponseWriter, ex *Exception) {
	status := ex.Status
	if status == 0 {
		status = statuses[ex.Type]
	}
	if status == 0 {
		status = 400
	}
	b, _ := json.Marshal(map[string]string{"message": ex.Message})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", ex.Type)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func stopReason(a *Answer) string {
	if a.StopReason != "" {
		return a.StopReason
	}
	for _, b := range a.Blocks {
		if b.ToolUse != nil {
			return "tool_use"
		}
	}
	return "end_turn"
}

func converseResponse(a *Answer) ([]byte, error) {
	content := make([]map[string]any, 0, len(a.Blocks))
	for _, b := range a.Blocks {
		if b.ToolUse != nil {
			if !isObject([]byte(b.ToolUse.Input)) {
				return nil, fmt.Errorf("tool input %q is not a JSON object", b.ToolUse.Input)
			}
			content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": b.ToolUse.ID, "name": b.ToolUse.Name, "input": json.RawMessage(b.ToolUse.Input)}})
			continue
		}
		if b.Thinking != "" {
			content = append(content, map[string]any{"reasoningContent": map[string]any{"reasoningText": map[string]any{"text": b.Thinking, "signature": Signature}}})
			continue
		}
		content = append(content, map[string]any{"text": b.Text})
	}
	out := map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stopReason(a),
		"metrics":    map[string]any{"latencyMs": 42},
	}
	if a.Usage != nil {
		out["usage"] = a.Usage
	}
	return json.Marshal(out)
}

// frames returns the ConverseStream frames of an answer: messageStart; per block an optional
// contentBlockStart, its deltas and contentBlockStop; messageStop; then metadata, which
// Bedrock sends after messageStop.
func frames(a *Answer) []Frame {
	if a.Frames != nil {
		return a.Frames
	}
	fs := []Frame{event("messageStart", map[string]any{"role": "assistant"})}
	for i, b := range a.Blocks {
		if b.ToolUse != nil {
			fs = append(fs, event("contentBlockStart", map[string]any{"contentBlockIndex": i,
				"start": map[string]any{"toolUse": map[string]any{"toolUseId": b.ToolUse.ID, "name": b.ToolUse.Name}}}))
			for _, part := range split(b.ToolUse.Input, a.Chunk) {
				fs = append(fs, event("contentBlockDelta", map[string]any{"contentBlockIndex": i,
					"delta": map[string]any{"toolUse": map[string]any{"input": part}}}))
			}
		} else if b.Thinking != "" {
			for _, part := range split(b.Thinking, a.Chunk) {
				fs = append(fs, event("contentBlockDelta", map[string]any{"contentBlockIndex": i,
					"delta": map[string]any{"reasoningContent": map[string]any{"text": part}}}))
			}
			fs = append(fs, event("contentBlockDelta", map[string]any{"contentBlockIndex": i,
				"delta": map[string]any{"reasoningContent": map[string]any{"signature": Signature}}}))
		} else {
			if a.TextStart {
				fs = append(fs, event("contentBlockStart", map[string]any{"contentBlockIndex": i, "start": map[string]any{}}))
			}
			for _, part := range split(b.Text, a.Chunk) {
				fs = append(fs, event("contentBlockDelta", map[string]any{"contentBlockIndex": i,
					"delta": map[string]any{"text": part}}))
			}
		}
		fs = append(fs, event("contentBlockStop", map[string]any{"contentBlockIndex": i}))
	}
	fs = append(fs, event("messageStop", map[string]any{"stopReason": stopReason(a)}))
	meta := map[string]any{"metrics": map[string]any{"latencyMs": 42}}
	if a.Usage != nil {
		meta["usage"] = a.Usage
	}
	return append(fs, event("metadata", meta))
}

func event(name string, payload any) Frame {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return Frame{Event: name, Payload: b}
}

// split cuts s into pieces of at most n bytes without splitting a UTF-8 character.
func split(s string, n int) []string {
	if n <= 0 || len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		k := n
		for k > 0 && !utf8Start(s[k]) {
			k--
		}
		if k == 0 { // a character longer than n: send it whole
			for k = n; k < len(s) && !utf8Start(s[k]); k++ {
			}
			if k == len(s) {
				break
			}
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return append(out, s)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func (s *Server) serveStream(w http.ResponseWriter, a *Answer, invoke bool) {
	time.Sleep(s.StreamDelay)
	fs := frames(a)
	if invoke {
		fs = chunkFrames(a)
	}
	h := w.Header()
	h.Set("Content-Type", "application/vnd.amazon.eventstream")
	h.Set("X-Amzn-Bedrock-Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	enc := eventstream.NewEncoder()
	for i := 0; ; i++ {
		if a.StreamError != nil && i == a.FailAfter {
			write(w, rc, enc, exceptionMessage(a.StreamError))
			return
		}
		if a.Cut && i == a.CutAfter {
			if a.CutMidFrame && i < len(fs) {
				var buf bytes.Buffer
				_ = enc.Encode(&buf, message(fs[i]))
				_, _ = w.Write(buf.Bytes()[:buf.Len()/2])
				_ = rc.Flush()
			}
			// Aborting the handler drops the connection without the chunked terminator: the
			// client sees the body end mid-stream, as when a connection breaks.
			panic(http.ErrAbortHandler)
		}
		if i == len(fs) || a.EndAfter > 0 && i == a.EndAfter {
			return
		}
		write(w, rc, enc, message(fs[i]))
	}
}

func write(w http.ResponseWriter, rc *http.ResponseController, enc *eventstream.Encoder, m eventstream.Message) {
	if err := enc.Encode(w, m); err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = rc.Flush()
}

func message(f Frame) eventstream.Message {
	var m eventstream.Message
	if f.Exception != "" {
		m.Headers.Set(eventstreamapi.MessageTypeHeader, eventstream.StringValue(eventstreamapi.ExceptionMessageType))
		m.Headers.Set(eventstreamapi.ExceptionTypeHeader, eventstream.StringValue(f.Exception))
		m.Headers.Set(eventstreamapi.ContentTypeHeader, eventstream.StringValue("application/json"))
		m.Payload = f.Payload
		return m
	}
	m.Headers.Set(eventstreamapi.MessageTypeHeader, eventstream.StringValue(eventstreamapi.EventMessageType))
	m.Headers.Set(eventstreamapi.EventTypeHeader, eventstream.StringValue(f.Event))
	m.Headers.Set(eventstreamapi.ContentTypeHeader, eventstream.StringValue("application/json"))
	m.Payload = f.Payload
	return m
}

// exceptionMessage is an exception frame; stream exception members are named in lower camel
// case (throttlingException), as Bedrock sends them.
func exceptionMessage(ex *Exception) eventstream.Message {
	name := ex.Type
	if name != "" {
		name = strings.ToLower(name[:1]) + name[1:]
	}
	b, _ := json.Marshal(map[string]string{"message": ex.Message})
	var m eventstream.Message
	m.Headers.Set(eventstreamapi.MessageTypeHeader, eventstream.StringValue(eventstreamapi.ExceptionMessageType))
	m.Headers.Set(eventstreamapi.ExceptionTypeHeader, eventstream.StringValue(name))
	m.Headers.Set(eventstreamapi.ContentTypeHeader, eventstream.StringValue("application/json"))
	m.Payload = b
	return m
}

var (
	toolIDPattern   = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

// Package vertexfake is a local stand-in for Vertex AI, for tests of anything that talks to
// it: a PredictionService gRPC server (GenerateContent, StreamGenerateContent, RawPredict,
// StreamRawPredict, and Predict for text embeddings: embeddings.go), LlmUtilityService's
// CountTokens on the same address, and the OpenAI-compatible REST endpoint.
//
// The gRPC server checks each request as Vertex AI does (resource names, Gemini's turn and
// function-response rules, tool declarations, media parts and generation settings, Claude
// bodies through anthropicfake's validation plus the members only Vertex AI takes, such as
// anthropic_beta, and count-tokens bodies) and answers INVALID_ARGUMENT when one is wrong.
// Otherwise it serves the replies a test scripted, in order: Gemini answers as one response
// or as a realistic stream (early empty usageMetadata, thoughts, whole function calls, a
// final usage), Claude answers as JSON or as Anthropic's event stream cut into HttpBody
// chunks at awkward places, count-tokens answers, and failure statuses before or during a
// stream.
package vertexfake

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"sync"
	"time"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/internal/anthropicfake"
)

// The project and location a fake accepts unless Server.Project and Server.Location are
// changed before use.
const (
	Project  = "fngate-test"
	Location = "europe-west4"
)

// Reply is one scripted answer.
type Reply struct {
	// Gemini answers GenerateContent with Gemini.Response() and StreamGenerateContent with
	// Gemini.Stream().
	Gemini *Answer
	// Messages, when set, are streamed instead; the first answers GenerateContent.
	Messages []*aiplatformpb.GenerateContentResponse
	// Claude answers RawPredict with its JSON and StreamRawPredict with its events.
	Claude *anthropicfake.Answer
	// InputTokens answers a call of Claude's count-tokens endpoint ({"input_tokens": N})
	// and LlmUtilityService.CountTokens (totalTokens).
	InputTokens int
	// Events are streamed instead of Claude's.
	Events []anthropicfake.Event
	// Split cuts the event stream into HttpBody chunks; nil is Awkward.
	Split func([]byte) [][]byte
	// Err fails the call: at once when After is 0, else after After streamed messages (or
	// HttpBody chunks).
	Err   error
	After int
	// Delay is a pause before a unary answer and before each streamed message.
	Delay time.Duration
	// StallFor is one more pause, before streamed message StallAt (0: before the first), as
	// of a model that goes quiet.
	StallAt  int
	StallFor time.Duration
}

// Request is one call the fake received.
type Request struct {
	Method   string // GenerateContent, StreamGenerateContent, CountTokens, RawPredict, StreamRawPredict or Predict
	Resource string // the model (Gemini) or endpoint (Claude) resource name
	// Generate is a Gemini request; for CountTokens, the request's contents, system
	// instruction, tools and generation settings as one.
	Generate *aiplatformpb.GenerateContentRequest
	// Body and ContentType are the HttpBody of a Claude call.
	Body        []byte
	ContentType string
	// Predict is an embeddings call.
	Predict  *aiplatformpb.PredictRequest
	Metadata metadata.MD
	Peer     string // the client's address: one per connection
	// Rejected is the INVALID_ARGUMENT the fake answered for an invalid request, or nil.
	Rejected error
}

// Field decodes one top-level field of a Claude body into v.
func (r *Request) Field(name string, v any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return err
	}
	return json.Unmarshal(m[name], v)
}

// Server is a running fake PredictionService. Safe for concurrent use.
type Server struct {
	aiplatformpb.UnimplementedPredictionServiceServer
	// Addr is the host:port to use as a connection's endpoint.
	Addr string
	// Project and Location are the only ones resource names may name.
	Project, Location string

	srv      *grpc.Server
	mu       sync.Mutex
	replies  []Reply
	fallback *Reply
	requests []*Request
}

// New starts a fake on loopback. Close it when done.
func New() *Server {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("vertexfake: " + err.Error())
	}
	s := &Server{Addr: lis.Addr().String(), Project: Project, Location: Location, srv: grpc.NewServer()}
	aiplatformpb.RegisterPredictionServiceServer(s.srv, s)
	aiplatformpb.RegisterLlmUtilityServiceServer(s.srv, &utility{s: s})
	go func() { _ = s.srv.Serve(lis) }()
	return s
}

// Close stops the server and ends the calls in progress.
func (s *Server) Close() { s.srv.Stop() }

// Enqueue scripts the replies to the next valid requests, in order.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// SetDefault scripts the reply to every valid request once the queue is empty. Without one,
// an unscripted request fails with INTERNAL naming the problem.
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

// accept records a request and, when it is valid, pops its reply.
func (s *Server) accept(ctx context.Context, r *Request, invalid string) (Reply, error) {
	r.Metadata, _ = metadata.FromIncomingContext(ctx)
	if p, ok := peer.FromContext(ctx); ok {
		r.Peer = p.Addr.String()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	if invalid != "" {
		r.Rejected = status.Error(codes.InvalidArgument, invalid)
		return Reply{}, r.Rejected
	}
	switch {
	case len(s.replies) > 0:
		rep := s.replies[0]
		s.replies = s.replies[1:]
		return rep, nil
	case s.fallback != nil:
		return *s.fallback, nil
	}
	return Reply{}, status.Error(codes.Internal, "vertexfake: no reply scripted for "+r.Method)
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// pause waits before streamed message i.
func (r *Reply) pause(ctx context.Context, i int) error {
	d := r.Delay
	if i == r.StallAt {
		d += r.StallFor
	}
	return wait(ctx, d)
}

// GenerateContent answers with the scripted Gemini answer.
func (s *Server) GenerateContent(ctx context.Context, req *aiplatformpb.GenerateContentRequest) (*aiplatformpb.GenerateContentResponse, error) {
	rep, err := s.accept(ctx, &Request{Method: "GenerateContent", Resource: req.GetModel(), Generate: req}, s.ValidateGenerate(req))
	if err != nil {
		return nil, err
	}
	if err := wait(ctx, rep.Delay); err != nil {
		return nil, err
	}
	if rep.Err != nil {
		return nil, rep.Err
	}
	switch {
	case len(rep.Messages) > 0:
		return rep.Messages[0], nil
	case rep.Gemini != nil:
		return rep.Gemini.Response(), nil
	}
	return nil, status.Error(codes.Internal, "vertexfake: the reply has no Gemini answer")
}

// StreamGenerateContent streams the scripted Gemini answer.
func (s *Server) StreamGenerateContent(req *aiplatformpb.GenerateContentRequest, stream aiplatformpb.PredictionService_StreamGenerateContentServer) error {
	ctx := stream.Context()
	rep, err := s.accept(ctx, &Request{Method: "StreamGenerateContent", Resource: req.GetModel(), Generate: req}, s.ValidateGenerate(req))
	if err != nil {
		return err
	}
	msgs := rep.Messages
	if len(msgs) == 0 && rep.Gemini != nil {
		msgs = rep.Gemini.Stream()
	}
	for i, m := range msgs {
		if rep.Err != nil && i == rep.After {
			return rep.Err
		}
		if err := rep.pause(ctx, i); err != nil {
			return err
		}
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return rep.Err
}

// RawPredict answers a Claude call with the scripted answer's JSON.
func (s *Server) RawPredict(ctx context.Context, req *aiplatformpb.RawPredictRequest) (*httpbody.HttpBody, error) {
	r := &Request{Method: "RawPredict", Resource: req.GetEndpoint(), Body: req.GetHttpBody().GetData(), ContentType: req.GetHttpBody().GetContentType()}
	rep, err := s.accept(ctx, r, s.validateClaude(r, false))
	if err != nil {
		return nil, err
	}
	if err := wait(ctx, rep.Delay); err != nil {
		return nil, err
	}
	if rep.Err != nil {
		return nil, rep.Err
	}
	if modelOf(r.Resource) == countModel {
		if rep.InputTokens <= 0 {
			return nil, status.Error(codes.Internal, "vertexfake: the reply has no token count")
		}
		return &httpbody.HttpBody{ContentType: "application/json", Data: []byte(`{"input_tokens":` + strconv.Itoa(rep.InputTokens) + `}`)}, nil
	}
	if rep.Claude == nil {
		return nil, status.Error(codes.Internal, "vertexfake: the reply has no Claude answer")
	}
	return &httpbody.HttpBody{ContentType: "application/json", Data: []byte(rep.Claude.JSON(modelOf(r.Resource)))}, nil
}

// StreamRawPredict streams the scripted answer's events, cut into chunks by the reply's
// Split.
func (s *Server) StreamRawPredict(req *aiplatformpb.StreamRawPredictRequest, stream aiplatformpb.PredictionService_StreamRawPredictServer) error {
	ctx := stream.Context()
	r := &Request{Method: "StreamRawPredict", Resource: req.GetEndpoint(), Body: req.GetHttpBody().GetData(), ContentType: req.GetHttpBody().GetContentType()}
	rep, err := s.accept(ctx, r, s.validateClaude(r, true))
	if err != nil {
		return err
	}
	events := rep.Events
	if len(events) == 0 && rep.Claude != nil {
		events = rep.Claude.Events(modelOf(r.Resource))
	}
	split := rep.Split
	if split == nil {
		split = Awkward
	}
	for i, chunk := range split([]byte(anthropicfake.SSE(events))) {
		if rep.Err != nil && i == rep.After {
			return rep.Err
		}
		if err := rep.pause(ctx, i); err != nil {
			return err
		}
		if err := stream.Send(&httpbody.HttpBody{ContentType: "text/event-stream", Data: chunk}); err != nil {
			return err
		}
	}
	return rep.Err
}

// utility is the LlmUtilityService of the fake: Gemini's token counting.
type utility struct {
	aiplatformpb.UnimplementedLlmUtilityServiceServer
	s *Server
}

// CountTokens checks the request as GenerateContent's (and that endpoint and model name
// the same model) and answers the scripted count.
func (u *utility) CountTokens(ctx context.Context, req *aiplatformpb.CountTokensRequest) (*aiplatformpb.CountTokensResponse, error) {
	g := &aiplatformpb.GenerateContentRequest{Model: req.GetModel(), Contents: req.GetContents(), SystemInstruction: req.SystemInstruction,
		Tools: req.GetTools(), GenerationConfig: req.GenerationConfig}
	invalid := u.s.ValidateGenerate(g)
	if invalid == "" && req.GetEndpoint() != req.GetModel() {
		invalid = "endpoint " + req.GetEndpoint() + " and model " + req.GetModel() + " differ"
	}
	rep, err := u.s.accept(ctx, &Request{Method: "CountTokens", Resource: req.GetEndpoint(), Generate: g}, invalid)
	if err != nil {
		return nil, err
	}
	if err := wait(ctx, rep.Delay); err != nil {
		return nil, err
	}
	if rep.Err != nil {
		return nil, rep.Err
	}
	if rep.InputTokens <= 0 {
		return nil, status.Error(codes.Internal, "vertexfake: the reply has no token count")
	}
	return &aiplatformpb.CountTokensResponse{TotalTokens: int32(rep.InputTokens)}, nil
}

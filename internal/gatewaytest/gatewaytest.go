// Package gatewaytest serves a gateway config on loopback for tests, as net/http/httptest
// serves a handler: the real gateway.New behind an httptest server (ServeLogged: a config and
// the providers that serve it, in one call), a log buffer the test can read while requests
// are still logging, an openai-go client of the server, and readers for
// raw answers and SSE bodies; for the Responses door (responses.go) a stream read to its end
// with its checks, a response object to compare, and the agent clients' recorded requests;
// for its WebSocket mode (socket.go) a client connection that reads one response at a time;
// and the platforms' scenario of a stored response carried across two gateway instances
// (instances.go). Any of the module's tests may import it.
package gatewaytest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
)

// Config parses a YAML config with opt, failing the test on an error.
func Config(t testing.TB, yaml string, opt config.Options) *config.Config {
	t.Helper()
	cfg, err := config.Parse(context.Background(), []byte(yaml), opt)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// Server is a gateway served on loopback.
type Server struct {
	*httptest.Server
	Gateway *gateway.Gateway
}

// Serve builds the gateway of cfg with opt and serves it on loopback until the test ends.
// Each wrap, when given, wraps the handler (a test that taps the answers, say).
func Serve(t testing.TB, cfg *config.Config, opt gateway.Options, wrap ...func(http.Handler) http.Handler) *Server {
	t.Helper()
	gw, err := gateway.New(cfg, opt)
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	var h http.Handler = gw
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Server{Server: srv, Gateway: gw}
}

// ServeLogged parses yaml (as Config, with no options), builds its gateway over a registry of
// the providers each register adds, logging into a LogBuffer, and serves it as Serve does:
// a provider package's gateway tests start their fake, put its address in yaml, and name
// their provider and the mock here.
func ServeLogged(t testing.TB, yaml string, register ...func(providers.Registry)) (*Server, *LogBuffer) {
	t.Helper()
	reg := providers.Registry{}
	for _, r := range register {
		r(reg)
	}
	logs := &LogBuffer{}
	return Serve(t, Config(t, yaml, config.Options{}), gateway.Options{Registry: reg, Logger: logs.Logger()}), logs
}

// OpenAI returns an openai-go client of the server. It never retries, so every call is one
// request the test can count; opts come last and may say otherwise.
func (s *Server) OpenAI(opts ...option.RequestOption) oai.Client {
	return oai.NewClient(append([]option.RequestOption{option.WithBaseURL(s.URL + "/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0)}, opts...)...)
}

// Anthropic returns an anthropic-sdk-go client of the server (the Messages door), with the
// key in x-api-key. It never retries, so every call is one request the test can count; opts
// come last and may say otherwise.
func (s *Server) Anthropic(opts ...aoption.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]aoption.RequestOption{aoption.WithBaseURL(s.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0)}, opts...)...)
}

// Response is an answer read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request with a JSON body and the header pairs (name, value, ...) to path and
// reads the whole answer. A request that cannot be sent or read fails the test.
func (s *Server) Do(t testing.TB, method, path, body string, header ...string) *Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Chat posts body to the chat endpoint.
func (s *Server) Chat(t testing.TB, body string, header ...string) *Response {
	t.Helper()
	return s.Do(t, http.MethodPost, "/v1/chat/completions", body, header...)
}

// JSON decodes the body as one JSON object.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// ErrorObject checks the OpenAI error shape and returns its inner object.
func (r *Response) ErrorObject(t testing.TB) map[string]any {
	t.Helper()
	m := r.JSON(t)
	e, ok := m["error"].(map[string]any)
	if !ok || len(m) != 1 {
		t.Fatalf("not an OpenAI error body: %s", r.Body)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			t.Fatalf("error body lacks %q: %s", k, r.Body)
		}
	}
	return e
}

// SSEData splits an SSE body into the payloads of its data events; any other event fails the
// test.
func SSEData[B string | []byte](t testing.TB, body B) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimRight(string(body), "\n"), "\n\n") {
		if ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("unexpected SSE event %q", ev)
		}
		out = append(out, data)
	}
	return out
}

// UserOnly is a chat request of one user message.
func UserOnly(model, text string) oai.ChatCompletionNewParams {
	return oai.ChatCompletionNewParams{Model: model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage(text)}}
}

// ChunkStream is a streamed chat answer as the SDK's NewStreaming returns it.
type ChunkStream interface {
	Next() bool
	Current() oai.ChatCompletionChunk
	Err() error
}

// StreamText reads a streamed answer to its end: its text, its finish reason, and the usage
// of each chunk that carried some. A stream error fails the test.
func StreamText(t testing.TB, s ChunkStream) (text, finish string, usage []oai.CompletionUsage) {
	t.Helper()
	var b strings.Builder
	for s.Next() {
		c := s.Current()
		if len(c.Choices) > 0 {
			b.WriteString(c.Choices[0].Delta.Content)
			if c.Choices[0].FinishReason != "" {
				finish = c.Choices[0].FinishReason
			}
		}
		if c.JSON.Usage.Valid() && c.Usage.TotalTokens > 0 {
			usage = append(usage, c.Usage)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String(), finish, usage
}

// APIError returns err as the SDK's error for a non-2xx answer, failing the test when it is
// anything else.
func APIError(t testing.TB, err error) *oai.Error {
	t.Helper()
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("got %v, want *openai.Error", err)
	}
	return apiErr
}

// Accumulate reads a streamed answer to its end through the SDK's accumulator, failing the
// test when the accumulator refuses a chunk or the stream fails, and returns it with the
// names of the tool calls in the order they were finished.
func Accumulate(t testing.TB, s ChunkStream) (acc oai.ChatCompletionAccumulator, finished []string) {
	t.Helper()
	for s.Next() {
		if !acc.AddChunk(s.Current()) {
			t.Fatal("the accumulator refused a chunk")
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc.Name)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return acc, finished
}

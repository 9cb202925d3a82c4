package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/providers/vertex"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/vertexfake"
)

// upstream is a fake provider serving one recording to every request, in the provider's own
// wire, and the gateway connection that reaches it.
type upstream struct {
	conn     string // the connection's YAML flow mapping
	model    string // the route's model
	api      string // the route's api, when the model alone does not pick the recorded one
	register func(providers.Registry)
	calls    func() int // requests received
}

// serve starts the fake for rec. stream is the kind of request the gateway will send; the
// fake refuses the other kind, so a replay cannot pass by answering the wrong question.
func serve(t *testing.T, rec *recording, stream bool) *upstream {
	t.Helper()
	switch rec.wire() {
	case "openai":
		return serveOpenAI(t, rec, stream)
	case "anthropic":
		return serveAnthropic(t, rec, stream)
	case "bedrock":
		return serveBedrock(t, rec, stream)
	case "gemini":
		return serveGemini(t, rec, stream)
	}
	t.Fatalf("%s: no fake upstream speaks %s", rec.ID, rec.Format)
	return nil
}

// openAIKinds are the connection kinds of the recorded OpenAI-wire providers; the others are
// served as a generic OpenAI-compatible server, as a user would configure them.
var openAIKinds = map[string]string{"openai": "openai", "openrouter": "openrouter", "ollama": "ollama", "vllm": "vllm"}

// serveOpenAI answers POST /chat/completions as an OpenAI-compatible server: the recorded
// status and headers, then the recorded bytes. A .chunks.txt capture lost its SSE framing,
// which is added back: "data: " before each event, a blank line after, and data: [DONE].
func serveOpenAI(t *testing.T, rec *recording, stream bool) *upstream {
	body := rec.body
	if strings.HasSuffix(rec.Format, "-chunks") {
		var b bytes.Buffer
		for _, l := range rec.chunkLines() {
			b.WriteString("data: ")
			b.Write(l)
			b.WriteString("\n\n")
		}
		b.WriteString("data: [DONE]\n\n")
		body = b.Bytes()
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		req, ok := readJSON(t, rec, w, r, "/chat/completions")
		if !ok {
			return
		}
		if !wantStream(t, rec, w, req["stream"], stream) {
			return
		}
		write(w, rec, body, stream)
	}))
	t.Cleanup(srv.Close)
	kind := openAIKinds[rec.Provider]
	if kind == "" {
		kind = "openai-compatible"
	}
	return &upstream{
		conn:     fmt.Sprintf("{kind: %s, api_key: sk-replay-key-0000, base_url: %q}", kind, srv.URL),
		model:    "recorded-model",
		register: openaicompat.Register,
		calls:    func() int { return int(n.Load()) },
	}
}

// serveAnthropic answers POST /v1/messages as Anthropic's API, checking the request as the
// API would (anthropicfake's rules). A .chunks.txt capture gets its SSE framing back: the
// event line Anthropic sends before each data line names the event's type.
func serveAnthropic(t *testing.T, rec *recording, stream bool) *upstream {
	body := rec.body
	if strings.HasSuffix(rec.Format, "-chunks") {
		var b bytes.Buffer
		for _, l := range rec.chunkLines() {
			var ev struct{ Type string }
			if err := json.Unmarshal(l, &ev); err != nil || ev.Type == "" {
				t.Fatalf("%s: an event without a type: %s", rec.ID, l)
			}
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev.Type, l)
		}
		body = b.Bytes()
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		req, ok := readJSON(t, rec, w, r, "/v1/messages")
		if !ok {
			return
		}
		if e := anthropicfake.ValidateHeaders(r.Header, "sk-ant-replay-0000"); e != nil {
			refuse(t, rec, w, e.Status, e.Body())
			return
		}
		if e := anthropicfake.ValidateBody(raw, anthropicfake.Direct); e != nil {
			refuse(t, rec, w, e.Status, e.Body())
			return
		}
		if !wantStream(t, rec, w, req["stream"], stream) {
			return
		}
		write(w, rec, body, stream)
	}))
	t.Cleanup(srv.Close)
	return &upstream{
		conn:     fmt.Sprintf("{kind: anthropic, api_key: sk-ant-replay-0000, base_url: %q}", srv.URL),
		model:    "claude-recorded",
		register: anthropic.Register,
		calls:    func() int { return int(n.Load()) },
	}
}

// bedrockErrorType is the x-amzn-errortype Bedrock's runtime sends with an exception; the SDK
// reads the exception's name from it.
func bedrockErrorType(name string) string {
	return name + ":http://internal.amazon.com/coral/com.amazon.bedrock/"
}

// serveBedrock answers Converse and ConverseStream as Bedrock's runtime, checking the request
// as Bedrock would (bedrockfake's rules). An .eventstream capture is served byte for byte; a
// .chunks.txt one, which kept each event's JSON under its type, is framed again as
// application/vnd.amazon.eventstream messages.
func serveBedrock(t *testing.T, rec *recording, stream bool) *upstream {
	body := rec.body
	if strings.HasSuffix(rec.Format, "-chunks") {
		var b bytes.Buffer
		enc := eventstream.NewEncoder()
		for _, l := range rec.chunkLines() {
			var ev map[string]json.RawMessage
			if err := json.Unmarshal(l, &ev); err != nil || len(ev) != 1 {
				t.Fatalf("%s: not one event: %s", rec.ID, l)
			}
			for typ, payload := range ev {
				msg := eventstream.Message{Payload: payload}
				msg.Headers.Set(":event-type", eventstream.StringValue(typ))
				msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
				msg.Headers.Set(":message-type", eventstream.StringValue("event"))
				if err := enc.Encode(&b, msg); err != nil {
					t.Fatal(err)
				}
			}
		}
		body = b.Bytes()
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		path := r.URL.EscapedPath()
		if r.Method != http.MethodPost || !strings.HasPrefix(path, "/model/") {
			refuse(t, rec, w, http.StatusNotFound, `{"message":"replay: unexpected `+r.Method+" "+path+`"}`)
			return
		}
		if got := strings.HasSuffix(path, "/converse-stream"); got != stream {
			refuse(t, rec, w, http.StatusBadRequest, fmt.Sprintf(`{"message":"replay: the gateway called %s, the recording answers stream=%v"}`, path, stream))
			return
		}
		raw, _ := io.ReadAll(r.Body)
		if msg := bedrockfake.Validate(raw); msg != "" {
			w.Header().Set("X-Amzn-Errortype", bedrockErrorType("ValidationException"))
			refuse(t, rec, w, http.StatusBadRequest, fmt.Sprintf(`{"message":%q}`, msg))
			return
		}
		write(w, rec, body, stream)
	}))
	t.Cleanup(srv.Close)
	// The bedrockruntime client reads AWS_BEARER_TOKEN_BEDROCK on its own: a developer's
	// token must not turn the replay into a bearer call.
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	load := func(context.Context, awsconf.Options) (aws.Config, error) {
		return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDREPLAY", "replay-secret", "")}, nil
	}
	return &upstream{
		conn:     fmt.Sprintf("{kind: bedrock, region: us-east-1, endpoint: %q}", srv.URL),
		model:    "us.anthropic.claude-recorded-v1:0",
		api:      "converse", // Converse recordings; a Claude id alone goes to InvokeModel
		register: func(r providers.Registry) { bedrock.Register(r, load) },
		calls:    func() int { return int(n.Load()) },
	}
}

// serveGemini answers through vertexfake's PredictionService, which checks each request as
// Vertex AI does. The gateway reaches Gemini over gRPC, so the recorded REST JSON cannot go
// out byte for byte: each recorded response is decoded into the GenerateContentResponse the
// gRPC stream carries, and sent as its messages. Fields the v1 proto lacks (the Gemini
// Developer API's serviceTier, ...) are dropped, as a gRPC client drops unknown fields.
func serveGemini(t *testing.T, rec *recording, stream bool) *upstream {
	var msgs []*aiplatformpb.GenerateContentResponse
	for _, raw := range geminiEvents(t, rec) {
		m := &aiplatformpb.GenerateContentResponse{}
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, m); err != nil {
			t.Fatalf("%s: %v in %s", rec.ID, err, raw)
		}
		msgs = append(msgs, m)
	}
	fake := vertexfake.New()
	t.Cleanup(fake.Close)
	fake.SetDefault(vertexfake.Reply{Messages: msgs})
	want := "GenerateContent"
	if stream {
		want = "StreamGenerateContent"
	}
	t.Cleanup(func() {
		for _, r := range fake.Requests() {
			if r.Method != want {
				t.Errorf("%s: the gateway called %s, the recording answers %s", rec.ID, r.Method, want)
			}
			if r.Rejected != nil {
				t.Errorf("%s: Vertex AI would refuse the gateway's request: %v", rec.ID, r.Rejected)
			}
		}
	})
	model := "gemini-2.5-flash"
	if v := msgs[0].GetModelVersion(); strings.HasPrefix(v, "gemini-3") {
		model = v // the gateway treats Gemini 3 histories differently
	}
	return &upstream{
		conn:     fmt.Sprintf("{kind: vertex, project: %s, location: %s, endpoint: %q, insecure: true}", vertexfake.Project, vertexfake.Location, fake.Addr),
		model:    model,
		register: vertex.Register,
		calls:    func() int { return len(fake.Requests()) },
	}
}

// geminiEvents returns the JSON of each recorded GenerateContentResponse.
func geminiEvents(t *testing.T, rec *recording) [][]byte {
	switch {
	case strings.HasSuffix(rec.Format, "-chunks"):
		return rec.chunkLines()
	case strings.HasSuffix(rec.Format, "-sse"):
		var out [][]byte
		for _, ev := range sseEvents(rec.body) {
			out = append(out, ev.data)
		}
		return out
	}
	return [][]byte{rec.body}
}

// readJSON checks the method and path of a request and decodes its JSON body; on a mismatch
// it answers 404 and fails the test.
func readJSON(t *testing.T, rec *recording, w http.ResponseWriter, r *http.Request, path string) (map[string]any, bool) {
	if r.Method != http.MethodPost || r.URL.Path != path {
		refuse(t, rec, w, http.StatusNotFound, `{"error":{"message":"replay: unexpected `+r.Method+" "+r.URL.Path+`"}}`)
		return nil, false
	}
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		refuse(t, rec, w, http.StatusBadRequest, `{"error":{"message":"replay: the body is not JSON"}}`)
		return nil, false
	}
	return req, true
}

func wantStream(t *testing.T, rec *recording, w http.ResponseWriter, got any, stream bool) bool {
	if got == true != stream {
		refuse(t, rec, w, http.StatusBadRequest, fmt.Sprintf(`{"error":{"message":"replay: the request has stream %v, the recording answers stream=%v"}}`, got, stream))
		return false
	}
	return true
}

// refuse answers a request the real provider would not have answered with the recording,
// and fails the test: a replay must never pass on the fake's own error.
func refuse(t *testing.T, rec *recording, w http.ResponseWriter, status int, body string) {
	t.Errorf("%s: the fake upstream refused the gateway's request: %d %s", rec.ID, status, body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// write sends the recorded status, headers and body. A recording that kept no Content-Type
// gets the one its provider sends.
func write(w http.ResponseWriter, rec *recording, body []byte, stream bool) {
	h := w.Header()
	for k, v := range rec.Headers {
		h.Set(k, v)
	}
	if h.Get("Content-Type") == "" {
		switch {
		case rec.wire() == "bedrock" && stream:
			h.Set("Content-Type", "application/vnd.amazon.eventstream")
		case stream && rec.Status == http.StatusOK:
			h.Set("Content-Type", "text/event-stream")
		default:
			h.Set("Content-Type", "application/json")
		}
	}
	w.WriteHeader(rec.Status)
	_, _ = w.Write(body)
}

package vertex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/vertexfake"
)

var multibyteAnswer = &anthropicfake.Answer{
	Blocks: []anthropicfake.Block{
		anthropicfake.Thinking("Denken…"),
		anthropicfake.Text("Grüße — 日本語 🦊 ñ"),
		anthropicfake.ToolUse("toolu_1", "lookup", `{"q":"café \"x\" 🦊"}`),
	},
	StopReason: "tool_use",
	Usage:      anthropicfake.Usage{Input: 10, Output: 5},
}

// chunks serves HttpBody chunks as a StreamRawPredict receive would, then end.
func chunks(parts [][]byte, end error) func() (*httpbody.HttpBody, error) {
	return func() (*httpbody.HttpBody, error) {
		if len(parts) == 0 {
			return nil, end
		}
		p := parts[0]
		parts = parts[1:]
		return &httpbody.HttpBody{ContentType: "text/event-stream", Data: p}, nil
	}
}

func claudeTranscript(t *testing.T, parts [][]byte, end error) []byte {
	t.Helper()
	r := &chunkReader{ctx: context.Background(), recv: chunks(parts, end), cancel: func() {}}
	return transcript(t, anthropic.NewStream(context.Background(), r, Name, false))
}

// TestChunkReaderAnyCut: however the HttpBody chunks cut the event stream (one byte at a
// time, inside every multi-byte character, at every single position), the deltas are those
// of the whole stream.
func TestChunkReaderAnyCut(t *testing.T) {
	sse := []byte(anthropicfake.SSE(multibyteAnswer.Events("claude-sonnet-4-5")))
	want := claudeTranscript(t, [][]byte{sse}, io.EOF)
	if !bytes.Contains(want, []byte("日本語")) || !bytes.HasSuffix(want, []byte("EOF\n")) {
		t.Fatalf("whole stream:\n%s", want)
	}
	var bytewise [][]byte
	for i := range sse {
		bytewise = append(bytewise, sse[i:i+1])
	}
	if got := claudeTranscript(t, bytewise, io.EOF); !bytes.Equal(got, want) {
		t.Errorf("one byte per chunk:\n%s", got)
	}
	if got := claudeTranscript(t, vertexfake.Awkward(sse), io.EOF); !bytes.Equal(got, want) {
		t.Errorf("awkward chunks:\n%s", got)
	}
	for i := 1; i < len(sse); i++ {
		if got := claudeTranscript(t, [][]byte{sse[:i], {}, sse[i:]}, io.EOF); !bytes.Equal(got, want) {
			t.Fatalf("cut at %d:\n%s", i, got)
		}
	}
}

// TestChunkReaderFailures: a status after some chunks is classified (a complaint about the
// request is a broken stream by then), and a stream that ends cleanly before message_stop
// is broken, never a success.
func TestChunkReaderFailures(t *testing.T) {
	sse := []byte(anthropicfake.SSE(multibyteAnswer.Events("claude-sonnet-4-5")))
	half := vertexfake.Awkward(sse)
	half = half[:len(half)/2]
	for _, tt := range []struct {
		end   error
		class providers.Class
	}{
		{status.Error(codes.ResourceExhausted, "quota"), providers.RateLimited},
		{status.Error(codes.InvalidArgument, "late complaint"), providers.StreamBroken},
		{io.EOF, providers.StreamBroken},
	} {
		r := &chunkReader{ctx: context.Background(), recv: chunks(half, tt.end), cancel: func() {}}
		s := anthropic.NewStream(context.Background(), r, Name, false)
		var err error
		for err == nil {
			_, err = s.Next()
		}
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Class != tt.class {
			t.Errorf("%v: got %v, want %s", tt.end, err, tt.class)
		}
	}
}

// TestClaudeBodies: the Messages body Claude on Vertex AI gets from a Messages door request:
// anthropic_version in the body, no model, the client's betas as anthropic_beta, and a
// system message inside the conversation hoisted into system; the count-tokens body names
// the model (without the resource path) and has no output maximum or stream.
func TestClaudeBodies(t *testing.T) {
	req := anthropicMessages(t, `{"model":"gw/claude","max_tokens":2048,"stream":true,"system":"Be brief.",
		"thinking":{"type":"enabled","budget_tokens":1024},"metadata":{"user_id":"u1"},
		"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"system","content":"Now in French."},{"role":"user","content":"ça va?"}]}`,
		"interleaved-thinking-2025-05-14", "context-1m-2025-08-07")
	var body map[string]json.RawMessage
	if err := json.Unmarshal(claudeBody(req, providers.Target{Model: "claude-sonnet-4-5@20250929"}, true).GetData(), &body); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"anthropic_version": `"vertex-2023-10-16"`,
		"anthropic_beta":    `["interleaved-thinking-2025-05-14","context-1m-2025-08-07"]`,
		"system":            `[{"type":"text","text":"Be brief."},{"type":"text","text":"Now in French."}]`,
		"messages":          `[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":[{"type":"text","text":"ça va?"}]}]`,
		"stream":            `true`,
		"max_tokens":        `2048`,
	} {
		if got := string(body[k]); got != want {
			t.Errorf("%s: %s, want %s", k, got, want)
		}
	}
	if _, ok := body["model"]; ok {
		t.Errorf("the body names the model")
	}

	p := &Provider{project: "p", location: "us-east5"}
	endpoint, id, ok := p.countEndpoint("claude-sonnet-4-5@20250929")
	if !ok || endpoint != "projects/p/locations/us-east5/publishers/anthropic/models/count-tokens" || id != "claude-sonnet-4-5@20250929" {
		t.Errorf("count endpoint %q %q %v", endpoint, id, ok)
	}
	if e, id, ok := p.countEndpoint("projects/q/locations/eu/publishers/anthropic/models/claude-haiku-4-5@20251001"); !ok ||
		e != "projects/q/locations/eu/publishers/anthropic/models/count-tokens" || id != "claude-haiku-4-5@20251001" {
		t.Errorf("count endpoint of a resource name %q %q %v", e, id, ok)
	}
	if _, _, ok := p.countEndpoint("projects/q/locations/eu/endpoints/123"); ok {
		t.Error("a self-deployed endpoint has a count-tokens endpoint")
	}
}

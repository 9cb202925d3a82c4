package vertex

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/anthropic/anthropicfake"
	"github.com/fngate/fngate/core/providers/vertex/vertexfake"
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

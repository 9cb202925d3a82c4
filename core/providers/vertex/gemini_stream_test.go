package vertex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
)

// recorded replays a stream file: a JSON array of GenerateContentResponse messages (the
// REST API's JSON), where {"$status": {"code": N, "message": "..."}} stands for the failure
// status the receive returns at that point. After the last item the stream ends cleanly.
func recorded(t *testing.T, path string) func() (*aiplatformpb.GenerateContentResponse, error) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatal(err)
	}
	return func() (*aiplatformpb.GenerateContentResponse, error) {
		if len(items) == 0 {
			return nil, io.EOF
		}
		item := items[0]
		items = items[1:]
		var st struct {
			Status *struct {
				Code    codes.Code `json:"code"`
				Message string     `json:"message"`
			} `json:"$status"`
		}
		if json.Unmarshal(item, &st) == nil && st.Status != nil {
			return nil, status.Error(st.Status.Code, st.Status.Message)
		}
		var resp aiplatformpb.GenerateContentResponse
		if err := protojson.Unmarshal(item, &resp); err != nil {
			t.Fatal(err)
		}
		return &resp, nil
	}
}

// transcript reads a stream to its end and writes one line per result: the delta as JSON,
// the classified error, or EOF. Tool calls the provider gave no id get one from a counter,
// as the gateway gives them one.
func transcript(t *testing.T, s llm.Stream) []byte {
	t.Helper()
	ids := counter()
	var out bytes.Buffer
	for range 1000 {
		d, err := s.Next()
		if err == io.EOF {
			out.WriteString("EOF\n")
			return out.Bytes()
		}
		if err != nil {
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("an error that is not *providers.Error: %v", err)
			}
			fmt.Fprintf(&out, "error class=%s status=%d code=%s message=%q\n", pe.Class, pe.Status, pe.Code, pe.Message)
			if _, again := s.Next(); again != err {
				t.Errorf("the stream did not repeat its failure: %v", again)
			}
			return out.Bytes()
		}
		for i := range d.ToolCalls {
			if tc := &d.ToolCalls[i]; tc.ID == "" && tc.Name != "" {
				tc.ID = ids()
			}
		}
		b, _ := json.Marshal(deltaJSON(d))
		out.Write(b)
		out.WriteByte('\n')
	}
	t.Fatal("the stream does not end")
	return nil
}

type toolCallJSON struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// deltaJSON is a delta in the transcripts' shape: the text as content, OpenAI's
// finish_reason and usage object.
func deltaJSON(d llm.Delta) any {
	var calls []toolCallJSON
	for _, tc := range d.ToolCalls {
		calls = append(calls, toolCallJSON(tc))
	}
	var finish string
	if d.Stop != "" {
		finish = openai.FinishReason(d.Stop)
	}
	var usage json.RawMessage
	if d.Usage != nil {
		usage = openai.AppendUsage(nil, d.Usage)
	}
	return struct {
		Content      string          `json:"content,omitempty"`
		Thinking     string          `json:"thinking,omitempty"`
		ToolCalls    []toolCallJSON  `json:"tool_calls,omitempty"`
		FinishReason string          `json:"finish_reason,omitempty"`
		Usage        json.RawMessage `json:"usage,omitempty"`
	}{d.Text, d.Thinking, calls, finish, usage}
}

// TestGeminiStreamGolden replays each recorded stream in testdata/gemini/stream and compares
// the deltas with its golden transcript. Thoughts are shown for the streams whose name
// starts with thoughts_, as for a client that asked for thinking.
func TestGeminiStreamGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "gemini/stream", ".json") {
		t.Run(name, func(t *testing.T) {
			cancelled := false
			s := newGeminiStream(context.Background(), recorded(t, filepath.Join("testdata", "gemini", "stream", name+".json")),
				func() { cancelled = true }, strings.HasPrefix(name, "thoughts_"))
			got := transcript(t, s)
			s.Close()
			s.Close()
			if !cancelled {
				t.Error("Close did not end the call")
			}
			golden.CheckIndented(t, filepath.Join("testdata", "gemini", "stream", name+".golden.txt"), got)
		})
	}
}

// TestGeminiStreamCancelledByGateway: when the gateway cancels the attempt (here its idle
// timer), the interrupted receive's Canceled status is reported as the gateway's cause.
func TestGeminiStreamCancelledByGateway(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	first := true
	recv := func() (*aiplatformpb.GenerateContentResponse, error) {
		if first {
			first = false
			return &aiplatformpb.GenerateContentResponse{Candidates: []*aiplatformpb.Candidate{{Content: &aiplatformpb.Content{
				Role: "model", Parts: []*aiplatformpb.Part{{Data: &aiplatformpb.Part_Text{Text: "partial"}}}}}}}, nil
		}
		cancel(providers.ErrIdleTimeout)
		return nil, status.Error(codes.Canceled, "context canceled")
	}
	s := newGeminiStream(ctx, recv, func() {}, false)
	if d, err := s.Next(); err != nil || d.Text != "partial" {
		t.Fatalf("%v %v", d, err)
	}
	_, err := s.Next()
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Timeout || pe.Message != providers.ErrIdleTimeout.Message || pe.Provider != Name {
		t.Fatalf("got %#v", err)
	}
}

package anthropic

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
)

// TestResponseGolden translates each Messages response in testdata/response and compares the
// chat.completion the gateway would send (fixed id, time and model) with its golden file.
func TestResponseGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "response", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "response", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseResponse(raw)
			if err != nil {
				t.Fatal(err)
			}
			out := openai.AppendChatCompletion(nil, "chatcmpl-golden", 1700000000, "gw/claude", c)
			golden.CheckIndented(t, filepath.Join("testdata", "response", name+".golden.json"), out)
		})
	}
}

// TestFinishReason: stop_reason as a chat client sees it, through the gateway's stop reasons.
func TestFinishReason(t *testing.T) {
	for stop, want := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop",
		"max_tokens": "length", "model_context_window_exceeded": "length",
		"tool_use": "tool_calls", "refusal": "content_filter",
		"some_future_reason": "stop",
	} {
		if got := openai.FinishReason(StopReason(stop)); got != want {
			t.Errorf("finish_reason of %q = %q, want %q", stop, got, want)
		}
	}
}

func TestParseResponseRejects(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		class      providers.Class
	}{
		{"not JSON", `<html>502 Bad Gateway</html>`, providers.Unavailable},
		{"not a message", `{"type":"completion","completion":"hi"}`, providers.Unavailable},
		{"content not an array", `{"type":"message","content":{"type":"text","text":"hi"}}`, providers.Unavailable},
		{"an overloaded error with a 200", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, providers.Overloaded},
		{"an invalid request with a 200", `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, providers.Unavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseResponse([]byte(tt.body))
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			pe, ok := err.(*providers.Error)
			if !ok || pe.Class != tt.class {
				t.Errorf("got %#v, want a *providers.Error of class %s", err, tt.class)
			}
		})
	}
}

// An answer padded with empty content blocks once held some 30 times its size decoded (900 MB
// from a 32 MB body); past maxBlocks it is refused, as unavailable, before it takes the memory.
func TestParseResponseBoundsContentBlocks(t *testing.T) {
	blocks := func(n int, block string) string {
		return `{"type":"message","content":[` + strings.TrimSuffix(strings.Repeat(block+",", n), ",") + `],"stop_reason":"end_turn"}`
	}
	cases := []struct {
		name string
		body string
		want error
	}{
		{"as many blocks as allowed", blocks(maxBlocks, `{"type":"text","text":"a"}`), nil},
		{"one block too many", blocks(maxBlocks+1, `{"type":"text","text":"a"}`), errTooManyBlocks},
		{"32 MB of empty blocks", blocks((32<<20)/3, `{}`), errTooManyBlocks},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseResponse([]byte(tc.body))
			switch {
			case tc.want == nil:
				if text, _ := c.Text(); err != nil || len(text) != maxBlocks {
					t.Errorf("got %v, want the text of %d blocks", err, maxBlocks)
				}
			default:
				var pe *providers.Error
				if !errors.As(err, &pe) || pe.Class != providers.Unavailable || !errors.Is(err, tc.want) {
					t.Errorf("got %v, want an unavailable error for %v", err, tc.want)
				}
			}
		})
	}
}

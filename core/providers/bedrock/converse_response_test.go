package bedrock

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/golden"
)

// goldenDelta shows one delta in a golden file; Error or EOF ends the list.
type goldenDelta struct {
	Content      string           `json:"content,omitempty"`
	ToolCalls    []goldenToolCall `json:"tool_calls,omitempty"`
	FinishReason string           `json:"finish_reason,omitempty"`
	Usage        json.RawMessage  `json:"usage,omitempty"`
	Error        *goldenError     `json:"error,omitempty"`
	EOF          bool             `json:"eof,omitempty"`
}

type goldenToolCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// TestResponseGolden plays each scripted answer under testdata/response through the fake and
// the real SDK, both as Converse and as ConverseStream, and compares the completion and the
// delta sequence with NAME.golden. When both succeed, the stream assembled the way an OpenAI
// client does must equal the plain completion.
func TestResponseGolden(t *testing.T) {
	p, f := fakeProvider(t)
	req := hello()
	for _, name := range golden.Cases(t, "response", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "response", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var tc struct {
				Answer bedrockfake.Answer `json:"answer"`
			}
			if err := json.Unmarshal(raw, &tc); err != nil {
				t.Fatal(err)
			}
			target := providers.Target{Model: "model-" + name}
			f.Script(target.Model, tc.Answer)

			out := map[string]any{}
			var plain *llm.Answer
			if tc.Answer.Frames == nil { // hand-written frames exist only as a stream
				c, err := p.Generate(ctx, req, target)
				if err != nil {
					out["error"] = errorOf(t, err)
				} else {
					plain = c
					out["completion"] = json.RawMessage(openai.AppendChatCompletion(nil, "chatcmpl-test", 0, "m", c))
				}
			}

			var stream []goldenDelta
			var deltas []llm.Delta
			st, err := p.Stream(ctx, req, target)
			if err == nil {
				deltas, err = streamResult(st)
			}
			for _, d := range deltas {
				// What a Chat Completions client sees: reasoning alone is not shown.
				if openai.Visible(&d) || d.Usage != nil {
					stream = append(stream, renderDelta(d))
				}
			}
			if err != nil {
				stream = append(stream, goldenDelta{Error: errorOf(t, err)})
			} else {
				stream = append(stream, goldenDelta{EOF: true})
				if plain != nil && tc.Answer.EndAfter == 0 {
					sameCompletion(t, assemble(deltas), plain)
				}
			}
			checkDenseIndexes(t, deltas)
			out["stream"] = stream
			b, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "response", name+".golden"), golden.Indent(t, b))
		})
	}
}

// sameCompletion compares two answers as chat completions, tool arguments as JSON values:
// Converse returns a tool's input as a parsed document, which the SDK re-encodes with sorted
// keys, while the stream passes on the model's own text.
func sameCompletion(t *testing.T, got, want *llm.Answer) {
	t.Helper()
	norm := func(a *llm.Answer) []byte {
		c := *a
		c.Parts = slices.Clone(a.Parts)
		for i := range c.Parts {
			p := &c.Parts[i]
			if p.Kind != llm.PartToolUse {
				continue
			}
			var v any
			d := json.NewDecoder(strings.NewReader(p.Input))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Errorf("tool call %s arguments are not JSON: %v: %s", p.ID, err, p.Input)
				continue
			}
			b, _ := json.Marshal(v)
			p.Input = string(b)
		}
		return openai.AppendChatCompletion(nil, "chatcmpl-test", 0, "m", &c)
	}
	if g, w := norm(got), norm(want); !bytes.Equal(g, w) {
		t.Errorf("the assembled stream differs from the plain answer:\n%s\n%s", g, w)
	}
}

func renderDelta(d llm.Delta) goldenDelta {
	g := goldenDelta{Content: d.Text}
	if d.Stop != "" {
		g.FinishReason = openai.FinishReason(d.Stop)
	}
	for _, tc := range d.ToolCalls {
		g.ToolCalls = append(g.ToolCalls, goldenToolCall{Index: tc.Index, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	if d.Usage != nil {
		g.Usage = openai.AppendUsage(nil, d.Usage)
	}
	return g
}

// assemble folds deltas into an answer the way clients fold chunks: text concatenated, each
// tool call's arguments concatenated by index, reasoning as one thinking part, the last stop
// and the merged usage.
func assemble(ds []llm.Delta) *llm.Answer {
	var text, thinking strings.Builder
	var signature string
	a := &llm.Answer{}
	var calls []llm.Part
	for _, d := range ds {
		text.WriteString(d.Text)
		thinking.WriteString(d.Thinking)
		signature += d.Signature
		for _, tc := range d.ToolCalls {
			for len(calls) <= tc.Index {
				calls = append(calls, llm.Part{Kind: llm.PartToolUse})
			}
			call := &calls[tc.Index]
			if tc.ID != "" {
				call.ID, call.Name = tc.ID, tc.Name
			}
			call.Input += tc.Arguments
		}
		if d.Stop != "" {
			a.Stop = d.Stop
		}
		a.Usage.Merge(d.Usage)
	}
	if thinking.Len() > 0 {
		a.Parts = append(a.Parts, llm.Part{Kind: llm.PartThinking, Text: thinking.String(), Signature: signature})
	}
	if text.Len() > 0 || len(calls) == 0 {
		a.Parts = append(a.Parts, llm.Part{Kind: llm.PartText, Text: text.String()})
	}
	a.Parts = append(a.Parts, calls...)
	return a
}

// checkDenseIndexes asserts the OpenAI contract for streamed tool calls: indexes count from 0
// in the order calls start, the first fragment of each carries its id and name, and every
// later fragment belongs to a call that started.
func checkDenseIndexes(t *testing.T, ds []llm.Delta) {
	t.Helper()
	var ids []string
	for _, d := range ds {
		for _, tc := range d.ToolCalls {
			switch {
			case tc.ID != "":
				if tc.Index != len(ids) {
					t.Errorf("tool call %q starts at index %d, want %d", tc.ID, tc.Index, len(ids))
				}
				if slices.Contains(ids, tc.ID) {
					t.Errorf("tool call %q started twice", tc.ID)
				}
				ids = append(ids, tc.ID)
			case tc.Index >= len(ids):
				t.Errorf("arguments for tool index %d, which never started", tc.Index)
			}
		}
	}
}

func TestStopReason(t *testing.T) {
	for in, want := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "model_context_window_exceeded": "length",
		"tool_use": "tool_calls", "guardrail_intervened": "content_filter", "content_filtered": "content_filter",
		"malformed_model_output": "stop", "malformed_tool_use": "stop", "some_future_reason": "stop",
	} {
		stop, malformed := stopReason(typesStopReason(in))
		if got := openai.FinishReason(stop); got != want || malformed != strings.HasPrefix(in, "malformed_") {
			t.Errorf("stopReason(%s) = %s (%s), %v; want %s, %v", in, stop, got, malformed, want, strings.HasPrefix(in, "malformed_"))
		}
	}
}

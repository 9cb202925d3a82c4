package bedrock

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/golden"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/bedrock/bedrockfake"
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
	user := "hi"
	req := &openai.ChatRequest{Messages: []openai.Message{{Role: openai.RoleUser, Content: &user}}}
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
			var plain *openai.Completion
			if tc.Answer.Frames == nil { // hand-written frames exist only as a stream
				c, err := p.Chat(ctx, req, target)
				if err != nil {
					out["error"] = errorOf(t, err)
				} else {
					plain = c
					out["completion"] = json.RawMessage(openai.AppendChatCompletion(nil, "chatcmpl-test", 0, "m", c))
				}
			}

			var stream []goldenDelta
			var deltas []openai.Delta
			st, err := p.ChatStream(ctx, req, target)
			if err == nil {
				deltas, err = streamResult(st)
			}
			for _, d := range deltas {
				stream = append(stream, renderDelta(d))
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

// sameCompletion compares two completions, tool arguments as JSON values: Converse returns
// a tool's input as a parsed document, which the SDK re-encodes with sorted keys, while the
// stream passes on the model's own text.
func sameCompletion(t *testing.T, got, want *openai.Completion) {
	t.Helper()
	norm := func(c *openai.Completion) []byte {
		cc := *c
		cc.ToolCalls = slices.Clone(c.ToolCalls)
		for i := range cc.ToolCalls {
			var v any
			d := json.NewDecoder(strings.NewReader(cc.ToolCalls[i].Function.Arguments))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Errorf("tool call %d arguments are not JSON: %v: %s", i, err, cc.ToolCalls[i].Function.Arguments)
				continue
			}
			b, _ := json.Marshal(v)
			cc.ToolCalls[i].Function.Arguments = string(b)
		}
		return openai.AppendChatCompletion(nil, "chatcmpl-test", 0, "m", &cc)
	}
	if g, w := norm(got), norm(want); !bytes.Equal(g, w) {
		t.Errorf("the assembled stream differs from the plain answer:\n%s\n%s", g, w)
	}
}

func renderDelta(d openai.Delta) goldenDelta {
	g := goldenDelta{Content: d.Content, FinishReason: d.FinishReason}
	for _, tc := range d.ToolCalls {
		g.ToolCalls = append(g.ToolCalls, goldenToolCall{Index: tc.Index, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	if d.Usage != nil {
		g.Usage = d.Usage.AppendJSON(nil)
	}
	return g
}

// assemble folds deltas into a completion the way OpenAI clients fold chunks: content
// concatenated, each tool call's arguments concatenated by index, the last finish reason and
// the merged usage.
func assemble(ds []openai.Delta) *openai.Completion {
	var text strings.Builder
	c := &openai.Completion{}
	for _, d := range ds {
		text.WriteString(d.Content)
		for _, tc := range d.ToolCalls {
			for len(c.ToolCalls) <= tc.Index {
				c.ToolCalls = append(c.ToolCalls, openai.ToolCall{Type: "function"})
			}
			call := &c.ToolCalls[tc.Index]
			if tc.ID != "" {
				call.ID, call.Function.Name = tc.ID, tc.Name
			}
			call.Function.Arguments += tc.Arguments
		}
		if d.FinishReason != "" {
			c.FinishReason = d.FinishReason
		}
		c.Usage.Merge(d.Usage)
	}
	if text.Len() > 0 || len(c.ToolCalls) == 0 {
		s := text.String()
		c.Content = &s
	}
	return c
}

// checkDenseIndexes asserts the OpenAI contract for streamed tool calls: indexes count from 0
// in the order calls start, the first fragment of each carries its id and name, and every
// later fragment belongs to a call that started.
func checkDenseIndexes(t *testing.T, ds []openai.Delta) {
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

func TestFinishReason(t *testing.T) {
	for in, want := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "model_context_window_exceeded": "length",
		"tool_use": "tool_calls", "guardrail_intervened": "content_filter", "content_filtered": "content_filter",
		"malformed_model_output": "stop", "malformed_tool_use": "stop", "some_future_reason": "stop",
	} {
		got, malformed := finishReason(typesStopReason(in))
		if got != want || malformed != strings.HasPrefix(in, "malformed_") {
			t.Errorf("finishReason(%s) = %s, %v; want %s, %v", in, got, malformed, want, strings.HasPrefix(in, "malformed_"))
		}
	}
}

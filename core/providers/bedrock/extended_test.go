package bedrock

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/golden"
)

// TestExtendedGolden sends each extended-profile request under testdata/extended to its
// model (Converse, or InvokeModel for Claude) and compares the body Bedrock got, or the
// refusal of a refuse_* case, with NAME.golden.
func TestExtendedGolden(t *testing.T) {
	p, f := fakeProvider(t)
	for _, name := range golden.Cases(t, "extended", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "extended", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var tc struct {
				Model, API string
				Request    json.RawMessage
			}
			if err := json.Unmarshal(raw, &tc); err != nil {
				t.Fatal(err)
			}
			req, _, oe := openai.DecodeChatProfile(tc.Request, llm.Limits{}, openai.Profile{Extended: true})
			if oe != nil {
				t.Fatalf("the door refuses it: %v", oe)
			}
			got := sentGolden(t, p, f, req, providers.Target{Model: tc.Model, API: tc.API}, strings.HasPrefix(name, "refuse_"))
			golden.Check(t, filepath.Join("testdata", "extended", name+".golden"), got)
		})
	}
}

// TestConverseAnswerToolIsContent: Converse's forced answer tool comes back as the content,
// whole and streamed, finish stop.
func TestConverseAnswerToolIsContent(t *testing.T) {
	p, f := fakeProvider(t)
	body := `{"model":"gw","messages":[{"role":"user","content":"Paris"}],"response_format":{"type":"json_object"}}`
	req, _, oe := openai.DecodeChatProfile([]byte(body), llm.Limits{}, openai.Profile{Extended: true})
	if oe != nil {
		t.Fatal(oe)
	}
	target := providers.Target{Model: "amazon.nova-lite-v1:0"}
	answer := bedrockfake.Answer{StopReason: "tool_use", Blocks: []bedrockfake.Block{{ToolUse: &bedrockfake.ToolUse{ID: "t1", Name: "json_answer", Input: `{"city":"Paris"}`}}}}
	f.Script(target.Model, answer)
	a, err := p.Generate(context.Background(), req, target)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := a.Text(); text != `{"city":"Paris"}` || a.Stop != llm.StopEnd || a.ToolUses() != 0 {
		t.Errorf("answer %q %s", text, a.Stop)
	}
	f.Script(target.Model, answer)
	st, err := p.Stream(context.Background(), req, target)
	if err != nil {
		t.Fatal(err)
	}
	deltas, err := streamResult(st)
	if err != nil {
		t.Fatal(err)
	}
	text, stop := "", llm.StopReason("")
	for _, d := range deltas {
		if len(d.ToolCalls) > 0 {
			t.Errorf("a tool call went out: %+v", d)
		}
		text += d.Text
		if d.Stop != "" {
			stop = d.Stop
		}
	}
	if text != `{"city":"Paris"}` || stop != llm.StopEnd {
		t.Errorf("stream %q %s", text, stop)
	}
}

package anthropic

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/golden"
)

// TestExtendedGolden translates each extended-profile request under testdata/extended for
// its model and compares the Messages body (which must pass the fake's validation) with
// NAME.golden, or the refusal for a case named refuse_*. A case named *_ignored is sent with
// request_profile_ignore: [messages.name].
func TestExtendedGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "extended", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "extended", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				Model   string          `json:"model"`
				Request json.RawMessage `json:"request"`
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			req, _, oe := openai.DecodeChatProfile(c.Request, llm.Limits{}, openai.Profile{Extended: true, NamesOptional: strings.HasSuffix(name, "_ignored")})
			if oe != nil {
				t.Fatalf("the door refuses it: %v", oe)
			}
			m := ModelOf(c.Model)
			if oe := Check(req, m); oe != nil {
				if !strings.HasPrefix(name, "refuse_") {
					t.Fatalf("refused: %v", oe)
				}
				golden.Check(t, filepath.Join("testdata", "extended", name+".golden"), []byte(oe.Param+": "+oe.Message+"\n"))
				return
			}
			if strings.HasPrefix(name, "refuse_") {
				t.Fatal("accepted a refuse_ case")
			}
			body := BuildRequest(req, providers.Target{Model: c.Model}, RequestOptions{Model: m})
			if e := anthropicfake.ValidateBody(body, anthropicfake.Direct); e != nil {
				t.Fatalf("the API would refuse the body: %v\n%s", e, body)
			}
			golden.Check(t, filepath.Join("testdata", "extended", name+".golden"), golden.Indent(t, body))
		})
	}
}

func TestModelOf(t *testing.T) {
	for model, want := range map[string]Structured{
		"claude-sonnet-4-5": Native, "claude-sonnet-4-5-20250929": Native, "claude-haiku-4-5@20251001": Native,
		"us.anthropic.claude-opus-4-5-20251101-v1:0": Native, "claude-opus-4-1": Native, "claude-opus-4-6": Native,
		"claude-sonnet-5": Native, "claude-sonnet-4-20250514": ByTool, "claude-opus-4-20250514": ByTool, "claude-sonnet-4-1": ByTool,
		"claude-3-7-sonnet-latest": ByTool, "claude-3-5-haiku-20241022": ByTool,
		"arn:aws:bedrock:us-east-1:1:application-inference-profile/x": ByTool,
	} {
		if got := ModelOf(model); got.Structured != want || got.OneSampler != (want == Native) {
			t.Errorf("%s: %v, want %v", model, got, want)
		}
	}
}

// TestAnswerToolIsContent: on a route without native structured output the answer tool's
// call comes back as OpenAI's response_format answer, whole and streamed: the JSON as the
// content, finish stop, no tool call; a client tool called beside it stays a tool call.
func TestAnswerToolIsContent(t *testing.T) {
	fake := anthropicfake.New()
	defer fake.Close()
	fake.Script = anthropicfake.Model
	pv, err := New(&config.Connection{Kind: Kind, APIKey: anthropicfake.APIKey, BaseURL: fake.URL}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`
	body := `{"model":"gw","messages":[{"role":"user","content":"Paris"}],"response_format":{"type":"json_schema","json_schema":{"name":"trip","schema":` + schema + `}}}`
	req, _, oe := openai.DecodeChatProfile([]byte(body), llm.Limits{}, openai.Profile{Extended: true})
	if oe != nil {
		t.Fatal(oe)
	}
	target := providers.Target{Model: "claude-3-5-haiku-20241022"}
	if oe := pv.Check(req, target); oe != nil {
		t.Fatal(oe)
	}
	a, err := pv.Generate(context.Background(), req, target)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := a.Text(); text != `{"city":"Paris"}` || a.Stop != llm.StopEnd || a.ToolUses() != 0 || a.Raw != nil {
		t.Errorf("answer: %q %s %d tool calls", text, a.Stop, a.ToolUses())
	}
	st, err := pv.Stream(context.Background(), req, target)
	if err != nil {
		t.Fatal(err)
	}
	text, stop, calls := "", llm.StopReason(""), 0
	for {
		d, err := st.Next()
		if err != nil {
			break
		}
		text += d.Text
		calls += len(d.ToolCalls)
		if d.Stop != "" {
			stop = d.Stop
		}
	}
	st.Close()
	if text != `{"city":"Paris"}` || stop != llm.StopEnd || calls != 0 {
		t.Errorf("stream: %q %s %d tool call deltas", text, stop, calls)
	}

	// A client tool and the answer tool in one turn: the client's call keeps index 0.
	both := &llm.Answer{Stop: llm.StopToolUse, Parts: []llm.Part{
		{Kind: llm.PartToolUse, ID: "a", Name: "trip_answer", Input: `{"x":1}`},
		{Kind: llm.PartToolUse, ID: "b", Name: "lookup", Input: `{}`}}}
	providers.AnswerAsContent(both, "trip_answer")
	if text, _ := both.Text(); text != `{"x":1}` || both.ToolUses() != 1 || both.Stop != llm.StopToolUse {
		t.Errorf("both: %+v", both)
	}
}

package bedrock

import (
	"bytes"
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

// TestRequestGolden translates each Chat Completions request under testdata/request for
// Converse and compares the body the fake received (as the SDK serialized it, and as the
// fake validated it the way Bedrock does) with NAME.golden. Requests Check refuses golden the
// refusal instead, and must not reach the network. The model ids name Claude models, sent
// to Converse by the route's api.
func TestRequestGolden(t *testing.T) {
	p, f := fakeProvider(t)
	for _, name := range golden.Cases(t, "request", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "request", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var tc struct {
				MaxOutputTokens int             `json:"max_output_tokens"`
				Request         json.RawMessage `json:"request"`
			}
			if err := json.Unmarshal(raw, &tc); err != nil {
				t.Fatal(err)
			}
			req, oe := openai.DecodeChatRequest(tc.Request, llm.Limits{})
			if oe != nil {
				t.Fatalf("the gateway refuses the request itself: %v", oe)
			}
			target := providers.Target{Model: "anthropic.claude-" + name + "-v1:0", API: "converse", MaxOutputTokens: tc.MaxOutputTokens}
			got := sentGolden(t, p, f, req, target, strings.HasPrefix(name, "refuse_"))
			golden.Check(t, filepath.Join("testdata", "request", name+".golden"), got)
		})
	}
}

// sentGolden checks req on target and, when it passes, sends it through the route's API,
// plain and streamed (Converse and ConverseStream, or InvokeModel and
// InvokeModelWithResponseStream), which must send the same body; it returns that body as the
// fake accepted it, or the refusal, indented. refused says which the case expects.
func sentGolden(t *testing.T, p *Provider, f *bedrockfake.Server, req *llm.Request, target providers.Target, refused bool) []byte {
	t.Helper()
	before := len(f.Requests())
	if oe := p.Check(req, target); oe != nil {
		if !refused {
			t.Errorf("refused a request the case name says is fine: %v", oe)
		}
		if n := len(f.Requests()); n != before {
			t.Errorf("a refused request reached Bedrock (%d requests)", n-before)
		}
		b, _ := json.Marshal(map[string]any{"refused": map[string]any{
			"status": oe.Status, "type": oe.Type, "param": oe.Param, "code": oe.Code, "message": oe.Message}})
		return golden.Indent(t, b)
	}
	if refused {
		t.Errorf("accepted a request the case name says is refused")
	}
	plainOp, streamOp := bedrockfake.OpConverse, bedrockfake.OpConverseStream
	if a, _ := apiOf(target); a == viaInvoke {
		plainOp, streamOp = bedrockfake.OpInvoke, bedrockfake.OpInvokeStream
	}
	f.Script(target.Model, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "ok"}}})
	if _, err := p.Generate(ctx, req, target); err != nil {
		t.Fatalf("Generate: %v (fake: %s)", err, f.Last().Invalid)
	}
	plain := f.Last()
	if plain.ModelID != target.Model || plain.Op != plainOp {
		t.Errorf("went to model %q %s, want %q %s", plain.ModelID, plain.Op, target.Model, plainOp)
	}
	st, err := p.Stream(ctx, req, target)
	if err != nil {
		t.Fatalf("Stream: %v (fake: %s)", err, f.Last().Invalid)
	}
	if _, err := streamResult(st); err != nil {
		t.Fatalf("stream: %v", err)
	}
	streamed := f.Last()
	if streamed.Op != streamOp || !bytes.Equal(streamed.Body, plain.Body) {
		t.Errorf("the %s body differs from the %s one:\n%s\n%s", streamOp, plainOp, streamed.Body, plain.Body)
	}
	return golden.Indent(t, plain.Body)
}

func TestToolUseID(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, tc := range []struct {
		in   string
		same bool
	}{
		{"call_abc-123", true},
		{"tooluse_AbC", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"call.1", false},
		{"call 1", false},
		{"call_é", false},
		{long, false},
	} {
		got := toolUseID(tc.in)
		if (got == tc.in) != tc.same {
			t.Errorf("toolUseID(%q) = %q, kept as is: %v, want %v", tc.in, got, got == tc.in, tc.same)
		}
		if !validToolUseID(got) {
			t.Errorf("toolUseID(%q) = %q, not a valid Bedrock toolUseId", tc.in, got)
		}
		if toolUseID(tc.in) != got {
			t.Errorf("toolUseID(%q) is not stable", tc.in)
		}
	}
	// Ids that clean up alike stay apart, so results still find their calls.
	seen := map[string]string{}
	for _, id := range []string{"call.1", "call_1", "call/1", "call:1", long, long + "y", strings.Repeat("a", 65), strings.Repeat("a", 64) + "b"} {
		got := toolUseID(id)
		if prev, dup := seen[got]; dup {
			t.Errorf("toolUseID(%q) = toolUseID(%q) = %q", id, prev, got)
		}
		seen[got] = id
	}
}

package bedrock

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/golden"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/bedrock/bedrockfake"
)

// TestMessagesGolden translates each Anthropic Messages request under testdata/messages, as
// the Messages door decodes it, for the case's model (and route api), and compares what
// Bedrock received with NAME.golden: the Converse body, or the InvokeModel body, both as the
// fake accepted them. InvokeModel and InvokeModelWithResponseStream (ConverseStream) must
// get the same body. Requests the route refuses golden the refusal, and reach no one.
func TestMessagesGolden(t *testing.T) {
	p, f := fakeProvider(t)
	for _, name := range golden.Cases(t, "messages", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "messages", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var tc struct {
				Model   string          `json:"model"`
				API     string          `json:"api"`
				Betas   []string        `json:"betas"`
				Request json.RawMessage `json:"request"`
			}
			if err := json.Unmarshal(raw, &tc); err != nil {
				t.Fatal(err)
			}
			h := http.Header{"Anthropic-Version": {"2023-06-01"}}
			if len(tc.Betas) > 0 {
				h.Set("Anthropic-Beta", strings.Join(tc.Betas, ","))
			}
			req, oe := messages.Decode(tc.Request, h, messages.Limits{})
			if oe != nil {
				t.Fatalf("the Messages door refuses the request itself: %v", oe)
			}
			req.PassThrough = llm.WireAnthropic
			target := providers.Target{Model: tc.Model, API: tc.API}
			refused := strings.HasPrefix(name, "refuse_")
			a, _ := apiOf(target)
			var got []byte
			if a == viaInvoke {
				got = invokeGolden(t, p, f, req, target, refused)
			} else {
				got = converseGolden(t, p, f, req, target, refused)
			}
			if wantInvoke := strings.Contains(name, "invoke"); wantInvoke != (a == viaInvoke) {
				t.Errorf("the route went to the other API (invoke: %v)", a == viaInvoke)
			}
			golden.Check(t, filepath.Join("testdata", "messages", name+".golden"), got)
		})
	}
}

// invokeGolden is converseGolden for InvokeModel.
func invokeGolden(t *testing.T, p *Provider, f *bedrockfake.Server, req *llm.Request, target providers.Target, refused bool) []byte {
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
	f.Script(target.Model, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "ok"}}})
	if _, err := p.Generate(ctx, req, target); err != nil {
		t.Fatalf("Generate: %v (fake: %s)", err, f.Last().Invalid)
	}
	plain := f.Last()
	if plain.ModelID != target.Model || plain.Op != bedrockfake.OpInvoke {
		t.Errorf("went to model %q %s, want %q invoke", plain.ModelID, plain.Op, target.Model)
	}
	st, err := p.Stream(ctx, req, target)
	if err != nil {
		t.Fatalf("Stream: %v (fake: %s)", err, f.Last().Invalid)
	}
	if _, err := streamResult(st); err != nil {
		t.Fatalf("stream: %v", err)
	}
	streamed := f.Last()
	if streamed.Op != bedrockfake.OpInvokeStream || !bytes.Equal(streamed.Body, plain.Body) {
		t.Errorf("InvokeModelWithResponseStream body differs from InvokeModel:\n%s\n%s", streamed.Body, plain.Body)
	}
	return golden.Indent(t, plain.Body)
}

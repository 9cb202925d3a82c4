package bedrock

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
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
			req, oe := messages.Decode(tc.Request, h, llm.Limits{})
			if oe != nil {
				t.Fatalf("the Messages door refuses the request itself: %v", oe)
			}
			req.PassThrough = llm.WireAnthropic
			target := providers.Target{Model: tc.Model, API: tc.API}
			got := sentGolden(t, p, f, req, target, strings.HasPrefix(name, "refuse_"))
			if a, _ := apiOf(target); strings.Contains(name, "invoke") != (a == viaInvoke) {
				t.Errorf("the route went to the other API (invoke: %v)", a == viaInvoke)
			}
			golden.Check(t, filepath.Join("testdata", "messages", name+".golden"), got)
		})
	}
}

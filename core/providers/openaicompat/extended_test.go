package openaicompat_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
	"github.com/fngate/fngate/internal/openaifake"
)

var kinds = []string{"openai", "openrouter", "vllm", "sglang", "openai-compatible", "ollama"}

// TestExtendedGolden renders each extended-profile request under testdata/extended for
// every kind and compares with NAME.golden, one section per kind: the body the server got
// (plain and streamed must agree but for stream), or the kind's refusal, which must not
// reach the network. A case named *_ignored is sent with request_profile_ignore:
// [messages.name].
func TestExtendedGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "extended", ".json") {
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "extended", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			profile := openai.Profile{Extended: true, NamesOptional: strings.HasSuffix(name, "_ignored")}
			req, _, oe := openai.DecodeChatProfile(body, llm.Limits{}, profile)
			if oe != nil {
				t.Fatalf("the door refuses it: %v", oe)
			}
			var out strings.Builder
			for _, kind := range kinds {
				out.WriteString("== " + kind + "\n")
				out.Write(sent(t, kind, req))
			}
			golden.Check(t, filepath.Join("testdata", "extended", name+".golden"), []byte(out.String()))
		})
	}
}

// sent is what kind makes of req: the body its server received, indented, or the refusal.
func sent(t *testing.T, kind string, req *llm.Request) []byte {
	t.Helper()
	fake := openaifake.New()
	defer fake.Close()
	fake.Script = openaifake.Model
	p := newProvider(t, kind, fake.BaseURL())
	target := providers.Target{Model: "up-model"}
	if oe := p.Check(req, target); oe != nil {
		if len(fake.Requests()) != 0 {
			t.Errorf("%s: a refused request reached the server", kind)
		}
		return []byte("refused: " + oe.Param + ": " + oe.Message + "\n")
	}
	if _, err := p.Generate(context.Background(), req, target); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	st, err := p.Stream(context.Background(), req, target)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	drainStream(t, st)
	reqs := fake.Requests()
	plain, streamed := string(reqs[0].Raw), string(reqs[1].Raw)
	if want := strings.TrimSuffix(plain, "}") + `,"stream":true,"stream_options":{"include_usage":true}}`; streamed != want &&
		!strings.Contains(streamed, `"stream":true`) {
		t.Errorf("%s: the streamed body differs:\n%s\n%s", kind, plain, streamed)
	}
	return golden.Indent(t, reqs[0].Raw)
}

// TestExtendedCompletionBody: the legacy completion carries the sampling fields to every
// kind that takes them.
func TestExtendedCompletionBody(t *testing.T) {
	req, _, oe := openai.DecodeCompletionProfile([]byte(`{"model":"gw","prompt":"p","max_tokens":3,"top_p":0.5,"stop":"x","seed":1,"presence_penalty":1,"frequency_penalty":-1}`), openai.Profile{Extended: true})
	if oe != nil {
		t.Fatal(oe)
	}
	for _, kind := range kinds {
		got := string(sent(t, kind, req))
		for _, want := range []string{`"top_p": 0.5`, `"stop": [`, `"seed": 1`, `"presence_penalty": 1`, `"frequency_penalty": -1`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: %s lacks %s", kind, got, want)
			}
		}
	}
}

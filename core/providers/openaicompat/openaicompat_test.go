package openaicompat_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/internal/golden"
	"github.com/fngate/fngate/internal/openaifake"
)

func newProvider(t *testing.T, kind, baseURL string) providers.Provider {
	t.Helper()
	p, err := openaicompat.New(&config.Connection{Name: kind, Kind: kind, APIKey: "sk-test-0123456789", BaseURL: baseURL}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const fullRequest = `{
  "model": "gw-model",
  "messages": [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "weather in \"Paris\"?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
  ],
  "max_completion_tokens": 64,
  "temperature": 0.25,
  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
  "tool_choice": "auto",
  "user": "u-1",
  "metadata": {"team": "x"},
  "stream": true
}`

// TestUpstreamBodies renders one request for each kind and compares with golden files: the
// output maximum's field name, stream_options and the never-forwarded labels are the points.
func TestUpstreamBodies(t *testing.T) {
	req, oe := openai.DecodeChatRequest([]byte(fullRequest), llm.Limits{})
	if oe != nil {
		t.Fatal(oe)
	}
	for _, kind := range []string{"openai", "openrouter", "vllm", "sglang", "openai-compatible", "ollama"} {
		t.Run(kind, func(t *testing.T) {
			fake := openaifake.New()
			defer fake.Close()
			p := newProvider(t, kind, fake.BaseURL())
			check := req
			if kind == "ollama" {
				c := *req
				c.ToolChoice = nil // Ollama refuses an explicit tool_choice
				check = &c
			}
			if oe := p.Check(check, providers.Target{Model: "up-model"}); oe != nil {
				t.Fatalf("refused: %v", oe)
			}
			st, err := p.Stream(context.Background(), check, providers.Target{Model: "up-model"})
			if err != nil {
				t.Fatal(err)
			}
			drainStream(t, st)
			got := fake.Requests()[0]
			if h := got.Header.Get("Authorization"); h != "Bearer sk-test-0123456789" {
				t.Errorf("Authorization %q", h)
			}
			golden.Check(t, filepath.Join("testdata", kind+".request.json"), golden.Indent(t, got.Raw))
		})
	}
}

func drainStream(t *testing.T, st llm.Stream) []llm.Delta {
	t.Helper()
	defer st.Close()
	var out []llm.Delta
	for {
		d, err := st.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
}

// TestProfileRefusals: each kind refuses what its servers cannot honour, before any I/O.
func TestProfileRefusals(t *testing.T) {
	strict := `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","strict":true}}]}`
	required := `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`
	named := `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`
	auto := `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto"}`
	cases := []struct {
		kind, body, param string // param "" = accepted
	}{
		{"openai", strict, ""},
		{"openai", named, ""},
		{"openrouter", required, ""},
		{"vllm", strict, "tools"},
		{"vllm", named, ""},
		{"sglang", strict, "tools"},
		{"openai-compatible", strict, "tools"},
		{"openai-compatible", required, "tool_choice"},
		{"openai-compatible", named, "tool_choice"},
		{"openai-compatible", auto, ""},
		{"ollama", auto, "tool_choice"},
		{"ollama", strict, "tools"},
	}
	for _, tc := range cases {
		req, oe := openai.DecodeChatRequest([]byte(tc.body), llm.Limits{})
		if oe != nil {
			t.Fatal(oe)
		}
		p := newProvider(t, tc.kind, "http://127.0.0.1:1/v1")
		oe = p.Check(req, providers.Target{Model: "x"})
		switch {
		case tc.param == "" && oe != nil:
			t.Errorf("%s refused %s: %v", tc.kind, tc.body, oe)
		case tc.param != "" && (oe == nil || oe.Param != tc.param || oe.Status != 400):
			t.Errorf("%s accepted or misnamed %s: %v", tc.kind, tc.body, oe)
		}
	}
}

// OpenRouter: comment lines are skipped, reasoning is not returned, and an error event inside a
// 200 stream is a failure, classified by its code.
func TestOpenRouterStream(t *testing.T) {
	fake := openaifake.New()
	defer fake.Close()
	p := newProvider(t, "openrouter", fake.BaseURL())
	req, _ := openai.DecodeChatRequest([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`), llm.Limits{})

	fake.Enqueue(openaifake.Reply{Text: "the answer", Reasoning: "let me think", Comments: true, PromptTokens: 3, CompletionTokens: 9})
	st, err := p.Stream(context.Background(), req, providers.Target{Model: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var usage *llm.Usage
	for _, d := range drainStream(t, st) {
		text += d.Text
		if d.Usage != nil {
			usage = d.Usage
		}
	}
	if text != "the answer" || usage == nil || *usage.OutputTokens != 9 {
		t.Errorf("text %q usage %+v", text, usage)
	}

	fake.Enqueue(openaifake.Reply{ErrorEventAfter: -1, ErrorEventCode: 429})
	st, err = p.Stream(context.Background(), req, providers.Target{Model: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Next()
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.RateLimited {
		t.Errorf("in-band 429 gave %v", err)
	}
}

func TestRequiresKeyAndURL(t *testing.T) {
	if _, err := openaicompat.New(&config.Connection{Kind: "openai"}, providers.Env{}); err == nil {
		t.Error("openai without api_key accepted")
	}
	if _, err := openaicompat.New(&config.Connection{Kind: "openai-compatible"}, providers.Env{}); err == nil {
		t.Error("openai-compatible without base_url accepted")
	}
	if _, err := openaicompat.New(&config.Connection{Kind: "ollama"}, providers.Env{}); err != nil {
		t.Errorf("ollama needs neither key nor URL: %v", err)
	}
}

// An upstream that repeats "event: <1 MB>" lines without ending the event once grew the SSE
// reader's name buffer without limit (5.9 GB from one request); now the stream breaks off
// cleanly, after the text already read.
func TestEventNameFloodBreaksTheStream(t *testing.T) {
	fake := openaifake.New()
	defer fake.Close()
	p := newProvider(t, "openai", fake.BaseURL())
	req, _ := openai.DecodeChatRequest([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`), llm.Limits{})
	flood := strings.Repeat("event: "+strings.Repeat("e", 1<<20)+"\n", 16)
	fake.Enqueue(openaifake.Reply{Text: "one two", Inject: []byte(flood), InjectAfter: 1})
	st, err := p.Stream(context.Background(), req, providers.Target{Model: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text string
	for err == nil {
		var d llm.Delta
		d, err = st.Next()
		text += d.Text
	}
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.StreamBroken || !errors.Is(err, providers.ErrSSETooLarge) {
		t.Errorf("got %v, want a stream_broken error for the oversized event", err)
	}
	if text != "one" {
		t.Errorf("text before the flood %q, want %q", text, "one")
	}
}

// TestBaseURLQueryIsKept: the endpoint path joins the path of base_url and base_url's query
// stays the query (Azure's deployments take ?api-version=), on every call.
func TestBaseURLQueryIsKept(t *testing.T) {
	chat, oe := openai.DecodeChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), llm.Limits{})
	if oe != nil {
		t.Fatal(oe)
	}
	decoded, oe := openai.DecodeCompletion([]byte(`{"model":"m","prompt":"hi"}`))
	if oe != nil {
		t.Fatal(oe)
	}
	comp := decoded.Request()
	calls := map[string]func(providers.Provider) error{
		"chat": func(p providers.Provider) error {
			_, err := p.Generate(context.Background(), chat, providers.Target{Model: "m"})
			return err
		},
		"chat stream": func(p providers.Provider) error {
			st, err := p.Stream(context.Background(), chat, providers.Target{Model: "m"})
			if err == nil {
				st.Close()
			}
			return err
		},
		"completion": func(p providers.Provider) error {
			_, err := p.Generate(context.Background(), comp, providers.Target{Model: "m"})
			return err
		},
	}
	paths := map[string]string{"chat": "/v1/chat/completions", "chat stream": "/v1/chat/completions", "completion": "/v1/completions"}
	for _, tc := range []struct{ suffix, query string }{
		{"", ""},
		{"/", ""},
		{"?api-version=2024-10-21", "api-version=2024-10-21"},
		{"/?api-version=2024-10-21&api-key=azure-key-0123456789", "api-version=2024-10-21&api-key=azure-key-0123456789"},
	} {
		for name, call := range calls {
			t.Run(name+" "+tc.suffix, func(t *testing.T) {
				fake := openaifake.New()
				defer fake.Close()
				if err := call(newProvider(t, "openai-compatible", fake.BaseURL()+tc.suffix)); err != nil {
					t.Fatal(err)
				}
				got := fake.Requests()
				if len(got) != 1 || got[0].Path != paths[name] || got[0].Query != tc.query {
					t.Fatalf("requests %+v, want path %s and query %q", got, paths[name], tc.query)
				}
			})
		}
	}
}

package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/anthropicfake"
)

func newProvider(t *testing.T, conn *config.Connection) *Provider {
	t.Helper()
	p, err := New(conn, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Provider)
}

func TestNew(t *testing.T) {
	if _, err := New(&config.Connection{Kind: Kind}, providers.Env{}); err == nil || !strings.Contains(err.Error(), "api_key") {
		t.Errorf("no api_key: got %v", err)
	}
	if _, err := New(&config.Connection{Kind: Kind, APIKey: "k", BaseURL: "api.anthropic.com"}, providers.Env{}); err == nil {
		t.Error("a base_url without a scheme was accepted")
	}
	p := newProvider(t, &config.Connection{Kind: Kind, APIKey: "k"})
	if p.url != "https://api.anthropic.com/v1/messages" || p.version != "2023-06-01" {
		t.Errorf("defaults: %s %s", p.url, p.version)
	}
	if p.Name() != "Anthropic" {
		t.Errorf("Name() = %q", p.Name())
	}
	r := providers.Registry{}
	Register(r)
	if _, err := r.Build(&config.Connection{Kind: "anthropic", APIKey: "k", Name: "claude"}, providers.Env{}); err != nil {
		t.Errorf("registered kind: %v", err)
	}
	if oe := p.Check(&llm.Request{Op: llm.OpCompletion, Model: "m"}, providers.Target{}); oe == nil || oe.Status != 501 {
		t.Errorf("Anthropic has no completions endpoint; the provider must refuse them with 501, got %v", oe)
	}
}

// TestTransport checks what goes on the wire: the path under base_url, the credentials and
// version headers (configurable version, configured extra headers that cannot override
// them), and the JSON and stream paths end to end against the fake.
func TestTransport(t *testing.T) {
	fake := anthropicfake.New()
	defer fake.Close()
	p := newProvider(t, &config.Connection{Kind: Kind, APIKey: anthropicfake.APIKey, BaseURL: fake.URL + "/",
		Headers: map[string]string{"anthropic-beta": "tools-2024-05-16", "X-Api-Key": "not-this-one"},
		Extra:   map[string]any{"anthropic_version": "2023-01-01"}})
	req := chat(t, `{"model":"gw","messages":[{"role":"user","content":"hi"}]}`)
	answer := &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("Hello there")}, Usage: anthropicfake.Usage{Input: 5, Output: 2}}
	fake.Enqueue(anthropicfake.Reply{Answer: answer}, anthropicfake.Reply{Answer: answer})

	c, err := p.Generate(context.Background(), req, providers.Target{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	if text, ok := c.Text(); !ok || text != "Hello there" || *c.Usage.InputTokens != 5 {
		t.Errorf("completion %+v", c)
	}
	got := fake.Last()
	if got.Rejected != nil {
		t.Fatalf("the fake refused the request: %v", got.Rejected)
	}
	h := got.Header
	if h.Get("X-Api-Key") != anthropicfake.APIKey || h.Get("Anthropic-Version") != "2023-01-01" || h.Get("Anthropic-Beta") != "tools-2024-05-16" {
		t.Errorf("headers %v", h)
	}
	var model string
	_ = got.Field("model", &model)
	if model != "claude-x" || got.Stream() {
		t.Errorf("model %q stream %v", model, got.Stream())
	}

	st, err := p.Stream(context.Background(), req, providers.Target{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for {
		d, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(d.Text)
	}
	st.Close()
	if text.String() != "Hello there" || !fake.Last().Stream() || fake.Last().Header.Get("Accept") != "text/event-stream" {
		t.Errorf("stream gave %q; request stream=%v", text.String(), fake.Last().Stream())
	}
}

func TestTransportErrors(t *testing.T) {
	fake := anthropicfake.New()
	defer fake.Close()
	req := chat(t, `{"model":"gw","messages":[{"role":"user","content":"hi"}]}`)

	wrongKey := newProvider(t, &config.Connection{Kind: Kind, APIKey: "sk-revoked", BaseURL: fake.URL})
	_, err := wrongKey.Generate(context.Background(), req, providers.Target{Model: "c"})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Auth || pe.Status != 401 {
		t.Errorf("wrong key: %v", err)
	}

	p := newProvider(t, &config.Connection{Kind: Kind, APIKey: anthropicfake.APIKey, BaseURL: fake.URL})
	fake.Enqueue(anthropicfake.Overloaded())
	_, err = p.Stream(context.Background(), req, providers.Target{Model: "c"})
	if !errors.As(err, &pe) || pe.Class != providers.Overloaded || pe.Status != 529 || pe.RetryAfter != "" {
		t.Errorf("529: %v", err)
	}
	fake.Enqueue(anthropicfake.RateLimited("30"))
	_, err = p.Generate(context.Background(), req, providers.Target{Model: "c"})
	if !errors.As(err, &pe) || pe.Class != providers.RateLimited || pe.RetryAfter != "30" {
		t.Errorf("429: %v", err)
	}

	// A stream cut by the network after some content is broken, not finished.
	events := (&anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("one two three four")}}).Events("c")
	fake.Enqueue(anthropicfake.Reply{Events: anthropicfake.Truncate(events, 1), Cut: true})
	st, err := p.Stream(context.Background(), req, providers.Target{Model: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if d, err := st.Next(); err != nil || d.Text != "one two " {
		t.Fatalf("first delta %+v %v", d, err)
	}
	_, err = st.Next()
	if !errors.As(err, &pe) || pe.Class != providers.StreamBroken {
		t.Errorf("cut: %v", err)
	}

	// The route refuses before any network I/O what Anthropic would refuse.
	if oe := p.Check(chat(t, `{"model":"gw","messages":[{"role":"user","content":"hi"}],"temperature":1.5}`), providers.Target{Model: "c"}); oe == nil || oe.Status != 400 || oe.Param != "temperature" {
		t.Errorf("temperature 1.5: %v, want a 400 naming temperature", oe)
	}
}

// TestChatMatchesFakeValidation sends a tool conversation with ids minted elsewhere through
// the provider; the fake applies the API's id pattern and result placement rules.
func TestChatMatchesFakeValidation(t *testing.T) {
	fake := anthropicfake.New()
	defer fake.Close()
	p := newProvider(t, &config.Connection{Kind: Kind, APIKey: anthropicfake.APIKey, BaseURL: fake.URL})
	fake.Enqueue(anthropicfake.Reply{Answer: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("ok")}}})
	req := chat(t, `{"model":"gw","messages":[
		{"role":"user","content":"go"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"functions.lookup:0","type":"function","function":{"name":"lookup","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"functions.lookup:0","content":"found"},
		{"role":"user","content":"thanks"}],
		"tools":[{"type":"function","function":{"name":"lookup"}}]}`)
	if _, err := p.Generate(context.Background(), req, providers.Target{Model: "c"}); err != nil {
		t.Fatal(err)
	}
	var msgs []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	}
	if err := fake.Last().Field("messages", &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[2].Role != "user" || len(msgs[2].Content) != 2 || !strings.Contains(string(msgs[2].Content[0]), "tool_result") {
		t.Errorf("messages %s", fake.Last().Body)
	}
}

// TestBaseURLQueryIsKept: /v1/messages joins the path of base_url, whose query stays the
// query (a proxy in front of Anthropic that takes ?key=).
func TestBaseURLQueryIsKept(t *testing.T) {
	for _, suffix := range []string{"?key=proxy-key-0123456789", "/?key=proxy-key-0123456789"} {
		fake := anthropicfake.New()
		defer fake.Close()
		p := newProvider(t, &config.Connection{Kind: Kind, APIKey: anthropicfake.APIKey, BaseURL: fake.URL + suffix})
		fake.Enqueue(anthropicfake.Reply{Answer: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("hi")}}})
		if _, err := p.Generate(context.Background(), chat(t, `{"model":"gw","messages":[{"role":"user","content":"hi"}]}`), providers.Target{Model: "claude-x"}); err != nil {
			t.Fatalf("base_url %s: %v", suffix, err)
		}
		if got := fake.Last(); got == nil || got.Query != "key=proxy-key-0123456789" {
			t.Errorf("base_url %s: request %+v, want the query kept", suffix, got)
		}
	}
}

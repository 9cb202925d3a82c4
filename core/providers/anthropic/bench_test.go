package anthropic

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/anthropicfake"
)

func BenchmarkBuildRequest(b *testing.B) {
	req, oe := openai.DecodeChatRequest([]byte(`{"model":"gw","messages":[
		{"role":"system","content":"You are a helpful assistant that uses tools when needed."},
		{"role":"user","content":"What is the weather in Paris and Rome?"},
		{"role":"assistant","content":"Checking.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"18C"},
		{"role":"tool","tool_call_id":"call_2","content":"22C"},
		{"role":"user","content":"Which is warmer?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`), llm.Limits{})
	if oe != nil {
		b.Fatal(oe)
	}
	t := providers.Target{Model: "claude-sonnet-4-5"}
	b.ReportAllocs()
	for b.Loop() {
		if body := BuildRequest(req, t, RequestOptions{Stream: true}); len(body) == 0 {
			b.Fatal("no body")
		}
	}
}

// BenchmarkStream translates a 400-delta answer; per-op figures are for the whole stream.
func BenchmarkStream(b *testing.B) {
	a := &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text(strings.Repeat("lorem ipsum ", 400))}, Usage: anthropicfake.Usage{Input: 10, Output: 800}}
	raw := []byte(anthropicfake.SSE(a.Events("claude")))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewStream(context.Background(), io.NopCloser(bytes.NewReader(raw)), "Anthropic", false)
		for {
			if _, err := s.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
}

// BenchmarkChatStreamFake is one streamed call through the provider's HTTP transport to the
// fake on loopback.
func BenchmarkChatStreamFake(b *testing.B) {
	fake := anthropicfake.New()
	defer fake.Close()
	fake.SetDefault(anthropicfake.Reply{Answer: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("a short streamed answer of several words")}}})
	p, err := New(&config.Connection{Kind: Kind, APIKey: anthropicfake.APIKey, BaseURL: fake.URL}, providers.Env{})
	if err != nil {
		b.Fatal(err)
	}
	req, _ := openai.DecodeChatRequest([]byte(`{"model":"gw","stream":true,"messages":[{"role":"user","content":"hi"}]}`), llm.Limits{})
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Stream(context.Background(), req, providers.Target{Model: "claude"})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
}

package openaicompat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

func messagesGateway(t *testing.T) (*openaifake.Server, *gatewaytest.Server) {
	t.Helper()
	fake := openaifake.New()
	t.Cleanup(fake.Close)
	cfg := gatewaytest.Config(t, `
connections:
  oai: {kind: openai, api_key: sk-test-0123456789, base_url: `+fake.BaseURL()+`}
  local: {kind: vllm, base_url: `+fake.BaseURL()+`}
models:
  claude-on-gpt: {routes: [{connection: oai, model: gpt-test}]}
  claude-on-vllm: {routes: [{connection: local, model: qwen-test}]}
`, config.Options{})
	reg := providers.Registry{}
	openaicompat.Register(reg)
	return fake, gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: (&gatewaytest.LogBuffer{}).Logger()})
}

// TestMessagesDoorOnOpenAIWire: a Messages client on an OpenAI-wire route. The request is
// translated to Chat Completions (system first, tool results as tool messages ahead of the
// turn's text, is_error said in the text, effort as reasoning_effort, adaptive thinking and a
// thinking-clearing context_management honoured as they mean); the answer, streamed or not,
// comes back in Anthropic's shape with the tool call's input assembled alike.
func TestMessagesDoorOnOpenAIWire(t *testing.T) {
	fake, srv := messagesGateway(t)
	reply := openaifake.Reply{Text: "Checking.", ToolCalls: []openaifake.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		PromptTokens: 40, CompletionTokens: 12, CachedTokens: 8}
	fake.Enqueue(reply, reply)
	c := srv.Anthropic()
	params := sdk.MessageNewParams{
		Model: "claude-on-gpt", MaxTokens: 256,
		System: []sdk.TextBlockParam{{Text: "Be brief.", CacheControl: sdk.NewCacheControlEphemeralParam()}},
		Messages: []sdk.MessageParam{
			sdk.NewUserMessage(sdk.NewTextBlock("Weather?")),
			sdk.NewAssistantMessage(sdk.NewToolUseBlock("toolu_9", map[string]any{"city": "Lyon"}, "get_weather")),
			sdk.NewUserMessage(sdk.NewToolResultBlock("toolu_9", "no data", true), sdk.NewTextBlock("And Paris?")),
		},
		Tools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{Name: "get_weather",
			InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
		Thinking: sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}},
	}
	opts := []option.RequestOption{option.WithJSONSet("output_config", map[string]any{"effort": "high"}),
		option.WithJSONSet("context_management", map[string]any{"edits": []any{map[string]any{"type": "clear_thinking_20251015", "keep": "all"}}})}
	msg, err := c.Messages.New(context.Background(), params, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Model != "claude-on-gpt" || len(msg.Content) != 2 || msg.Content[0].Text != "Checking." || msg.Content[1].Type != "tool_use" ||
		msg.Content[1].Name != "get_weather" || string(msg.Content[1].Input) != `{"city":"Paris"}` || msg.StopReason != sdk.StopReasonToolUse {
		t.Errorf("message %s", msg.RawJSON())
	}
	if u := msg.Usage; u.InputTokens != 32 || u.CacheReadInputTokens != 8 || u.OutputTokens != 12 {
		t.Errorf("usage %+v", u)
	}
	sent := fake.Requests()[0]
	var body struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []any  `json:"tool_calls"`
		} `json:"messages"`
		ReasoningEffort string `json:"reasoning_effort"`
	}
	if err := json.Unmarshal(sent.Raw, &body); err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,user" || body.Messages[3].Content != "Error: no data" ||
		body.Messages[3].ToolCallID != "toolu_9" || len(body.Messages[2].ToolCalls) != 1 || body.ReasoningEffort != "high" {
		t.Errorf("upstream body %s", sent.Raw)
	}

	stream := c.Messages.NewStreaming(context.Background(), params, opts...)
	var acc sdk.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Content) != 2 || acc.Content[0].Text != "Checking." || string(acc.Content[1].Input) != string(msg.Content[1].Input) ||
		acc.StopReason != sdk.StopReasonToolUse || acc.Usage.OutputTokens != 12 {
		t.Errorf("streamed %s", acc.RawJSON())
	}
}

// TestMessagesDoorOnOpenAIWireRefuses: what no OpenAI-wire server can carry is refused,
// naming the field, before any request reaches it.
func TestMessagesDoorOnOpenAIWireRefuses(t *testing.T) {
	fake, srv := messagesGateway(t)
	const hi = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct{ name, model, body, want string }{
		{"server tool", "claude-on-gpt", hi + `,"tools":[{"type":"web_search_20250305","name":"web_search"}]`, "is supported only on Anthropic routes"},
		{"thinking budget", "claude-on-gpt", hi + `,"thinking":{"type":"enabled","budget_tokens":2048}`, "takes no thinking budget"},
		{"container", "claude-on-gpt", hi + `,"container":"c_1"`, "container is supported only on Anthropic routes"},
		{"effort on vLLM", "claude-on-vllm", hi + `,"output_config":{"effort":"low"}`, "takes no reasoning effort"},
		{"document block", "claude-on-gpt", `"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"}}]}]`, "a document block is supported only on Anthropic routes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"model":"` + tc.model + `","max_tokens":4096,` + tc.body + `}`
			r := srv.Do(t, http.MethodPost, "/v1/messages", body, "Anthropic-Version", "2023-06-01")
			if r.Status != 400 || !strings.Contains(string(r.Body), tc.want) || !strings.Contains(string(r.Body), `"invalid_request_error"`) {
				t.Errorf("%d %s", r.Status, r.Body)
			}
		})
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

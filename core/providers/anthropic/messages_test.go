package anthropic_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/anthropicfake"
)

// TestMessagesDoorPassesAnthropicThrough: through /v1/messages an Anthropic route is near
// pass-through. The client's version, betas, cache_control, thinking, metadata.user_id and
// Anthropic-only fields reach the API as sent; the answer comes back as Anthropic sent it
// (thinking and its signature included) with the gateway's model name; usage counts cache
// reads and writes, and the attempt is charged for them.
func TestMessagesDoorPassesAnthropicThrough(t *testing.T) {
	h := newHarness(t)
	answer := &anthropicfake.Answer{
		Blocks: []anthropicfake.Block{anthropicfake.Thinking("let me see"), anthropicfake.Text("Bonjour!"),
			anthropicfake.ToolUse("toolu_01", "get_weather", `{"city":"Paris"}`)},
		StopReason: "tool_use",
		Usage:      anthropicfake.Usage{Input: 12, CacheCreation: 100, CacheRead: 2000, Output: 9}}
	h.fake.Enqueue(anthropicfake.Reply{Answer: answer}, anthropicfake.Reply{Answer: answer})
	c := h.srv.Anthropic(option.WithHeader("Anthropic-Beta", "interleaved-thinking-2025-05-14,context-management-2025-06-27"))
	params := sdk.MessageNewParams{
		Model:     "gw/claude",
		MaxTokens: 2048,
		System:    []sdk.TextBlockParam{{Text: "Answer in French.", CacheControl: sdk.NewCacheControlEphemeralParam()}},
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Hello"))},
		Tools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{Name: "get_weather",
			InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
		Thinking: sdk.ThinkingConfigParamOfEnabled(1024),
		Metadata: sdk.MetadataParam{UserID: sdk.String("user-7")},
	}
	msg, err := c.Messages.New(context.Background(), params, option.WithJSONSet("context_management", map[string]any{"edits": []any{}}))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Model != "gw/claude" || len(msg.Content) != 3 || msg.Content[0].Type != "thinking" || msg.Content[0].Thinking != "let me see" ||
		msg.Content[0].Signature == "" || msg.Content[1].Text != "Bonjour!" || msg.StopReason != sdk.StopReasonToolUse {
		t.Errorf("message %s", msg.RawJSON())
	}
	if u := msg.Usage; u.InputTokens != 12 || u.CacheCreationInputTokens != 100 || u.CacheReadInputTokens != 2000 || u.OutputTokens != 9 {
		t.Errorf("usage %+v", u)
	}
	got := h.fake.Last()
	if got.Rejected != nil {
		t.Fatalf("the fake refused the body: %v\n%s", got.Rejected, got.Body)
	}
	if v := got.Header.Get("Anthropic-Version"); v != "2023-06-01" {
		t.Errorf("anthropic-version %q", v)
	}
	if b := got.Header.Get("Anthropic-Beta"); b != "interleaved-thinking-2025-05-14,context-management-2025-06-27" {
		t.Errorf("anthropic-beta %q", b)
	}
	var body struct {
		System   []map[string]any `json:"system"`
		Thinking map[string]any   `json:"thinking"`
		Metadata map[string]any   `json:"metadata"`
		CM       json.RawMessage  `json:"context_management"`
		Model    string           `json:"model"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "claude-sonnet-4-5" || len(body.System) != 1 || body.System[0]["cache_control"] == nil || body.Thinking["budget_tokens"] != float64(1024) ||
		body.Metadata["user_id"] != "user-7" || string(body.CM) != `{"edits":[]}` {
		t.Errorf("upstream body %s", got.Body)
	}
	var attempt map[string]any
	sc := bufio.NewScanner(strings.NewReader(h.logs.String()))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == record.MsgAttempt && line["endpoint"] == "messages" {
			attempt = line
		}
	}
	usage, _ := attempt["usage"].(map[string]any)
	if usage["prompt_tokens"] != float64(2112) || usage["cached_tokens"] != float64(2000) || usage["cache_write_tokens"] != float64(100) || usage["completion_tokens"] != float64(9) {
		t.Errorf("attempt usage %v", attempt)
	}

	// Streamed: Anthropic's own events, the SDK's accumulator assembling the same message.
	stream := c.Messages.NewStreaming(context.Background(), params)
	var acc sdk.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Model != "gw/claude" || len(acc.Content) != 3 || acc.Content[0].Signature != msg.Content[0].Signature || acc.Content[1].Text != "Bonjour!" ||
		string(acc.Content[2].Input) != string(msg.Content[2].Input) || acc.Usage.CacheReadInputTokens != 2000 {
		t.Errorf("streamed %s\nwhole    %s", acc.RawJSON(), msg.RawJSON())
	}
}

// TestMessagesDoorCountTokensIsExact: count_tokens goes to Anthropic's own count.
func TestMessagesDoorCountTokensIsExact(t *testing.T) {
	h := newHarness(t)
	r := h.srv.Do(t, http.MethodPost, "/v1/messages/count_tokens?beta=true", `{"model":"gw/claude","messages":[{"role":"user","content":"How many?"}]}`,
		"Anthropic-Version", "2023-06-01", "Anthropic-Beta", "token-counting-2024-11-01")
	var n struct {
		InputTokens int `json:"input_tokens"`
	}
	if r.Status != 200 || json.Unmarshal(r.Body, &n) != nil || r.Header.Get(gateway.HeaderTokenCount) != "exact" {
		t.Fatalf("%d %s %v", r.Status, r.Body, r.Header)
	}
	got := h.fake.Last()
	if got.Rejected != nil || n.InputTokens != anthropicfake.CountedTokens(got.Body) {
		t.Errorf("count %d for %s (%v)", n.InputTokens, got.Body, got.Rejected)
	}
}

// TestMessagesDoorFailsOverOn529: an overloaded Anthropic fails over before any output; the
// client sees the backup's answer only.
func TestMessagesDoorFailsOverOn529(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(anthropicfake.Overloaded())
	r := h.srv.Do(t, http.MethodPost, "/v1/messages", `{"model":"gw/claude-backup","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"from the backup"}]}`,
		"Anthropic-Version", "2023-06-01")
	body := string(r.Body)
	if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != "backup/echo" || strings.Count(body, "event: message_start") != 1 || !strings.Contains(body, `"text":" backup"`) {
		t.Errorf("%d %v\n%s", r.Status, r.Header, body)
	}
}

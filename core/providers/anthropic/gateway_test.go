package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// The gateway under test: every Anthropic route points at the fake. gw/claude-backup and
// gw/claude-badkey fail over to the mock, which echoes the last user message.
const gatewayConfig = `
connections:
  claude:
    kind: anthropic
    api_key: ` + anthropicfake.APIKey + `
    base_url: FAKE
  claude-revoked:
    kind: anthropic
    api_key: sk-ant-revoked
    base_url: FAKE
    anthropic_version: "2023-01-01"
  backup:
    kind: mock
models:
  gw/claude:
    max_output_tokens: 2048
    routes:
      - {connection: claude, model: claude-sonnet-4-5}
  gw/claude-backup:
    routes:
      - {connection: claude, model: claude-sonnet-4-5}
      - {connection: backup, model: echo}
  gw/claude-badkey:
    routes:
      - {connection: claude-revoked, model: claude-sonnet-4-5}
      - {connection: backup, model: echo}
  gw/claude-slow:
    timeouts: {idle: 80ms}
    routes:
      - {connection: claude, model: claude-sonnet-4-5}
  gw/claude-stalls:
    timeouts: {first_byte: 300ms, total: 30s}
    routes:
      - {connection: claude, model: claude-sonnet-4-5}
      - {connection: backup, model: echo}
`

type harness struct {
	fake   *anthropicfake.Server
	srv    *gatewaytest.Server
	client oai.Client
	logs   *gatewaytest.LogBuffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	fake := anthropicfake.New()
	t.Cleanup(fake.Close)
	srv, logs := gatewaytest.ServeLogged(t, strings.ReplaceAll(gatewayConfig, "FAKE", fake.URL), anthropic.Register, mock.Register)
	return &harness{fake: fake, srv: srv, client: srv.OpenAI(), logs: logs}
}

var weatherTools = []oai.ChatCompletionToolUnionParam{
	oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Description: oai.String("Current weather"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}),
	oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time"}),
}

// TestChatThroughGateway: a non-streamed answer reaches the SDK with the usage arithmetic
// applied, and the request Anthropic got carries the system prompt at the top and the
// model's ceiling as max_tokens.
func TestChatThroughGateway(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(anthropicfake.Reply{Answer: &anthropicfake.Answer{
		Blocks: []anthropicfake.Block{anthropicfake.Thinking("hmm"), anthropicfake.Text("Bonjour!")},
		Usage:  anthropicfake.Usage{Input: 12, CacheCreation: 100, CacheRead: 2000, Output: 9}}})
	var raw *http.Response
	params := oai.ChatCompletionNewParams{Model: "gw/claude", User: oai.String("alice"), Messages: []oai.ChatCompletionMessageParamUnion{
		oai.SystemMessage("Answer in French."), oai.UserMessage("Hello")}}
	comp, err := h.client.Chat.Completions.New(context.Background(), params, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.Choices) != 1 || comp.Choices[0].Message.Content != "Bonjour!" || comp.Choices[0].FinishReason != "stop" || comp.Model != "gw/claude" {
		t.Fatalf("completion %s", comp.RawJSON())
	}
	u := comp.Usage
	if u.PromptTokens != 2112 || u.PromptTokensDetails.CachedTokens != 2000 || u.CompletionTokens != 9 || u.TotalTokens != 2121 {
		t.Errorf("usage %s", u.RawJSON())
	}
	if raw.Header.Get(gateway.HeaderRoute) != "claude/claude-sonnet-4-5" {
		t.Errorf("route header %q", raw.Header.Get(gateway.HeaderRoute))
	}
	got := h.fake.Last()
	if got.Rejected != nil {
		t.Fatal(got.Rejected)
	}
	var sent struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(got.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Model != "claude-sonnet-4-5" || sent.MaxTokens != 2048 || sent.System != "Answer in French." || len(sent.Messages) != 1 || sent.Messages[0].Role != "user" {
		t.Errorf("sent %s", got.Body)
	}
	if got.Header.Get("X-Api-Key") != anthropicfake.APIKey || got.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("headers %v", got.Header)
	}
	if _, leaked := got.Parsed["user"]; leaked {
		t.Error("the client's user label reached Anthropic")
	}
	a := h.logs.Attempts(t, 1)
	if len(a) != 1 {
		t.Fatalf("%d attempts", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"msg": "attempt", "outcome": "ok", "provider": "anthropic", "route": "claude/claude-sonnet-4-5"})
	if usage, _ := a[0]["usage"].(map[string]any); usage["prompt_tokens"] != 2112.0 || usage["cached_tokens"] != 2000.0 {
		t.Errorf("logged usage %v", a[0]["usage"])
	}
}

// TestStreamThroughGateway: the SDK reads the streamed answer, gets one usage chunk with
// include_usage, and the raw stream has the OpenAI shape: role on the first content chunk,
// the finish chunk, the usage chunk, then [DONE]. The fake writes the events cut into
// 5-byte pieces.
func TestStreamThroughGateway(t *testing.T) {
	h := newHarness(t)
	answer := &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("The quick brown fox jumps.")},
		Usage: anthropicfake.Usage{Input: 20, CacheRead: 5, Output: 7}}
	h.fake.Enqueue(anthropicfake.Reply{Answer: answer, ChunkSize: 5}, anthropicfake.Reply{Answer: answer})

	params := gatewaytest.UserOnly("gw/claude", "Tell me about foxes")
	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	text, finish, usage := gatewaytest.StreamText(t, h.client.Chat.Completions.NewStreaming(context.Background(), params))
	if text != "The quick brown fox jumps." || finish != "stop" {
		t.Errorf("text %q finish %q", text, finish)
	}
	if len(usage) != 1 || usage[0].PromptTokens != 25 || usage[0].PromptTokensDetails.CachedTokens != 5 || usage[0].CompletionTokens != 7 || usage[0].TotalTokens != 32 {
		t.Errorf("usage chunks %+v", usage)
	}
	if !h.fake.Last().Stream() {
		t.Error("Anthropic was not asked to stream")
	}

	r := h.srv.Chat(t, `{"model":"gw/claude","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"again"}]}`)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", r.Status, r.Header)
	}
	events := gatewaytest.SSEData(t, r.Body)
	if !strings.Contains(events[0], `"delta":{"role":"assistant","content":"The quick "}`) {
		t.Errorf("first event %s: the role must come with the first content", events[0])
	}
	n := len(events)
	if n < 4 || events[n-1] != "[DONE]" || !strings.Contains(events[n-2], `"choices":[],"usage":{"prompt_tokens":25,`) ||
		!strings.Contains(events[n-3], `"finish_reason":"stop"`) {
		t.Errorf("stream tail:\n%s", strings.Join(events[max(0, n-3):], "\n"))
	}
}

var toolAnswer = &anthropicfake.Answer{
	Blocks: []anthropicfake.Block{
		anthropicfake.Text("Let me check both."),
		anthropicfake.ToolUse("toolu_01A09q90qw90lq917835lq9", "get_weather", `{"city":"Paris","note":"say \"hi\" caf\u00e9 ñ"}`),
		anthropicfake.ToolUse("toolu_01B", "get_time", `{}`),
	},
	StopReason: "tool_use",
	Usage:      anthropicfake.Usage{Input: 300, Output: 80},
}

// TestStreamedToolCallsEqualNonStream: for the same scripted answer (text, then two
// parallel tool_use blocks whose input streams in fragments cut inside tokens and escapes),
// the SDK's ChatCompletionAccumulator assembles exactly the message the non-streamed call
// returns. Then the tool results go back and Anthropic's placement rules hold.
func TestStreamedToolCallsEqualNonStream(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(anthropicfake.Reply{Answer: toolAnswer}, anthropicfake.Reply{Answer: toolAnswer, ChunkSize: 7})
	params := gatewaytest.UserOnly("gw/claude", "Weather in Paris, and the time?")
	params.Tools = weatherTools

	comp, err := h.client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	acc, finished := gatewaytest.Accumulate(t, h.client.Chat.Completions.NewStreaming(context.Background(), params))

	want, got := comp.Choices[0], acc.Choices[0]
	if want.FinishReason != "tool_calls" || got.FinishReason != want.FinishReason {
		t.Errorf("finish reasons: stream %q, non-stream %q", got.FinishReason, want.FinishReason)
	}
	if want.Message.Content != "Let me check both." || got.Message.Content != want.Message.Content {
		t.Errorf("content: stream %q, non-stream %q", got.Message.Content, want.Message.Content)
	}
	if len(want.Message.ToolCalls) != 2 || len(got.Message.ToolCalls) != 2 {
		t.Fatalf("tool calls: stream %d, non-stream %d", len(got.Message.ToolCalls), len(want.Message.ToolCalls))
	}
	for i := range want.Message.ToolCalls {
		w, g := want.Message.ToolCalls[i], got.Message.ToolCalls[i]
		if g.ID != w.ID || g.Function.Name != w.Function.Name || g.Function.Arguments != w.Function.Arguments || g.Type != "function" {
			t.Errorf("tool call %d: stream %+v, non-stream %+v", i, g.Function, w.Function)
		}
	}
	var args struct{ City, Note string }
	if err := json.Unmarshal([]byte(got.Message.ToolCalls[0].Function.Arguments), &args); err != nil || args.Note != `say "hi" café ñ` {
		t.Errorf("arguments %q: %v", got.Message.ToolCalls[0].Function.Arguments, err)
	}
	if got.Message.ToolCalls[0].ID != "toolu_01A09q90qw90lq917835lq9" || got.Message.ToolCalls[1].Function.Arguments != "{}" {
		t.Errorf("ids must pass through and an empty input is {}: %+v", got.Message.ToolCalls)
	}
	if acc.Usage.PromptTokens != comp.Usage.PromptTokens || acc.Usage.CompletionTokens != comp.Usage.CompletionTokens || acc.Usage.TotalTokens != 380 {
		t.Errorf("usage: stream %s, non-stream %s", acc.Usage.RawJSON(), comp.Usage.RawJSON())
	}
	if strings.Join(finished, ",") != "get_weather,get_time" {
		t.Errorf("finished tool calls %v", finished)
	}

	// Round trip: the assistant turn and both results go back; the fake refuses any
	// misplaced tool_result.
	h.fake.Enqueue(anthropicfake.Reply{Answer: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("Sunny, 14:00.")}}})
	next := gatewaytest.UserOnly("gw/claude", "Weather in Paris, and the time?")
	next.Tools = weatherTools
	next.Messages = append(next.Messages, comp.Choices[0].Message.ToParam(),
		oai.ToolMessage("18C and sunny", want.Message.ToolCalls[0].ID),
		oai.ToolMessage("14:00", want.Message.ToolCalls[1].ID),
		oai.UserMessage("Summarise."))
	final, err := h.client.Chat.Completions.New(context.Background(), next)
	if err != nil {
		t.Fatalf("%v (fake: %v)", err, h.fake.Last().Rejected)
	}
	if final.Choices[0].Message.Content != "Sunny, 14:00." {
		t.Errorf("final %s", final.RawJSON())
	}
}

// TestRefusedBeforeAnyCall: what an Anthropic route cannot serve is a typed 400 naming the
// param, and Anthropic never sees the request.
func TestRefusedBeforeAnyCall(t *testing.T) {
	h := newHarness(t)
	strict := gatewaytest.UserOnly("gw/claude", "hi")
	strict.Tools = []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "f", Strict: oai.Bool(true), Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{}, "additionalProperties": false}})}
	hot := gatewaytest.UserOnly("gw/claude", "hi")
	hot.Temperature = oai.Float(1.5)
	late := oai.ChatCompletionNewParams{Model: "gw/claude", Messages: []oai.ChatCompletionMessageParamUnion{
		oai.UserMessage("hi"), oai.AssistantMessage("hello"), oai.SystemMessage("From now on, be rude.")}}
	badArgs := oai.ChatCompletionNewParams{Model: "gw/claude", Tools: weatherTools, Messages: []oai.ChatCompletionMessageParamUnion{
		oai.UserMessage("hi"),
		{OfAssistant: &oai.ChatCompletionAssistantMessageParam{ToolCalls: []oai.ChatCompletionMessageToolCallUnionParam{{
			OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{ID: "call_1",
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `["Paris"]`}}}}}},
		oai.ToolMessage("18C", "call_1")}}
	for _, tt := range []struct {
		name   string
		params oai.ChatCompletionNewParams
		param  string
	}{
		{"temperature", hot, "temperature"},
		{"strict tool", strict, "tools[0].function.strict"},
		{"late system message", late, "messages"},
		{"array arguments", badArgs, "messages[1].tool_calls[0].function.arguments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.client.Chat.Completions.New(context.Background(), tt.params)
			apiErr := gatewaytest.APIError(t, err)
			if apiErr.StatusCode != 400 || apiErr.Param != tt.param || apiErr.Type != "invalid_request_error" {
				t.Errorf("status %d type %q param %q: %s", apiErr.StatusCode, apiErr.Type, apiErr.Param, apiErr.Message)
			}
		})
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("Anthropic received %d requests", n)
	}
}

// TestFailoverOn529: Anthropic overloaded before any content moves to the next route, for
// a JSON answer and for a stream, and the attempt log names the failure.
func TestFailoverOn529(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(anthropicfake.Overloaded(), anthropicfake.Overloaded())
	var raw *http.Response
	comp, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/claude-backup", "served by the backup"), option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if comp.Choices[0].Message.Content != "served by the backup" || raw.Header.Get(gateway.HeaderRoute) != "backup/echo" || raw.Header.Get(gateway.HeaderAttempts) != "2" {
		t.Errorf("answer %q via %s after %s attempts", comp.Choices[0].Message.Content, raw.Header.Get(gateway.HeaderRoute), raw.Header.Get(gateway.HeaderAttempts))
	}
	r := h.srv.Chat(t, `{"model":"gw/claude-backup","stream":true,"messages":[{"role":"user","content":"streamed backup"}]}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, `"content":"streamed"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("stream after failover: %s", body)
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 4 {
		t.Fatalf("%d attempt lines, want 4", len(a))
	}
	for _, i := range []int{0, 2} {
		gatewaytest.CheckAttempt(t, a[i], map[string]any{"msg": "provider_error", "outcome": "failover", "provider": "anthropic", "attempt": 1.0,
			"status": 529.0, "error_class": "overloaded", "error_code": "overloaded_error", "route": "claude/claude-sonnet-4-5"})
		gatewaytest.CheckAttempt(t, a[i+1], map[string]any{"msg": "attempt", "outcome": "ok", "provider": "mock", "attempt": 2.0})
	}
}

// TestOverloadedAlone: with no other route, the client gets 503 (which SDKs retry), not
// Anthropic's non-standard 529.
func TestOverloadedAlone(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(anthropicfake.Overloaded())
	_, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/claude", "hi"))
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Fatalf("got %v, want a 503", err)
	}
}

// TestErrorEventAfterContent: once content went out, an error event ends the stream with an
// error event and no [DONE], and there is no failover.
func TestErrorEventAfterContent(t *testing.T) {
	h := newHarness(t)
	events := toolAnswer.Events("claude-sonnet-4-5")
	h.fake.Enqueue(
		anthropicfake.Reply{Events: anthropicfake.Join(anthropicfake.Truncate(events, 2), []anthropicfake.Event{anthropicfake.ErrorEvent("overloaded_error", "Overloaded")})},
		anthropicfake.Reply{Events: anthropicfake.Join(anthropicfake.Truncate(events, 2), []anthropicfake.Event{anthropicfake.ErrorEvent("overloaded_error", "Overloaded")})})

	r := h.srv.Chat(t, `{"model":"gw/claude-backup","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, `"content":"Let me "`) {
		t.Fatalf("%d %s", r.Status, body)
	}
	if strings.Contains(body, "[DONE]") {
		t.Error("[DONE] after a failure")
	}
	if !strings.HasSuffix(body, `"type":"service_unavailable_error","param":null,"code":"upstream_overloaded"}}`+"\n\n") {
		t.Errorf("stream does not end with the error event:\n%s", body)
	}

	params := gatewaytest.UserOnly("gw/claude-backup", "hi")
	stream := h.client.Chat.Completions.NewStreaming(context.Background(), params)
	for stream.Next() {
	}
	if stream.Err() == nil || !strings.Contains(stream.Err().Error(), "overloaded") {
		t.Errorf("the SDK saw %v, want the error", stream.Err())
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 2 {
		t.Fatalf("%d attempts, want 2 (one per request, no failover after output)", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"msg": "provider_error", "outcome": "error", "error_class": "overloaded", "provider": "anthropic"})
}

// TestErrorEventBeforeContent: an error event after the 200 but before any content still
// fails over, and nothing of the failed attempt reaches the client.
func TestErrorEventBeforeContent(t *testing.T) {
	h := newHarness(t)
	events := toolAnswer.Events("claude-sonnet-4-5")
	h.fake.Enqueue(anthropicfake.Reply{Events: anthropicfake.Join(events[:2], []anthropicfake.Event{anthropicfake.ErrorEvent("api_error", "Internal server error")})})
	r := h.srv.Chat(t, `{"model":"gw/claude-backup","stream":true,"messages":[{"role":"user","content":"from the backup"}]}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") || strings.Contains(body, "Let me") || !strings.Contains(body, "backup") {
		t.Fatalf("%d %s", r.Status, body)
	}
	a := h.logs.Attempts(t, 1)
	if len(a) != 2 {
		t.Fatalf("%d attempts", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"outcome": "failover", "error_class": "unavailable", "error_code": "api_error"})
	gatewaytest.CheckAttempt(t, a[1], map[string]any{"outcome": "ok", "provider": "mock"})
}

// TestCutConnection: a connection cut after content is an error event without [DONE]; cut
// before content, it fails over.
func TestCutConnection(t *testing.T) {
	h := newHarness(t)
	events := toolAnswer.Events("claude-sonnet-4-5")
	h.fake.Enqueue(anthropicfake.Reply{Events: anthropicfake.Truncate(events, 1), Cut: true},
		anthropicfake.Reply{Events: events[:1], Cut: true})
	body := string(h.srv.Chat(t, `{"model":"gw/claude-backup","stream":true,"messages":[{"role":"user","content":"hi"}]}`).Body)
	if !strings.Contains(body, `"content":"Let me "`) || strings.Contains(body, "[DONE]") || !strings.Contains(body, `"code":"upstream_stream_broken"`) {
		t.Errorf("cut after content:\n%s", body)
	}
	body = string(h.srv.Chat(t, `{"model":"gw/claude-backup","stream":true,"messages":[{"role":"user","content":"backup"}]}`).Body)
	if !strings.HasSuffix(body, "data: [DONE]\n\n") || !strings.Contains(body, `"content":"backup"`) {
		t.Errorf("cut before content:\n%s", body)
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 3 {
		t.Fatalf("%d attempts", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"outcome": "error", "error_class": "stream_broken"})
	gatewaytest.CheckAttempt(t, a[1], map[string]any{"outcome": "failover", "error_class": "stream_broken"})
}

// TestIdleTimeoutIsLoggedAsTimeout: when Anthropic stalls mid-stream past the model's idle
// limit, the gateway's cancellation is reported as a timeout, not a broken stream.
func TestIdleTimeoutIsLoggedAsTimeout(t *testing.T) {
	h := newHarness(t)
	// Every write waits 200ms, longer than gw/claude-slow's 80ms idle limit.
	h.fake.Enqueue(anthropicfake.Reply{Answer: toolAnswer, Delay: 200 * time.Millisecond})
	body := string(h.srv.Chat(t, `{"model":"gw/claude-slow","stream":true,"messages":[{"role":"user","content":"hi"}]}`).Body)
	if !strings.Contains(body, `"content":"Let me "`) || strings.Contains(body, "[DONE]") || !strings.Contains(body, `"code":"upstream_timeout"`) {
		t.Errorf("stalled stream:\n%s", body)
	}
	gatewaytest.CheckAttempt(t, h.logs.Attempts(t, 1)[0], map[string]any{"outcome": "error", "error_class": "timeout"})
}

// TestRateLimitKeepsRetryAfter: Anthropic's 429 reaches the client as a 429 with the same
// Retry-After.
func TestRateLimitKeepsRetryAfter(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(anthropicfake.RateLimited("42"))
	_, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/claude", "hi"))
	var apiErr *oai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 {
		t.Fatalf("got %v, want a 429", err)
	}
	if got := apiErr.Response.Header.Get("Retry-After"); got != "42" {
		t.Errorf("Retry-After %q", got)
	}
	gatewaytest.CheckAttempt(t, h.logs.Attempts(t, 1)[0], map[string]any{"error_class": "rate_limited", "status": 429.0})
}

// TestRevokedKeyFailsOverAsAuth: the fake refuses the connection's key with 401, as the API
// does; the gateway fails over, logs error_class auth, and never shows the client a 401.
func TestRevokedKeyFailsOverAsAuth(t *testing.T) {
	h := newHarness(t)
	comp, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/claude-badkey", "still answered"))
	if err != nil {
		t.Fatal(err)
	}
	if comp.Choices[0].Message.Content != "still answered" {
		t.Errorf("content %q", comp.Choices[0].Message.Content)
	}
	if r := h.fake.Last(); r == nil || r.Rejected == nil || r.Rejected.Status != 401 {
		t.Fatalf("the fake did not refuse the key: %+v", r)
	}
	if v := h.fake.Last().Header.Get("Anthropic-Version"); v != "2023-01-01" {
		t.Errorf("the connection's anthropic_version was not sent: %q", v)
	}
	a := h.logs.Attempts(t, 1)
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"msg": "provider_error", "outcome": "failover", "error_class": "auth", "status": 401.0,
		"error_code": "authentication_error", "connection": "claude-revoked"})
	gatewaytest.CheckAttempt(t, a[1], map[string]any{"outcome": "ok", "provider": "mock"})
}

// TestCompletionsEndpointNotSupported: the legacy endpoint on an Anthropic-only model is a
// 501 the SDK does not retry.
func TestCompletionsEndpointNotSupported(t *testing.T) {
	h := newHarness(t)
	retrying := h.srv.OpenAI(option.WithMaxRetries(2))
	_, err := retrying.Completions.New(context.Background(), oai.CompletionNewParams{Model: "gw/claude",
		Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("Once upon a time")}, MaxTokens: oai.Int(10)})
	apiErr := gatewaytest.APIError(t, err)
	if apiErr.StatusCode != 501 || apiErr.Message != "The completions endpoint is not supported for gw/claude on Anthropic. Use the chat endpoint instead." ||
		apiErr.Code != "unsupported_endpoint" || apiErr.Response.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("%d %q code %q x-should-retry %q", apiErr.StatusCode, apiErr.Message, apiErr.Code, apiErr.Response.Header.Get("X-Should-Retry"))
	}
	requests := 0
	for _, l := range h.logs.AfterRequests(t, 1) {
		if l["msg"] == record.MsgRequest {
			requests++
		}
	}
	if requests != 1 || len(h.fake.Requests()) != 0 {
		t.Errorf("%d gateway requests (the SDK retried?), %d reached Anthropic", requests, len(h.fake.Requests()))
	}
}

// TestNonStreamFirstByteFailsOver: an Anthropic route that sends no response headers within
// first_byte is given up then, not after total, on every door's non-stream request: the next
// route answers, the attempt is logged as a first-byte timeout, and the stalled call is
// cancelled.
func TestNonStreamFirstByteFailsOver(t *testing.T) {
	for _, tc := range []struct {
		door, path, body string
		header           []string
	}{
		{"chat", "/v1/chat/completions", `{"model":"gw/claude-stalls","messages":[{"role":"user","content":"hi"}]}`, nil},
		{"messages", "/v1/messages", `{"model":"gw/claude-stalls","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, []string{"Anthropic-Version", "2023-06-01"}},
		{"responses", "/v1/responses", `{"model":"gw/claude-stalls","input":"hi"}`, nil},
	} {
		t.Run(tc.door, func(t *testing.T) {
			h := newHarness(t)
			h.fake.Enqueue(anthropicfake.Reply{Answer: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("too late")}}, StallBeforeHeaders: time.Minute})
			r := h.srv.Do(t, http.MethodPost, tc.path, tc.body, tc.header...)
			if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != "backup/echo" || r.Header.Get(gateway.HeaderAttempts) != "2" {
				t.Fatalf("%d via %q after %s attempts: %s", r.Status, r.Header.Get(gateway.HeaderRoute), r.Header.Get(gateway.HeaderAttempts), r.Body)
			}
			a := h.logs.Attempts(t, 1)
			if len(a) != 2 {
				t.Fatalf("%d attempt lines, want 2", len(a))
			}
			gatewaytest.CheckAttempt(t, a[0], map[string]any{"msg": "provider_error", "outcome": "failover", "error_class": "timeout",
				"error_message": providers.ErrFirstByteTimeout.Message, "route": "claude/claude-sonnet-4-5", "endpoint": tc.door})
			gatewaytest.WaitFor(t, func() bool { return h.fake.Canceled() == 1 }, "the stalled Anthropic call was not cancelled")
		})
	}
}

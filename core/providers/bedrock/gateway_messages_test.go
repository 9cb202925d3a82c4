package bedrock_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	ant "github.com/anthropics/anthropic-sdk-go"
	antopt "github.com/anthropics/anthropic-sdk-go/option"
	oai "github.com/openai/openai-go/v3"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// The Claude routes of the harness (see newHarness).
const (
	sonnet = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	busy   = "us.anthropic.claude-busy-v1:0"
	nova   = "amazon.nova-test-v1:0"
)

// claudeClient is the official Anthropic SDK pointed at the gateway; it never retries, so
// each call is one request.
func (h *harness) claudeClient() *ant.Client {
	c := ant.NewClient(antopt.WithoutEnvironmentDefaults(), antopt.WithBaseURL(h.srv.URL), antopt.WithAPIKey("unused"), antopt.WithMaxRetries(0))
	return &c
}

// A 1x1 PNG.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// weatherAnswer is a Claude answer with reasoning, text and a tool call, and every usage
// count Bedrock's Anthropic usage has.
var weatherAnswer = bedrockfake.Answer{
	Blocks: []bedrockfake.Block{
		{Thinking: "The user wants the weather; call the tool."},
		{Text: "Let me check the weather in Paris."},
		{ToolUse: &bedrockfake.ToolUse{ID: "toolu_bdrk_01A", Name: "get_weather", Input: `{"city":"Paris, \"FR\"","units":["c","k"],"note":"caf\u00e9"}`}},
	},
	Usage: &bedrockfake.Usage{InputTokens: ptr(12), OutputTokens: ptr(40), CacheReadInputTokens: ptr(2000), CacheWriteInputTokens: ptr(300)},
}

// weatherParams asks with a cached system prompt, an image, a tool and a thinking budget.
func weatherParams(model string) ant.MessageNewParams {
	return ant.MessageNewParams{
		Model:     ant.Model(model),
		MaxTokens: 2048,
		System: []ant.TextBlockParam{
			{Text: "You are a terse weather assistant.", CacheControl: ant.NewCacheControlEphemeralParam()},
			{Text: "Use the tools."},
		},
		Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("What is the weather here?"), ant.NewImageBlockBase64("image/png", pixel))},
		Tools: []ant.ToolUnionParam{{OfTool: &ant.ToolParam{Name: "get_weather", Description: ant.String("Current weather"),
			InputSchema: ant.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
		Thinking: ant.ThinkingConfigParamOfEnabled(1024),
	}
}

const thinkingBeta = "interleaved-thinking-2025-05-14"

// invokeBody decodes the InvokeModel body Bedrock last received, which the fake must have
// accepted as Bedrock's Anthropic body.
func invokeBody(t *testing.T, f *bedrockfake.Server, op string) map[string]json.RawMessage {
	t.Helper()
	got := f.Last()
	if got.Op != op || got.Invalid != "" {
		t.Fatalf("Bedrock got %s (invalid: %q), want %s", got.Op, got.Invalid, op)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// TestMessagesDoorOnInvokeModel: the Anthropic SDK's non-streamed call to a Claude model on
// Bedrock goes out as InvokeModel with Bedrock's Anthropic body (version and betas in the
// body, no model, no stream; cache_control, the image and the thinking budget kept), and
// comes back as Claude's own message with the gateway's model name, the cache counts in its
// usage and in the attempt log, and the cost priced by cache reads and writes.
func TestMessagesDoorOnInvokeModel(t *testing.T) {
	h := newHarness(t)
	h.fake.Script(sonnet, weatherAnswer)
	var raw *http.Response
	msg, err := h.claudeClient().Messages.New(context.Background(), weatherParams("claude"),
		antopt.WithHeader("anthropic-beta", thinkingBeta), antopt.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Model != "claude" || !strings.HasPrefix(msg.ID, "msg_bdrk_") || msg.StopReason != ant.StopReasonToolUse {
		t.Errorf("model %q id %q stop %q", msg.Model, msg.ID, msg.StopReason)
	}
	var kinds []string
	for _, b := range msg.Content {
		kinds = append(kinds, b.Type)
	}
	if strings.Join(kinds, ",") != "thinking,text,tool_use" {
		t.Fatalf("content %s", msg.RawJSON())
	}
	if tu := msg.Content[2].AsToolUse(); tu.ID != "toolu_bdrk_01A" || tu.Name != "get_weather" || jsonValue(t, tu.Input) != jsonValue(t, []byte(weatherAnswer.Blocks[2].ToolUse.Input)) {
		t.Errorf("tool use %s %s %s", tu.ID, tu.Name, tu.Input)
	}
	if u := msg.Usage; u.InputTokens != 12 || u.CacheReadInputTokens != 2000 || u.CacheCreationInputTokens != 300 || u.OutputTokens != 40 {
		t.Errorf("usage %s", u.RawJSON())
	}
	if got := raw.Header.Get(gateway.HeaderRoute); got != "aws/"+sonnet {
		t.Errorf("route %q", got)
	}

	body := invokeBody(t, h.fake, bedrockfake.OpInvoke)
	if string(body["anthropic_version"]) != `"bedrock-2023-05-31"` || string(body["anthropic_beta"]) != `["`+thinkingBeta+`"]` {
		t.Errorf("version %s betas %s", body["anthropic_version"], body["anthropic_beta"])
	}
	for _, k := range []string{"model", "stream"} {
		if _, ok := body[k]; ok {
			t.Errorf("the body names %q, which Bedrock refuses", k)
		}
	}
	if !strings.Contains(string(body["system"]), `"cache_control":{"type":"ephemeral"}`) || !strings.Contains(string(body["messages"]), `"type":"image"`) ||
		string(body["thinking"]) != `{"budget_tokens":1024,"type":"enabled"}` {
		t.Errorf("body lost Claude features: %s", h.fake.Last().Body)
	}

	a := h.logs.WaitLines(t, record.MsgAttempt, 1)
	if len(a) != 1 {
		t.Fatalf("%d attempt lines", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"outcome": "ok", "provider": "bedrock", "route": "aws/" + sonnet})
	u, _ := a[0]["usage"].(map[string]any)
	if u["prompt_tokens"] != 2312.0 || u["cached_tokens"] != 2000.0 || u["cache_write_tokens"] != 300.0 || u["completion_tokens"] != 40.0 {
		t.Errorf("logged usage %v", a[0]["usage"])
	}
	// 12 uncached at $3, 2000 read at $0.30, 300 written at $3.75, 40 out at $15 per million.
	if c, _ := a[0]["cost_usd"].(float64); !near(c, (12*3+2000*0.3+300*3.75+40*15)/1e6) {
		t.Errorf("cost %v", a[0]["cost_usd"])
	}
}

// TestMessagesDoorStreamOnInvokeModel: the same answer streamed through
// InvokeModelWithResponseStream, read with the SDK's accumulator, assembles exactly the
// non-streamed message (tool input fragments included), and on the wire the client sees
// Claude's own events, message_start carrying the gateway's model name and message_stop
// without Bedrock's invocation metrics.
func TestMessagesDoorStreamOnInvokeModel(t *testing.T) {
	h := newHarness(t)
	h.fake.Script(sonnet, weatherAnswer)
	client := h.claudeClient()
	plain, err := client.Messages.New(context.Background(), weatherParams("claude"), antopt.WithHeader("anthropic-beta", thinkingBeta))
	if err != nil {
		t.Fatal(err)
	}
	stream := client.Messages.NewStreaming(context.Background(), weatherParams("claude"), antopt.WithHeader("anthropic-beta", thinkingBeta))
	var acc ant.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	invokeBody(t, h.fake, bedrockfake.OpInvokeStream)
	if acc.Model != "claude" || acc.ID != plain.ID || acc.StopReason != plain.StopReason || len(acc.Content) != len(plain.Content) {
		t.Fatalf("streamed %s\nplain %s", acc.RawJSON(), plain.RawJSON())
	}
	for i := range plain.Content {
		p, s := plain.Content[i], acc.Content[i]
		if p.Type != s.Type || p.Text != s.Text || p.Thinking != s.Thinking || p.Signature != s.Signature || p.ID != s.ID || p.Name != s.Name {
			t.Errorf("block %d: streamed %s, plain %s", i, s.RawJSON(), p.RawJSON())
		}
		if p.Type == "tool_use" && jsonValue(t, s.Input) != jsonValue(t, p.Input) {
			t.Errorf("tool input: streamed %s, plain %s", s.Input, p.Input)
		}
	}
	if acc.Usage.InputTokens != 12 || acc.Usage.CacheReadInputTokens != 2000 || acc.Usage.CacheCreationInputTokens != 300 || acc.Usage.OutputTokens != 40 {
		t.Errorf("streamed usage %s", acc.Usage.RawJSON())
	}
	// The streamed attempt is logged and priced like the plain one.
	a := h.logs.WaitLines(t, record.MsgAttempt, 2)
	if len(a) != 2 || a[1]["usage"] == nil || !equalJSON(a[0]["usage"], a[1]["usage"]) || a[0]["cost_usd"] != a[1]["cost_usd"] {
		t.Errorf("attempts %v", a)
	}

	r := h.srv.Do(t, http.MethodPost, "/v1/messages?beta=true", `{"model":"claude","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Weather?"}]}`,
		"Anthropic-Version", "2023-06-01")
	events := sseEvents(t, r.Body)
	if r.Status != 200 || len(events) < 4 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	for _, e := range events {
		var typ struct{ Type string }
		if err := json.Unmarshal([]byte(e.data), &typ); err != nil || typ.Type != e.name {
			t.Errorf("event %q carries %s", e.name, e.data)
		}
	}
	if first := events[0]; first.name != "message_start" || !strings.Contains(first.data, `"model":"claude"`) || !strings.Contains(first.data, `"id":"msg_bdrk_`) {
		t.Errorf("first event %s %s", first.name, first.data)
	}
	if last := events[len(events)-1]; last.name != "message_stop" || last.data != `{"type":"message_stop"}` {
		t.Errorf("last event %s %s", last.name, last.data)
	}
	if !slices.ContainsFunc(events, func(e sseEvent) bool { return e.name == "ping" }) {
		t.Error("Claude's pings did not pass through")
	}
	if strings.Contains(string(r.Body), "amazon-bedrock-invocationMetrics") {
		t.Error("Bedrock's invocation metrics reached the client")
	}
}

// TestMessagesDoorFailsOverBeforeOutput: Bedrock busy before any content (throttled or
// unavailable over HTTP, a throttlingException frame, Claude's overloaded error event inside
// a chunk) moves the Messages door to the next route; the client gets that route's answer
// and nothing of the first.
func TestMessagesDoorFailsOverBeforeOutput(t *testing.T) {
	// message_start and a ping: the stream opened, nothing was said yet.
	opened := (&anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("never shown")}}).Events("")[:2]
	throttled := &bedrockfake.Exception{Type: "ThrottlingException", Message: "Too many tokens, please wait before trying again."}
	for _, tc := range []struct {
		name   string
		answer bedrockfake.Answer
		class  string
		status float64
	}{
		{"http throttling", bedrockfake.Answer{Error: throttled}, "rate_limited", 429},
		{"http unavailable", bedrockfake.Answer{Error: &bedrockfake.Exception{Type: "ServiceUnavailableException", Message: "Bedrock is unable to process your request."}}, "unavailable", 503},
		{"throttling frame before content", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "never shown"}}, FailAfter: 2, StreamError: throttled}, "rate_limited", 429},
		{"overloaded event before content", bedrockfake.Answer{Events: append(opened, anthropicfake.ErrorEvent("overloaded_error", "Overloaded"))}, "overloaded", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.fake.Script(busy, tc.answer)
			client := h.claudeClient()
			params := ant.MessageNewParams{Model: "claude-backup", MaxTokens: 100,
				Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("echo me back"))}}
			stream := client.Messages.NewStreaming(context.Background(), params)
			var acc ant.Message
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(acc.Content) != 1 || acc.Content[0].Text != "echo me back" || acc.Model != "claude-backup" {
				t.Errorf("stream after failover: %s", acc.RawJSON())
			}
			if tc.answer.Error != nil { // the same for a non-streamed call
				msg, err := client.Messages.New(context.Background(), params)
				if err != nil || msg.Content[0].Text != "echo me back" {
					t.Errorf("non-stream after failover: %v %v", err, msg)
				}
			}
			failed := h.logs.WaitLines(t, record.MsgProviderError, 1)
			if len(failed) < 1 {
				t.Fatal("no provider_error line")
			}
			want := map[string]any{"provider": "bedrock", "route": "aws/" + busy, "outcome": "failover", "error_class": tc.class, "attempt": 1.0}
			if tc.status != 0 {
				want["status"] = tc.status
			}
			gatewaytest.CheckAttempt(t, failed[0], want)
		})
	}
}

// TestMessagesDoorNoFailoverAfterOutput: once Claude's text reached the client, a failure
// ends the stream with Anthropic's error event and no message_stop, and no other route is
// tried.
func TestMessagesDoorNoFailoverAfterOutput(t *testing.T) {
	h := newHarness(t)
	h.fake.Script(busy, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "Half an answer and then some more words"}}, FailAfter: 6,
		StreamError: &bedrockfake.Exception{Type: "ModelStreamErrorException", Message: "The model failed mid-answer"}})
	r := h.srv.Do(t, http.MethodPost, "/v1/messages", `{"model":"claude-backup","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		"Anthropic-Version", "2023-06-01")
	events := sseEvents(t, r.Body)
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.name
	}
	if !strings.Contains(string(r.Body), `"text":"Half an "`) || names[len(names)-1] != "error" || slices.Contains(names, "message_stop") {
		t.Errorf("events %v:\n%s", names, r.Body)
	}
	stream := h.claudeClient().Messages.NewStreaming(context.Background(), ant.MessageNewParams{Model: "claude-backup", MaxTokens: 100,
		Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("hi"))}})
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Error("the SDK took a broken stream for a finished one")
	}
	lines := h.logs.AfterRequests(t, 2)
	attempts := 0
	for _, l := range lines {
		if l["msg"] == record.MsgAttempt || l["msg"] == record.MsgProviderError {
			attempts++
			gatewaytest.CheckAttempt(t, l, map[string]any{"route": "aws/" + busy, "outcome": "error", "error_class": "unavailable"})
		}
	}
	if attempts != 2 {
		t.Errorf("%d attempts for two requests: the backup was tried after output", attempts)
	}
}

// TestMessagesDoorBedrockRefusal: what Bedrock itself refuses in a Claude body (here a beta
// flag it does not know) reaches the client as Anthropic's 400, and does not fail over: the
// next route would be asked the same.
func TestMessagesDoorBedrockRefusal(t *testing.T) {
	h := newHarness(t)
	h.fake.Betas = []string{thinkingBeta}
	h.fake.Script(busy, weatherAnswer)
	_, err := h.claudeClient().Messages.New(context.Background(), ant.MessageNewParams{Model: "claude-backup", MaxTokens: 100,
		Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("hi"))}}, antopt.WithHeader("anthropic-beta", "claude-code-20250219"))
	var apiErr *ant.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Type() != "invalid_request_error" || !strings.Contains(apiErr.Error(), "invalid beta flag") {
		t.Fatalf("got %v, want Anthropic's 400 with Bedrock's reason", err)
	}
	a := h.logs.WaitLines(t, record.MsgProviderError, 1)
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"outcome": "error", "error_class": "bad_request", "status": 400.0, "error_code": "ValidationException"})
	if n := len(h.logs.Lines(t, record.MsgAttempt)); n != 0 {
		t.Errorf("%d more attempts: a provider 400 failed over", n)
	}
}

// TestMessagesDoorCountTokens: /v1/messages/count_tokens on a Claude route is Bedrock's
// CountTokens over the InvokeModel body the call would send (with the max_tokens Bedrock
// requires, without Anthropic's token-counting beta), marked exact; on a Converse model,
// which Bedrock cannot count, the gateway estimates without calling Bedrock.
func TestMessagesDoorCountTokens(t *testing.T) {
	h := newHarness(t)
	h.fake.Script(sonnet, bedrockfake.Answer{InputCount: 1234})
	var raw *http.Response
	n, err := h.claudeClient().Messages.CountTokens(context.Background(), ant.MessageCountTokensParams{Model: "claude",
		System:   ant.MessageCountTokensParamsSystemUnion{OfString: ant.String("Be terse.")},
		Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("How many tokens is this?"))}},
		antopt.WithHeader("anthropic-beta", "token-counting-2024-11-01,"+thinkingBeta), antopt.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if n.InputTokens != 1234 || raw.Header.Get(gateway.HeaderTokenCount) != "exact" {
		t.Errorf("count %d (%s)", n.InputTokens, raw.Header.Get(gateway.HeaderTokenCount))
	}
	got := h.fake.Last()
	if got.Op != bedrockfake.OpCountTokens || got.Invalid != "" || got.ModelID != sonnet {
		t.Fatalf("Bedrock got %s on %s (invalid: %q)", got.Op, got.ModelID, got.Invalid)
	}
	var req struct {
		Input struct {
			InvokeModel struct {
				Body []byte `json:"body"`
			} `json:"invokeModel"`
		} `json:"input"`
	}
	if err := json.Unmarshal(got.Body, &req); err != nil {
		t.Fatal(err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(req.Input.InvokeModel.Body, &body); err != nil {
		t.Fatalf("%v: %s", err, got.Body)
	}
	if string(body["anthropic_beta"]) != `["`+thinkingBeta+`"]` || body["max_tokens"] == nil || string(body["system"]) != `"Be terse."` {
		t.Errorf("counted body %s", req.Input.InvokeModel.Body)
	}

	before := len(h.fake.Requests())
	n, err = h.claudeClient().Messages.CountTokens(context.Background(), ant.MessageCountTokensParams{Model: "nova",
		Messages: []ant.MessageParam{ant.NewUserMessage(ant.NewTextBlock("How many tokens is this?"))}}, antopt.WithResponseInto(&raw))
	if err != nil || n.InputTokens <= 0 || raw.Header.Get(gateway.HeaderTokenCount) != "estimate" {
		t.Errorf("nova: %v %+v (%s)", err, n, raw.Header.Get(gateway.HeaderTokenCount))
	}
	if len(h.fake.Requests()) != before {
		t.Error("Bedrock was asked to count a model it cannot count")
	}
}

// TestMessagesDoorOnConverse: a non-Claude model serves the Messages door through Converse:
// the cached system prompt becomes a cachePoint, the image an image block, a failed tool
// result status "error", adaptive thinking is accepted (the model decides), and what Converse
// cannot carry (a thinking budget, output_config) is refused before any call, naming the
// field.
func TestMessagesDoorOnConverse(t *testing.T) {
	h := newHarness(t)
	h.fake.Script(nova, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "It is sunny."}}, Usage: &bedrockfake.Usage{InputTokens: ptr(5), OutputTokens: ptr(4), TotalTokens: ptr(109), CacheReadInputTokens: ptr(100)}})
	client := h.claudeClient()
	params := ant.MessageNewParams{
		Model:     "nova",
		MaxTokens: 300,
		System:    []ant.TextBlockParam{{Text: "You are terse.", CacheControl: ant.NewCacheControlEphemeralParam()}},
		Messages: []ant.MessageParam{
			ant.NewUserMessage(ant.NewTextBlock("Weather?"), ant.NewImageBlockBase64("image/png", pixel)),
			ant.NewAssistantMessage(ant.NewToolUseBlock("toolu_1", map[string]any{"city": "Paris"}, "get_weather")),
			ant.NewUserMessage(ant.NewToolResultBlock("toolu_1", "the weather service is down", true), ant.NewTextBlock("Guess, then.")),
		},
		Tools: []ant.ToolUnionParam{{OfTool: &ant.ToolParam{Name: "get_weather",
			InputSchema: ant.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
		Thinking: ant.ThinkingConfigParamUnion{OfAdaptive: &ant.ThinkingConfigAdaptiveParam{}},
	}
	msg, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatalf("%v (fake: %s)", err, h.fake.Last().Invalid)
	}
	if msg.Content[0].Text != "It is sunny." || msg.Model != "nova" || msg.Usage.InputTokens != 5 || msg.Usage.CacheReadInputTokens != 100 {
		t.Errorf("answer %s", msg.RawJSON())
	}
	got := h.fake.Last()
	if got.Op != bedrockfake.OpConverse {
		t.Fatalf("Bedrock got %s", got.Op)
	}
	for _, want := range []string{`"system":[{"text":"You are terse."},{"cachePoint":{"type":"default"}}]`, `{"image":{"format":"png","source":{"bytes":"` + pixel + `"}}}`,
		`"status":"error"`, `"toolUseId":"toolu_1"`} {
		if !strings.Contains(string(got.Body), want) {
			t.Errorf("Converse body lacks %s:\n%s", want, got.Body)
		}
	}
	stream := client.Messages.NewStreaming(context.Background(), params)
	var acc ant.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil || len(acc.Content) != 1 || acc.Content[0].Text != "It is sunny." {
		t.Errorf("stream: %v %s", err, acc.RawJSON())
	}

	before := len(h.fake.Requests())
	for _, tc := range []struct {
		name  string
		opt   antopt.RequestOption
		param string
	}{
		{"thinking budget", antopt.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": 1024}), "thinking"},
		{"effort", antopt.WithJSONSet("output_config", map[string]any{"effort": "high"}), "output_config"},
	} {
		_, err := client.Messages.New(context.Background(), params, tc.opt)
		var apiErr *ant.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Error(), tc.param) {
			t.Errorf("%s: got %v, want a 400 naming %s", tc.name, err, tc.param)
		}
	}
	if n := len(h.fake.Requests()); n != before {
		t.Errorf("a refused request reached Bedrock (%d)", n-before)
	}
}

// TestChatDoorOnInvokeModel: the Chat Completions door on a Claude route goes through
// InvokeModel too, and reads Claude's answer as a completion.
func TestChatDoorOnInvokeModel(t *testing.T) {
	h := newHarness(t)
	h.fake.Script(sonnet, weatherAnswer)
	c, err := h.client.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{Model: "claude", MaxCompletionTokens: oai.Int(500),
		Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage("Be terse."), oai.UserMessage("Weather in Paris?")}, Tools: weatherTools})
	if err != nil {
		t.Fatalf("%s", gatewaytest.APIError(t, err).RawJSON())
	}
	ch := c.Choices[0]
	if ch.Message.Content != "Let me check the weather in Paris." || ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].ID != "toolu_bdrk_01A" {
		t.Errorf("completion %s", c.RawJSON())
	}
	if u := c.Usage; u.PromptTokens != 2312 || u.PromptTokensDetails.CachedTokens != 2000 || u.CompletionTokens != 40 {
		t.Errorf("usage %s", u.RawJSON())
	}
	body := invokeBody(t, h.fake, bedrockfake.OpInvoke)
	if string(body["system"]) != `"Be terse."` {
		t.Errorf("body %s", h.fake.Last().Body)
	}
	st := h.client.Chat.Completions.NewStreaming(context.Background(), oai.ChatCompletionNewParams{Model: "claude", MaxCompletionTokens: oai.Int(500),
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Weather in Paris?")}, Tools: weatherTools})
	acc, _ := gatewaytest.Accumulate(t, st)
	if got := acc.Choices[0].Message; got.Content != ch.Message.Content || len(got.ToolCalls) != 1 || jsonValue(t, []byte(got.ToolCalls[0].Function.Arguments)) != jsonValue(t, []byte(ch.Message.ToolCalls[0].Function.Arguments)) {
		t.Errorf("streamed %+v", got)
	}
}

type sseEvent struct{ name, data string }

// sseEvents splits an Anthropic SSE body into its events.
func sseEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimRight(string(body), "\n"), "\n\n") {
		var e sseEvent
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				e.name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				e.data = v
			}
		}
		if e.name == "" || e.data == "" {
			t.Fatalf("not an Anthropic event: %q", block)
		}
		out = append(out, e)
	}
	return out
}

// jsonValue normalizes a JSON text, so two encodings of one value compare equal.
func jsonValue(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return mustJSON(v)
}

func equalJSON(a, b any) bool { return mustJSON(a) == mustJSON(b) }

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

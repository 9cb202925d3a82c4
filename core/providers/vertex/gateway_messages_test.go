package vertex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"google.golang.org/grpc/codes"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
	"github.com/fngate/fngate/internal/vertexfake"
)

// The Messages door on Vertex AI, driven by the official Anthropic Go SDK: Claude's answers
// and events pass through verbatim, Gemini's are translated, and failover, errors and
// count_tokens keep the chat door's guarantees.

// anthropicClient is an Anthropic SDK client of the gateway that never retries.
func anthropicClient(h *harness, opts ...aoption.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]aoption.RequestOption{aoption.WithBaseURL(h.srv.URL), aoption.WithAPIKey("unused"),
		aoption.WithMaxRetries(0)}, opts...)...)
}

// lastRejected is the fake's complaint about the last request it got, if any.
func lastRejected(h *harness) error {
	if r := h.fake.Last(); r != nil {
		return r.Rejected
	}
	return nil
}

// accumulate reads a stream to its end through the SDK's accumulator.
func accumulate(t *testing.T, s interface {
	Next() bool
	Current() anthropic.MessageStreamEventUnion
	Err() error
}) anthropic.Message {
	t.Helper()
	var m anthropic.Message
	for s.Next() {
		if err := m.Accumulate(s.Current()); err != nil {
			t.Fatalf("the accumulator refused an event: %v", err)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// blocks renders a message's content as comparable JSON, tool inputs compacted.
func blocks(t *testing.T, m *anthropic.Message) string {
	t.Helper()
	var out []map[string]any
	for _, b := range m.Content {
		e := map[string]any{"type": b.Type}
		switch b.Type {
		case "text":
			e["text"] = b.Text
		case "thinking":
			e["thinking"], e["signature"] = b.Thinking, b.Signature
		case "tool_use":
			var in any
			if err := json.Unmarshal(b.Input, &in); err != nil {
				t.Fatalf("tool input %s: %v", b.Input, err)
			}
			e["id"], e["name"], e["input"] = b.ID, b.Name, in
		}
		out = append(out, e)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

var claudeThinkingAnswer = &anthropicfake.Answer{
	ID: "msg_vrtx_01",
	Blocks: []anthropicfake.Block{anthropicfake.Thinking("Köln first."), anthropicfake.Text("Grüße — 日本語 🦊"),
		anthropicfake.ToolUse("toolu_01A", "get_weather", `{"city":"Köln","note":"say \"hi\""}`)},
	StopReason: "tool_use",
	Usage:      anthropicfake.Usage{Input: 40, CacheRead: 10, CacheCreation: 5, Output: 20},
}

var weatherTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Current weather"),
	InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}}}}

var timeTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_time",
	InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}}

// TestMessagesClaudePassThrough: Claude on Vertex AI answers a Messages client with its own
// answer and events, byte for byte but for the gateway's model name, streamed (in HttpBody
// chunks cut anywhere) and not; the SDK's accumulator assembles from the stream what the
// non-streamed call returns, thinking and tool input included. The betas reach Vertex AI as
// the body's anthropic_beta, with anthropic_version and without the model.
func TestMessagesClaudePassThrough(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(vertexfake.Reply{Claude: claudeThinkingAnswer}, vertexfake.Reply{Claude: claudeThinkingAnswer},
		vertexfake.Reply{Claude: claudeThinkingAnswer})
	client := anthropicClient(h, aoption.WithHeader("anthropic-beta", "interleaved-thinking-2025-05-14,context-1m-2025-08-07"))
	params := anthropic.MessageNewParams{Model: "gw/claude", MaxTokens: 2048,
		Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		System:   []anthropic.TextBlockParam{{Text: "Be brief.", CacheControl: anthropic.NewCacheControlEphemeralParam()}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Köln?"))},
		Tools:    []anthropic.ToolUnionParam{weatherTool}}
	var raw *http.Response
	msg, err := client.Messages.New(context.Background(), params, aoption.WithResponseInto(&raw))
	if err != nil {
		t.Fatalf("%v (fake: %v)", err, lastRejected(h))
	}
	model := "claude-sonnet-4-5@20250929"
	want := messages.PatchModel([]byte(claudeThinkingAnswer.JSON(model)), "gw/claude")
	if msg.RawJSON() != string(want) {
		t.Errorf("answer\n%s\nwant Vertex AI's, model patched:\n%s", msg.RawJSON(), want)
	}
	if raw.Header.Get(gateway.HeaderRoute) != "vertex/"+model {
		t.Errorf("route %q", raw.Header.Get(gateway.HeaderRoute))
	}
	got := h.fake.Last()
	var betas []string
	var version string
	if got.Method != "RawPredict" || got.Field("anthropic_beta", &betas) != nil || strings.Join(betas, ",") != "interleaved-thinking-2025-05-14,context-1m-2025-08-07" ||
		got.Field("anthropic_version", &version) != nil || version != "vertex-2023-10-16" || bytes.Contains(got.Body, []byte(`"model"`)) {
		t.Errorf("%s body %s", got.Method, got.Body)
	}

	acc := accumulate(t, client.Messages.NewStreaming(context.Background(), params))
	if h.fake.Last().Method != "StreamRawPredict" || h.fake.Last().Rejected != nil {
		t.Fatalf("%s: %v", h.fake.Last().Method, h.fake.Last().Rejected)
	}
	if b, w := blocks(t, &acc), blocks(t, msg); b != w {
		t.Errorf("stream assembled\n%s\nnon-stream\n%s", b, w)
	}
	if acc.StopReason != "tool_use" || acc.Usage.InputTokens != 40 || acc.Usage.CacheReadInputTokens != 10 || acc.Usage.OutputTokens != 20 || acc.Model != "gw/claude" {
		t.Errorf("stream stop %q usage %+v model %q", acc.StopReason, acc.Usage, acc.Model)
	}

	// The events themselves, as Vertex AI sent them.
	body, _ := json.Marshal(map[string]any{"model": "gw/claude", "max_tokens": 2048, "stream": true,
		"messages": []map[string]any{{"role": "user", "content": "Weather in Köln?"}}})
	r := h.srv.Do(t, http.MethodPost, "/v1/messages", string(body), "anthropic-version", "2023-06-01")
	upstream := anthropicfake.SSE(claudeThinkingAnswer.Events(model))
	if r.Status != 200 || string(r.Body) != strings.Replace(upstream, `"model":"`+model+`"`, `"model":"gw/claude"`, 1) {
		t.Errorf("%d events\n%s\nwant Vertex AI's\n%s", r.Status, r.Body, upstream)
	}
}

// TestMessagesClaudeRequest: what Claude on Vertex AI is sent for a Claude Code-like request:
// its system message inside the conversation joins system (Vertex AI's fixed API version
// predates it there), the turns around it merge, the beta features ride along; and what
// Vertex AI cannot resolve, a Files API reference, is refused before any call.
func TestMessagesClaudeRequest(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(vertexfake.Reply{Claude: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("ok")}}})
	r := h.srv.Do(t, http.MethodPost, "/v1/messages?beta=true", `{"model":"gw/claude","max_tokens":2000,
		"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],
		"messages":[{"role":"user","content":"hi"},{"role":"system","content":"The directory is /src."},{"role":"user","content":[{"type":"text","text":"list it","cache_control":{"type":"ephemeral"}}]}],
		"metadata":{"user_id":"u-1"},"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},"output_config":{"effort":"high"}}`,
		"anthropic-version", "2023-06-01", "anthropic-beta", "claude-code-20250219,context-management-2025-06-27", "x-claude-code-session-id", "s-1")
	if r.Status != 200 {
		t.Fatalf("%d %s (fake: %v)", r.Status, r.Body, lastRejected(h))
	}
	got := h.fake.Last()
	var system, msgs, cm json.RawMessage
	_ = got.Field("system", &system)
	_ = got.Field("messages", &msgs)
	_ = got.Field("context_management", &cm)
	if string(system) != `[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"The directory is /src."}]` {
		t.Errorf("system %s", system)
	}
	if string(msgs) != `[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"list it","cache_control":{"type":"ephemeral"}}]}]` {
		t.Errorf("messages %s", msgs)
	}
	if string(cm) != `{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}` {
		t.Errorf("context_management %s", cm)
	}

	n := len(h.fake.Requests())
	r = h.srv.Do(t, http.MethodPost, "/v1/messages", `{"model":"gw/claude","max_tokens":100,"messages":[{"role":"user","content":[
		{"type":"image","source":{"type":"file","file_id":"file_011"}},{"type":"text","text":"what is it?"}]}]}`, "anthropic-version", "2023-06-01")
	if e := r.JSON(t); r.Status != 400 || e["type"] != "error" || !strings.Contains(string(r.Body), "Files API") {
		t.Errorf("Files API image: %d %s", r.Status, r.Body)
	}
	if len(h.fake.Requests()) != n {
		t.Error("Vertex AI was called for a request it cannot serve")
	}
}

// TestMessagesGeminiText: Gemini answers a Messages client through translation: a text
// answer with its thoughts as a thinking block when the client asked for thinking (the
// request asks Gemini to include them, with the budget), none otherwise; the stream
// assembles to the same message; usage in Anthropic's terms (cached input apart).
func TestMessagesGeminiText(t *testing.T) {
	h := newHarness(t)
	answer := &vertexfake.Answer{Thought: "The user greets me.", Text: "Bonjour ! Comment allez-vous ?",
		Usage: vertexfake.Usage{Prompt: 30, Candidates: 9, Thoughts: 6, Cached: 10}}
	h.fake.Enqueue(vertexfake.Reply{Gemini: answer}, vertexfake.Reply{Gemini: answer}, vertexfake.Reply{Gemini: answer})
	client := anthropicClient(h)
	params := anthropic.MessageNewParams{Model: "gw/gemini", MaxTokens: 2048, Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		System:   []anthropic.TextBlockParam{{Text: "Answer in French."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello"))}}
	msg, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatalf("%v (fake: %v)", err, lastRejected(h))
	}
	want := `[{"signature":"","thinking":"The user greets me.","type":"thinking"},{"text":"Bonjour ! Comment allez-vous ?","type":"text"}]`
	if b := blocks(t, msg); b != want || msg.StopReason != "end_turn" || msg.Model != "gw/gemini" || !strings.HasPrefix(msg.ID, "msg_") {
		t.Errorf("message %s", msg.RawJSON())
	}
	if u := msg.Usage; u.InputTokens != 20 || u.CacheReadInputTokens != 10 || u.OutputTokens != 15 {
		t.Errorf("usage %s", u.RawJSON())
	}
	g := h.fake.Last().Generate
	if tc := g.GetGenerationConfig().GetThinkingConfig(); !tc.GetIncludeThoughts() || tc.GetThinkingBudget() != 1024 || g.GetGenerationConfig().GetMaxOutputTokens() != 2048 {
		t.Errorf("generation config %v", g.GetGenerationConfig())
	}
	if si := g.GetSystemInstruction().GetParts(); len(si) != 1 || si[0].GetText() != "Answer in French." {
		t.Errorf("system instruction %v", si)
	}

	acc := accumulate(t, client.Messages.NewStreaming(context.Background(), params))
	if b := blocks(t, &acc); b != want || acc.StopReason != "end_turn" || acc.Usage.OutputTokens != 15 || acc.Usage.InputTokens != 20 {
		t.Errorf("stream assembled %s, stop %q usage %+v", b, acc.StopReason, acc.Usage)
	}

	params.Thinking = anthropic.ThinkingConfigParamUnion{}
	msg, err = client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if b := blocks(t, msg); b != `[{"text":"Bonjour ! Comment allez-vous ?","type":"text"}]` {
		t.Errorf("without thinking asked for: %s", b)
	}
	if h.fake.Last().Generate.GetGenerationConfig().GetThinkingConfig() != nil {
		t.Errorf("thinking config sent unasked: %v", h.fake.Last().Generate.GetGenerationConfig())
	}
}

// TestMessagesGeminiToolUse: Gemini's function calls reach a Messages client as tool_use
// blocks with gateway-made ids; the SDK assembles from input_json_delta the same input as
// the non-streamed answer. The results go back, one failed, in the opposite order: Gemini 3
// gets them as functionResponse parts in call order (the failed one under "error"), after a
// model turn whose thinking is left out and whose first call carries the stand-in signature.
func TestMessagesGeminiToolUse(t *testing.T) {
	h := newHarness(t)
	answer := &vertexfake.Answer{Thought: "Two lookups.", Text: "Let me check both.",
		Calls: []vertexfake.Call{{Name: "get_weather", Args: `{"city":"Paris","note":"café \"ñ\"","days":3}`}, {Name: "get_time", Args: `{}`}},
		Usage: vertexfake.Usage{Prompt: 300, Candidates: 80, Thoughts: 20}}
	h.fake.Enqueue(vertexfake.Reply{Gemini: answer}, vertexfake.Reply{Gemini: answer})
	client := anthropicClient(h)
	question := anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris, and the time?"))
	params := anthropic.MessageNewParams{Model: "gw/gemini3", MaxTokens: 4096, Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		Messages: []anthropic.MessageParam{question}, Tools: []anthropic.ToolUnionParam{weatherTool, timeTool},
		ToolChoice: anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}}
	msg, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatalf("%v (fake: %v)", err, lastRejected(h))
	}
	acc := accumulate(t, client.Messages.NewStreaming(context.Background(), params))
	if msg.StopReason != "tool_use" || acc.StopReason != "tool_use" || len(msg.Content) != 4 || len(acc.Content) != 4 {
		t.Fatalf("non-stream %s\nstream %s", blocks(t, msg), blocks(t, &acc))
	}
	ids := map[string]bool{}
	for i := range msg.Content {
		w, g := msg.Content[i], acc.Content[i]
		if w.Type != g.Type || w.Text != g.Text || w.Thinking != g.Thinking || w.Name != g.Name {
			t.Errorf("block %d: stream %+v, non-stream %+v", i, g, w)
		}
		if w.Type != "tool_use" {
			continue
		}
		if !openaifake.JSONEqual(string(g.Input), string(w.Input)) {
			t.Errorf("block %d input: stream %s, non-stream %s", i, g.Input, w.Input)
		}
		for _, id := range []string{w.ID, g.ID} {
			if id == "" || ids[id] {
				t.Errorf("tool_use id %q: want a fresh one", id)
			}
			ids[id] = true
		}
	}
	if !openaifake.JSONEqual(string(msg.Content[2].Input), `{"city":"Paris","note":"café \"ñ\"","days":3}`) || string(msg.Content[3].Input) != "{}" {
		t.Errorf("inputs %s %s", msg.Content[2].Input, msg.Content[3].Input)
	}
	if fc := h.fake.Last().Generate.GetToolConfig().GetFunctionCallingConfig(); fc.GetMode().String() != "ANY" {
		t.Errorf("tool_choice any sent as %v", fc)
	}

	// The round trip: the answer as the client keeps it, then the results, the time first.
	h.fake.Enqueue(vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "Sunny, 14:00."}})
	var back []anthropic.ContentBlockParamUnion
	for _, b := range msg.Content {
		switch b.Type {
		case "thinking":
			back = append(back, anthropic.NewThinkingBlock(b.Signature, b.Thinking))
		case "text":
			back = append(back, anthropic.NewTextBlock(b.Text))
		case "tool_use":
			back = append(back, anthropic.NewToolUseBlock(b.ID, b.Input, b.Name))
		}
	}
	params.Messages = []anthropic.MessageParam{question, anthropic.NewAssistantMessage(back...), anthropic.NewUserMessage(
		anthropic.NewToolResultBlock(msg.Content[3].ID, "clock unavailable", true),
		anthropic.NewToolResultBlock(msg.Content[2].ID, `{"temp_c":18}`, false),
		anthropic.NewTextBlock("Summarise."))}
	params.ToolChoice = anthropic.ToolChoiceUnionParam{}
	final, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatalf("%v (fake: %v)", err, lastRejected(h))
	}
	if blocks(t, final) != `[{"text":"Sunny, 14:00.","type":"text"}]` {
		t.Errorf("final %s", final.RawJSON())
	}
	c := h.fake.Last().Generate.GetContents()
	if len(c) != 3 || c[1].GetRole() != "model" || c[2].GetRole() != "user" {
		t.Fatalf("contents %v", c)
	}
	model := c[1].GetParts()
	if len(model) != 3 || model[0].GetText() != "Let me check both." || model[1].GetFunctionCall().GetName() != "get_weather" ||
		len(model[1].GetThoughtSignature()) == 0 || len(model[2].GetThoughtSignature()) != 0 {
		t.Errorf("model turn %v", model)
	}
	user := c[2].GetParts()
	if len(user) != 3 || user[2].GetText() != "Summarise." {
		t.Fatalf("user turn %v", user)
	}
	r0, r1 := user[0].GetFunctionResponse(), user[1].GetFunctionResponse()
	if r0.GetName() != "get_weather" || r0.GetResponse().GetFields()["temp_c"].GetNumberValue() != 18 {
		t.Errorf("first response %v", r0)
	}
	if r1.GetName() != "get_time" || r1.GetResponse().GetFields()["error"].GetStringValue() != "clock unavailable" {
		t.Errorf("second response %v", r1)
	}
}

// TestMessagesFailover: before any output, an overloaded Claude on Vertex AI (Anthropic's
// overloaded_error under UNAVAILABLE) moves a Messages request to the next route, streamed
// and not; once output began, a failure ends the stream with an error event and no
// message_stop, without failover.
func TestMessagesFailover(t *testing.T) {
	h := newHarness(t)
	overloaded := vertexfake.Reply{Err: vertexfake.Status(codes.Unavailable, anthropicfake.ErrorBody("overloaded_error", "Overloaded"))}
	h.fake.Enqueue(overloaded, overloaded)
	client := anthropicClient(h)
	params := anthropic.MessageNewParams{Model: "gw/claude-backup", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("served by the backup"))}}
	var raw *http.Response
	msg, err := client.Messages.New(context.Background(), params, aoption.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if blocks(t, msg) != `[{"text":"served by the backup","type":"text"}]` || raw.Header.Get(gateway.HeaderRoute) != "backup/echo" || raw.Header.Get(gateway.HeaderAttempts) != "2" {
		t.Errorf("answer %s via %s after %s attempts", msg.RawJSON(), raw.Header.Get(gateway.HeaderRoute), raw.Header.Get(gateway.HeaderAttempts))
	}
	if acc := accumulate(t, client.Messages.NewStreaming(context.Background(), params)); blocks(t, &acc) != `[{"text":"served by the backup","type":"text"}]` {
		t.Errorf("stream after failover %s", blocks(t, &acc))
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 4 {
		t.Fatalf("%d attempts, want 4", len(a))
	}
	for _, i := range []int{0, 2} {
		gatewaytest.CheckAttempt(t, a[i], map[string]any{"outcome": "failover", "provider": "vertex", "error_class": "overloaded", "error_code": "overloaded_error"})
		gatewaytest.CheckAttempt(t, a[i+1], map[string]any{"outcome": "ok", "provider": "mock"})
	}

	// After output: the failure comes with the HttpBody chunk after the first text event.
	sse := []byte(anthropicfake.SSE(claudeAnswer.Events("claude-sonnet-4-5@20250929")))
	end := bytes.Index(sse, []byte(`"text_delta"`))
	end += bytes.Index(sse[end:], []byte("\n\n")) + 2
	after := 0
	for n := 0; n < end; after++ {
		n += len(vertexfake.Awkward(sse)[after])
	}
	h.fake.Enqueue(vertexfake.Reply{Claude: claudeAnswer, After: after, Err: vertexfake.Status(codes.Internal, "stream aborted")},
		vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "one two three four five six"}, After: 2, Err: vertexfake.Status(codes.Unavailable, "connection reset")})
	for _, model := range []string{"gw/claude-backup", "gw/gemini-backup"} {
		r := h.srv.Do(t, http.MethodPost, "/v1/messages", `{"model":"`+model+`","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			"anthropic-version", "2023-06-01")
		body := string(r.Body)
		if r.Status != 200 || !strings.Contains(body, `"text_delta"`) || !strings.Contains(body, "event: error\ndata: {\"type\":\"error\"") || strings.Contains(body, "message_stop") {
			t.Errorf("%s:\n%s", model, body)
		}
	}
	if a := h.logs.Attempts(t, 4); len(a) != 6 {
		t.Errorf("%d attempts, want 6 (no failover after output)", len(a))
	}
}

// TestMessagesCountTokens: count_tokens is exact on a Claude route (Vertex AI's count-tokens
// rawPredict, the model named in the body, the betas with it) and on a Gemini route
// (LlmUtilityService.CountTokens of the translated request); a partner model cannot count,
// so the gateway estimates and says so.
func TestMessagesCountTokens(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(vertexfake.Reply{InputTokens: 1234}, vertexfake.Reply{InputTokens: 321})
	client := anthropicClient(h, aoption.WithHeader("anthropic-beta", "token-counting-2024-11-01"))
	params := anthropic.MessageCountTokensParams{Model: "gw/claude",
		System:   anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: []anthropic.TextBlockParam{{Text: "Be brief."}}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("How many tokens is this?"))},
		Tools:    []anthropic.MessageCountTokensToolUnionParam{{OfTool: weatherTool.OfTool}}}
	count := func(model string) (int64, string) {
		t.Helper()
		params.Model = model
		var raw *http.Response
		n, err := client.Messages.CountTokens(context.Background(), params, aoption.WithResponseInto(&raw))
		if err != nil {
			t.Fatalf("%s: %v (fake: %v)", model, err, lastRejected(h))
		}
		return n.InputTokens, raw.Header.Get(gateway.HeaderTokenCount)
	}

	if n, how := count("gw/claude"); n != 1234 || how != "exact" {
		t.Errorf("claude: %d tokens, %s %q", n, gateway.HeaderTokenCount, how)
	}
	got := h.fake.Last()
	var model, version string
	var betas []string
	if got.Method != "RawPredict" || got.Resource != "projects/fngate-test/locations/europe-west4/publishers/anthropic/models/count-tokens" ||
		got.Field("model", &model) != nil || model != "claude-sonnet-4-5@20250929" || got.Field("anthropic_version", &version) != nil ||
		got.Field("anthropic_beta", &betas) != nil || strings.Join(betas, ",") != "token-counting-2024-11-01" || bytes.Contains(got.Body, []byte("max_tokens")) {
		t.Errorf("%s %s %s", got.Method, got.Resource, got.Body)
	}

	if n, how := count("gw/gemini"); n != 321 || how != "exact" {
		t.Errorf("gemini: %d tokens, %q", n, how)
	}
	got = h.fake.Last()
	g := got.Generate
	if got.Method != "CountTokens" || got.Resource != "projects/fngate-test/locations/europe-west4/publishers/google/models/gemini-2.5-flash" ||
		g.GetSystemInstruction().GetParts()[0].GetText() != "Be brief." || g.GetContents()[0].GetParts()[0].GetText() != "How many tokens is this?" ||
		g.GetTools()[0].GetFunctionDeclarations()[0].GetName() != "get_weather" {
		t.Errorf("%s %s %v", got.Method, got.Resource, g)
	}

	if n, how := count("gw/llama"); n <= 0 || how != "estimate" {
		t.Errorf("partner model: %d tokens, %q", n, how)
	}
	if len(h.fake.Requests()) != 2 || len(h.openapi.Seen()) != 0 {
		t.Errorf("Vertex AI got %d gRPC and %d REST calls, want the two counts", len(h.fake.Requests()), len(h.openapi.Seen()))
	}
}

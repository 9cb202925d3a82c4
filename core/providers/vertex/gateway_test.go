package vertex_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/grpc/codes"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/vertex"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
	"github.com/fngate/fngate/internal/vertexfake"
)

// The gateway under test: one Vertex AI connection whose gRPC endpoint is the fake
// PredictionService and whose REST root is the fake OpenAI-compatible endpoint. The -backup
// models fail over to the mock, which echoes the last user message.
const gatewayConfig = `
connections:
  vertex:
    kind: vertex
    project: fngate-test
    location: europe-west4
    endpoint: GRPC
    insecure: true
    base_url: REST
  backup:
    kind: mock
models:
  gw/gemini:
    routes: [{connection: vertex, model: gemini-2.5-flash}]
  gw/gemini3:
    routes: [{connection: vertex, model: gemini-3-pro-preview}]
  gw/claude:
    max_output_tokens: 2048
    routes: [{connection: vertex, model: claude-sonnet-4-5@20250929}]
  gw/llama:
    routes: [{connection: vertex, model: meta/llama-3.3-70b-instruct-maas}]
  gw/tuned:
    routes: [{connection: vertex, model: my-claude-build, api: claude}]
  gw/gemini-backup:
    routes:
      - {connection: vertex, model: gemini-2.5-flash}
      - {connection: backup, model: echo}
  gw/claude-backup:
    routes:
      - {connection: vertex, model: claude-sonnet-4-5@20250929}
      - {connection: backup, model: echo}
  gw/gemini-slow:
    timeouts: {first_byte: 300ms, idle: 300ms}
    routes:
      - {connection: vertex, model: gemini-2.5-flash}
      - {connection: backup, model: echo}
`

type harness struct {
	fake    *vertexfake.Server
	openapi *vertexfake.OpenAPI
	srv     *gatewaytest.Server
	client  oai.Client
	logs    *gatewaytest.LogBuffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	fake := vertexfake.New()
	t.Cleanup(fake.Close)
	openapi := vertexfake.NewOpenAPI()
	t.Cleanup(openapi.Close)
	srv, logs := gatewaytest.ServeLogged(t, strings.NewReplacer("GRPC", fake.Addr, "REST", openapi.URL).Replace(gatewayConfig), vertex.Register, mock.Register)
	return &harness{fake: fake, openapi: openapi, srv: srv, client: srv.OpenAI(), logs: logs}
}

var weatherTools = []oai.ChatCompletionToolUnionParam{
	oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Description: oai.String("Current weather"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []string{"city"}, "additionalProperties": false}}),
	oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time"}),
}

// TestGeminiChat: a non-streamed Gemini answer reaches the SDK without its thought, with
// the usage arithmetic applied, and the request Vertex AI got names the regional model,
// carries the system prompt as systemInstruction and the output settings, and no
// credentials (insecure connection).
func TestGeminiChat(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(vertexfake.Reply{Gemini: &vertexfake.Answer{Thought: "Let me think.", Text: "Bonjour !",
		Usage: vertexfake.Usage{Prompt: 12, Candidates: 9, Thoughts: 4, Cached: 3}}})
	var raw *http.Response
	params := oai.ChatCompletionNewParams{Model: "gw/gemini", User: oai.String("alice"), MaxCompletionTokens: oai.Int(300),
		Temperature: oai.Float(1.5), Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage("Answer in French."), oai.UserMessage("Hello")}}
	comp, err := h.client.Chat.Completions.New(context.Background(), params, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.Choices) != 1 || comp.Choices[0].Message.Content != "Bonjour !" || comp.Choices[0].FinishReason != "stop" || comp.Model != "gw/gemini" {
		t.Fatalf("completion %s", comp.RawJSON())
	}
	u := comp.Usage
	if u.PromptTokens != 12 || u.CompletionTokens != 13 || u.TotalTokens != 25 || u.PromptTokensDetails.CachedTokens != 3 || u.CompletionTokensDetails.ReasoningTokens != 4 {
		t.Errorf("usage %s", u.RawJSON())
	}
	if raw.Header.Get(gateway.HeaderRoute) != "vertex/gemini-2.5-flash" {
		t.Errorf("route header %q", raw.Header.Get(gateway.HeaderRoute))
	}
	got := h.fake.Last()
	if got.Rejected != nil || got.Method != "GenerateContent" {
		t.Fatalf("%s: %v", got.Method, got.Rejected)
	}
	g := got.Generate
	if g.GetModel() != "projects/fngate-test/locations/europe-west4/publishers/google/models/gemini-2.5-flash" {
		t.Errorf("model %q", g.GetModel())
	}
	if si := g.GetSystemInstruction().GetParts(); len(si) != 1 || si[0].GetText() != "Answer in French." {
		t.Errorf("system instruction %v", g.GetSystemInstruction())
	}
	if c := g.GetContents(); len(c) != 1 || c[0].GetRole() != "user" || c[0].GetParts()[0].GetText() != "Hello" {
		t.Errorf("contents %v", c)
	}
	if gc := g.GetGenerationConfig(); gc.GetMaxOutputTokens() != 300 || gc.GetTemperature() != 1.5 {
		t.Errorf("generation config %v", gc)
	}
	if p := got.Metadata.Get("x-goog-request-params"); len(p) != 1 || !strings.Contains(p[0], "model=projects%2Ffngate-test") {
		t.Errorf("routing header %v", p)
	}
	if a := got.Metadata.Get("authorization"); len(a) != 0 {
		t.Errorf("an insecure connection sent credentials: %v", a)
	}
	a := h.logs.Attempts(t, 1)
	if len(a) != 1 {
		t.Fatalf("%d attempts", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"msg": "attempt", "outcome": "ok", "provider": "vertex", "route": "vertex/gemini-2.5-flash"})
	if usage, _ := a[0]["usage"].(map[string]any); usage["prompt_tokens"] != 12.0 || usage["completion_tokens"] != 13.0 || usage["cached_tokens"] != 3.0 {
		t.Errorf("logged usage %v", a[0]["usage"])
	}
}

// TestGeminiStream: the SDK reads a streamed answer whose early messages carry empty
// usageMetadata; the one usage chunk holds the final counts, and the raw stream has the
// OpenAI shape: role on the first content, the finish chunk, the usage chunk, [DONE].
func TestGeminiStream(t *testing.T) {
	h := newHarness(t)
	answer := &vertexfake.Answer{Thought: "hmm", Text: "The quick brown fox jumps over the lazy dog.", Usage: vertexfake.Usage{Prompt: 20, Candidates: 11}}
	h.fake.Enqueue(vertexfake.Reply{Gemini: answer}, vertexfake.Reply{Gemini: answer})
	params := gatewaytest.UserOnly("gw/gemini", "Tell me about foxes")
	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	text, finish, usage := gatewaytest.StreamText(t, h.client.Chat.Completions.NewStreaming(context.Background(), params))
	if text != answer.Text || finish != "stop" {
		t.Errorf("text %q finish %q", text, finish)
	}
	if len(usage) != 1 || usage[0].PromptTokens != 20 || usage[0].CompletionTokens != 11 || usage[0].TotalTokens != 31 {
		t.Errorf("usage chunks %+v", usage)
	}
	if m := h.fake.Last().Method; m != "StreamGenerateContent" {
		t.Errorf("method %s", m)
	}

	r := h.srv.Chat(t, `{"model":"gw/gemini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"again"}]}`)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", r.Status, r.Header)
	}
	events := gatewaytest.SSEData(t, r.Body)
	if !strings.Contains(events[0], `"delta":{"role":"assistant","content":"The quick "}`) {
		t.Errorf("first event %s: the role must come with the first content, the thought never", events[0])
	}
	n := len(events)
	if n < 4 || events[n-1] != "[DONE]" || !strings.Contains(events[n-2], `"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":11,"total_tokens":31}`) ||
		!strings.Contains(events[n-3], `"finish_reason":"stop"`) {
		t.Errorf("stream tail:\n%s", strings.Join(events[max(0, n-3):], "\n"))
	}
	if strings.Contains(string(r.Body), "hmm") {
		t.Error("the thought reached the client")
	}
}

var geminiTools = &vertexfake.Answer{
	Text: "Let me check both.",
	Calls: []vertexfake.Call{
		{Name: "get_weather", Args: `{"city":"Paris","note":"say \"hi\" café ñ","days":3}`},
		{Name: "get_time", Args: `{}`},
	},
	Usage: vertexfake.Usage{Prompt: 300, Candidates: 80},
}

// TestGeminiToolCalls: for the same answer (text, then two calls that Gemini finishes with
// STOP), the SDK's accumulator assembles from the stream what the non-streamed call returns:
// finish_reason tool_calls, the same names and arguments, fresh call_ ids. Then the results
// go back: one plain text, one JSON object, in the opposite order of the calls. Vertex AI
// gets them as functionResponse parts named after their calls, in call order, each response
// an object; the model turn carries the stand-in thought signature on its first call only.
func TestGeminiToolCalls(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(vertexfake.Reply{Gemini: geminiTools}, vertexfake.Reply{Gemini: geminiTools})
	params := gatewaytest.UserOnly("gw/gemini3", "Weather in Paris, and the time?")
	params.Tools = weatherTools
	params.ToolChoice = oai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: oai.String("required")}

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
	ids := map[string]bool{}
	for i := range want.Message.ToolCalls {
		w, g := want.Message.ToolCalls[i], got.Message.ToolCalls[i]
		if g.Function.Name != w.Function.Name || g.Function.Arguments != w.Function.Arguments || g.Type != "function" {
			t.Errorf("tool call %d: stream %+v, non-stream %+v", i, g.Function, w.Function)
		}
		for _, id := range []string{w.ID, g.ID} {
			if !strings.HasPrefix(id, "call_") || len(id) < 20 || ids[id] {
				t.Errorf("tool call id %q: want a fresh call_ id", id)
			}
			ids[id] = true
		}
	}
	if !openaifake.JSONEqual(want.Message.ToolCalls[0].Function.Arguments, `{"city":"Paris","note":"say \"hi\" café ñ","days":3}`) ||
		want.Message.ToolCalls[1].Function.Arguments != "{}" {
		t.Errorf("arguments %+v", want.Message.ToolCalls)
	}
	if acc.Usage.PromptTokens != 300 || acc.Usage.CompletionTokens != 80 || comp.Usage.TotalTokens != 380 {
		t.Errorf("usage: stream %s, non-stream %s", acc.Usage.RawJSON(), comp.Usage.RawJSON())
	}
	if strings.Join(finished, ",") != "get_weather,get_time" {
		t.Errorf("finished tool calls %v", finished)
	}
	sent := h.fake.Last().Generate
	if fc := sent.GetToolConfig().GetFunctionCallingConfig(); fc.GetMode() != aiplatformpb.FunctionCallingConfig_ANY {
		t.Errorf("tool_choice required sent as %v", fc)
	}
	decl := sent.GetTools()[0].GetFunctionDeclarations()
	if len(decl) != 2 || decl[0].GetParametersJsonSchema().GetStructValue().GetFields()["additionalProperties"] == nil || decl[1].GetParametersJsonSchema() != nil {
		t.Errorf("declarations %v", decl)
	}

	// Round trip, the results answered out of order.
	h.fake.Enqueue(vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "Sunny, 14:00."}})
	next := gatewaytest.UserOnly("gw/gemini3", "Weather in Paris, and the time?")
	next.Tools = weatherTools
	next.Messages = append(next.Messages, comp.Choices[0].Message.ToParam(),
		oai.ToolMessage(`{"time":"14:00"}`, want.Message.ToolCalls[1].ID),
		oai.ToolMessage("18C and sunny", want.Message.ToolCalls[0].ID),
		oai.UserMessage("Summarise."))
	final, err := h.client.Chat.Completions.New(context.Background(), next)
	if err != nil {
		t.Fatalf("%v (fake: %v)", err, h.fake.Last().Rejected)
	}
	if final.Choices[0].Message.Content != "Sunny, 14:00." {
		t.Errorf("final %s", final.RawJSON())
	}
	c := h.fake.Last().Generate.GetContents()
	if len(c) != 3 || c[1].GetRole() != "model" || c[2].GetRole() != "user" {
		t.Fatalf("contents %v", c)
	}
	model := c[1].GetParts()
	if len(model) != 3 || model[1].GetFunctionCall().GetName() != "get_weather" || model[1].GetFunctionCall().GetArgs().GetFields()["city"].GetStringValue() != "Paris" {
		t.Fatalf("model turn %v", model)
	}
	if len(model[1].GetThoughtSignature()) == 0 || len(model[2].GetThoughtSignature()) != 0 {
		t.Errorf("thought signatures: first call %q, second %q", model[1].GetThoughtSignature(), model[2].GetThoughtSignature())
	}
	user := c[2].GetParts()
	if len(user) != 3 || user[2].GetText() != "Summarise." {
		t.Fatalf("user turn %v", user)
	}
	r0, r1 := user[0].GetFunctionResponse(), user[1].GetFunctionResponse()
	if r0.GetName() != "get_weather" || r0.GetResponse().GetFields()["content"].GetStringValue() != "18C and sunny" {
		t.Errorf("first response %v", r0)
	}
	if r1.GetName() != "get_time" || r1.GetResponse().GetFields()["time"].GetStringValue() != "14:00" || len(r1.GetResponse().GetFields()) != 1 {
		t.Errorf("second response %v", r1)
	}
}

// TestGeminiContentFilter: a SAFETY finish and a prompt blocked before any candidate are
// content_filter, streamed or not, and a streamed block still ends properly.
func TestGeminiContentFilter(t *testing.T) {
	h := newHarness(t)
	safety := &vertexfake.Answer{Finish: aiplatformpb.Candidate_SAFETY, Usage: vertexfake.Usage{Prompt: 7}}
	blocked := &vertexfake.Answer{BlockReason: aiplatformpb.GenerateContentResponse_PromptFeedback_PROHIBITED_CONTENT, Usage: vertexfake.Usage{Prompt: 7}}
	for _, tt := range []struct {
		name   string
		answer *vertexfake.Answer
	}{{"safety finish", safety}, {"blocked prompt", blocked}} {
		t.Run(tt.name, func(t *testing.T) {
			h.fake.Enqueue(vertexfake.Reply{Gemini: tt.answer}, vertexfake.Reply{Gemini: tt.answer})
			comp, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/gemini", "something dangerous"))
			if err != nil {
				t.Fatal(err)
			}
			if comp.Choices[0].FinishReason != "content_filter" || comp.Choices[0].Message.Content != "" || comp.Usage.PromptTokens != 7 {
				t.Errorf("non-stream %s", comp.RawJSON())
			}
			r := h.srv.Chat(t, `{"model":"gw/gemini","stream":true,"messages":[{"role":"user","content":"something dangerous"}]}`)
			body := string(r.Body)
			if r.Status != 200 || !strings.Contains(body, `"finish_reason":"content_filter"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
				t.Errorf("stream %d:\n%s", r.Status, body)
			}
		})
	}
}

var claudeAnswer = &anthropicfake.Answer{
	Blocks: []anthropicfake.Block{anthropicfake.Text("Grüße aus Köln — 日本語も少し。 café ñ"),
		anthropicfake.ToolUse("toolu_01A", "get_weather", `{"city":"Köln","note":"say \"hi\" 日本"}`)},
	StopReason: "tool_use",
	Usage:      anthropicfake.Usage{Input: 40, CacheRead: 10, Output: 20},
}

// TestClaude: Claude on Vertex AI through RawPredict and StreamRawPredict. The fake checks
// the body as Vertex AI does (anthropic_version vertex-2023-10-16, no model) and the
// streamed events arrive in HttpBody chunks cut inside lines, JSON texts and UTF-8
// characters, yet the SDK assembles exactly the non-streamed answer.
func TestClaude(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(vertexfake.Reply{Claude: claudeAnswer}, vertexfake.Reply{Claude: claudeAnswer})
	params := gatewaytest.UserOnly("gw/claude", "Weather in Köln?")
	params.Tools = weatherTools
	comp, err := h.client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatalf("%v (fake: %v)", err, h.fake.Last().Rejected)
	}
	got := h.fake.Last()
	if got.Method != "RawPredict" || got.Resource != "projects/fngate-test/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929" {
		t.Errorf("%s %s", got.Method, got.Resource)
	}
	var version string
	var maxTokens int
	if got.Field("anthropic_version", &version) != nil || version != "vertex-2023-10-16" || got.Field("max_tokens", &maxTokens) != nil || maxTokens != 2048 {
		t.Errorf("body %s", got.Body)
	}
	if bytes.Contains(got.Body, []byte(`"model"`)) {
		t.Errorf("the body names the model: %s", got.Body)
	}

	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	stream := h.client.Chat.Completions.NewStreaming(context.Background(), params)
	var acc oai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("%v (fake: %v)", err, h.fake.Last().Rejected)
	}
	if m := h.fake.Last().Method; m != "StreamRawPredict" {
		t.Errorf("method %s", m)
	}
	want, gotC := comp.Choices[0], acc.Choices[0]
	if want.Message.Content != "Grüße aus Köln — 日本語も少し。 café ñ" || gotC.Message.Content != want.Message.Content {
		t.Errorf("content: stream %q, non-stream %q", gotC.Message.Content, want.Message.Content)
	}
	if want.FinishReason != "tool_calls" || gotC.FinishReason != "tool_calls" || len(gotC.Message.ToolCalls) != 1 ||
		gotC.Message.ToolCalls[0].ID != "toolu_01A" || gotC.Message.ToolCalls[0].Function.Arguments != want.Message.ToolCalls[0].Function.Arguments {
		t.Errorf("tool calls: stream %+v, non-stream %+v", gotC.Message.ToolCalls, want.Message.ToolCalls)
	}
	if acc.Usage.PromptTokens != 50 || acc.Usage.CompletionTokens != 20 || comp.Usage.PromptTokens != 50 {
		t.Errorf("usage: stream %s, non-stream %s", acc.Usage.RawJSON(), comp.Usage.RawJSON())
	}

	// A route forcing api: claude sends a name the rules would call Gemini to Anthropic's
	// publisher.
	h.fake.Enqueue(vertexfake.Reply{Claude: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("forced")}}})
	if c, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/tuned", "hi")); err != nil || c.Choices[0].Message.Content != "forced" {
		t.Fatalf("%v %v", c, err)
	}
	if r := h.fake.Last().Resource; !strings.HasSuffix(r, "/publishers/anthropic/models/my-claude-build") {
		t.Errorf("forced route resource %s", r)
	}
}

// TestClaudeErrorShapes: Claude failures arrive as gRPC statuses whose message is either
// Anthropic's error body or Google's; both are read, an overloaded_error is busy (failover,
// logged as overloaded) and a Google quota error is rate_limited.
func TestClaudeErrorShapes(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(
		vertexfake.Reply{Err: vertexfake.Status(codes.Unavailable, anthropicfake.ErrorBody("overloaded_error", "Overloaded"))},
		vertexfake.Reply{Err: vertexfake.Status(codes.ResourceExhausted, vertexfake.GoogleErrorBody(429, "RESOURCE_EXHAUSTED", "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model"))},
	)
	for _, body := range []string{"overloaded", "quota"} {
		r := h.srv.Chat(t, `{"model":"gw/claude-backup","stream":true,"messages":[{"role":"user","content":"`+body+`"}]}`)
		out := string(r.Body)
		if r.Status != 200 || !strings.Contains(out, `"content":"`+body+`"`) || !strings.HasSuffix(out, "data: [DONE]\n\n") {
			t.Errorf("%s: %d %s", body, r.Status, out)
		}
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 4 {
		t.Fatalf("%d attempts", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"outcome": "failover", "error_class": "overloaded", "error_code": "overloaded_error", "status": 503.0})
	gatewaytest.CheckAttempt(t, a[2], map[string]any{"outcome": "failover", "error_class": "rate_limited", "error_code": "RESOURCE_EXHAUSTED", "status": 429.0})
}

// TestMaaS: a partner model goes to the OpenAI-compatible endpoint of the connection's
// project and location, named in the body, streamed and not.
func TestMaaS(t *testing.T) {
	h := newHarness(t)
	h.openapi.Fake.Enqueue(
		openaifake.Reply{Text: "Llama says hi", PromptTokens: 9, CompletionTokens: 3},
		openaifake.Reply{Text: "Llama streams hi", PromptTokens: 9, CompletionTokens: 3,
			ToolCalls: []openaifake.ToolCall{{ID: "call_llama_1", Name: "get_weather", Arguments: `{"city":"Rome"}`}}},
	)
	params := oai.ChatCompletionNewParams{Model: "gw/llama", MaxCompletionTokens: oai.Int(64), Messages: []oai.ChatCompletionMessageParamUnion{
		oai.DeveloperMessage("Be brief."), oai.UserMessage("hi")}}
	comp, err := h.client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if comp.Choices[0].Message.Content != "Llama says hi" || comp.Usage.TotalTokens != 12 {
		t.Errorf("completion %s", comp.RawJSON())
	}
	seen := h.openapi.Seen()
	if len(seen) != 1 || seen[0].Path != "/v1/projects/fngate-test/locations/europe-west4/endpoints/openapi/chat/completions" || seen[0].Authorization != "" {
		t.Errorf("seen %+v", seen)
	}
	body := h.openapi.Fake.Requests()[0].Body
	if body["model"] != "meta/llama-3.3-70b-instruct-maas" || body["max_tokens"] != 64.0 || body["messages"].([]any)[0].(map[string]any)["role"] != "system" {
		t.Errorf("body %v", body)
	}

	params.Tools = weatherTools
	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	acc, _ := gatewaytest.Accumulate(t, h.client.Chat.Completions.NewStreaming(context.Background(), params))
	if acc.Choices[0].Message.Content != "Llama streams hi" || len(acc.Choices[0].Message.ToolCalls) != 1 ||
		acc.Choices[0].Message.ToolCalls[0].ID != "call_llama_1" || acc.Choices[0].FinishReason != "tool_calls" || acc.Usage.TotalTokens != 12 {
		t.Errorf("stream %+v usage %s", acc.Choices[0], acc.Usage.RawJSON())
	}

	named := gatewaytest.UserOnly("gw/llama", "hi")
	named.Tools = weatherTools
	named.ToolChoice = oai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &oai.ChatCompletionNamedToolChoiceParam{
		Function: oai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"}}}
	_, err = h.client.Chat.Completions.New(context.Background(), named)
	if e := gatewaytest.APIError(t, err); e.StatusCode != 400 || e.Param != "tool_choice" {
		t.Errorf("named tool_choice: %d %q %s", e.StatusCode, e.Param, e.Message)
	}
	if n := len(h.openapi.Seen()); n != 2 {
		t.Errorf("%d requests reached the endpoint, want 2", n)
	}
}

// TestCompletionsEndpoint: the legacy endpoint on a claude or maas route is MLflow's 501,
// exactly, which the SDK does not retry; on a gemini route the prompt is served as one user
// turn, streamed and not.
func TestCompletionsEndpoint(t *testing.T) {
	h := newHarness(t)
	retrying := h.srv.OpenAI(option.WithMaxRetries(2))
	for _, model := range []string{"gw/claude", "gw/llama"} {
		_, err := retrying.Completions.New(context.Background(), oai.CompletionNewParams{Model: oai.CompletionNewParamsModel(model),
			Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("Once upon a time")}, MaxTokens: oai.Int(10)})
		e := gatewaytest.APIError(t, err)
		want := "The completions endpoint is not supported for " + model + " on Vertex AI. Use the chat endpoint instead."
		if e.StatusCode != 501 || e.Message != want || e.Code != "unsupported_endpoint" || e.Response.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s: %d %q code %q x-should-retry %q", model, e.StatusCode, e.Message, e.Code, e.Response.Header.Get("X-Should-Retry"))
		}
	}
	requests := 0
	for _, l := range h.logs.AfterRequests(t, 2) {
		if l["msg"] == record.MsgRequest {
			requests++
		}
	}
	if requests != 2 || len(h.fake.Requests()) != 0 || len(h.openapi.Seen()) != 0 {
		t.Errorf("%d gateway requests (the SDK retried?), %d reached Vertex AI", requests, len(h.fake.Requests())+len(h.openapi.Seen()))
	}

	answer := &vertexfake.Answer{Text: "there was a fox.", Usage: vertexfake.Usage{Prompt: 4, Candidates: 5}}
	h.fake.Enqueue(vertexfake.Reply{Gemini: answer}, vertexfake.Reply{Gemini: answer})
	comp, err := h.client.Completions.New(context.Background(), oai.CompletionNewParams{Model: "gw/gemini",
		Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("Once upon a time")}, MaxTokens: oai.Int(10)})
	if err != nil {
		t.Fatal(err)
	}
	if comp.Choices[0].Text != "there was a fox." || comp.Usage.TotalTokens != 9 {
		t.Errorf("completion %s", comp.RawJSON())
	}
	g := h.fake.Last().Generate
	if c := g.GetContents(); len(c) != 1 || c[0].GetRole() != "user" || c[0].GetParts()[0].GetText() != "Once upon a time" || g.GetGenerationConfig().GetMaxOutputTokens() != 10 {
		t.Errorf("request %v", g)
	}
	stream := h.client.Completions.NewStreaming(context.Background(), oai.CompletionNewParams{Model: "gw/gemini",
		Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("Once upon a time")}})
	var text strings.Builder
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Text)
		}
	}
	if stream.Err() != nil || text.String() != "there was a fox." {
		t.Errorf("streamed %q: %v", text.String(), stream.Err())
	}
}

// TestFailoverFromResourceExhausted: RESOURCE_EXHAUSTED before any output moves to the next
// route, for a JSON answer and for a stream (where the status only shows on the first
// receive), after exactly one call each (the SDK does not retry), and the attempt log names
// the failure as rate_limited with Google's status.
func TestFailoverFromResourceExhausted(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(vertexfake.Reply{Err: vertexfake.Exhausted(7 * time.Second)}, vertexfake.Reply{Err: vertexfake.Exhausted(7 * time.Second)})
	var raw *http.Response
	comp, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/gemini-backup", "served by the backup"), option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if comp.Choices[0].Message.Content != "served by the backup" || raw.Header.Get(gateway.HeaderRoute) != "backup/echo" || raw.Header.Get(gateway.HeaderAttempts) != "2" {
		t.Errorf("answer %q via %s after %s attempts", comp.Choices[0].Message.Content, raw.Header.Get(gateway.HeaderRoute), raw.Header.Get(gateway.HeaderAttempts))
	}
	r := h.srv.Chat(t, `{"model":"gw/gemini-backup","stream":true,"messages":[{"role":"user","content":"streamed backup"}]}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, `"content":"streamed"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("stream after failover: %s", body)
	}
	reqs := h.fake.Requests()
	if len(reqs) != 2 || reqs[0].Method != "GenerateContent" || reqs[1].Method != "StreamGenerateContent" {
		t.Errorf("Vertex AI saw %d calls, want one per attempt", len(reqs))
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 4 {
		t.Fatalf("%d attempt lines, want 4", len(a))
	}
	for _, i := range []int{0, 2} {
		gatewaytest.CheckAttempt(t, a[i], map[string]any{"msg": "provider_error", "outcome": "failover", "provider": "vertex", "attempt": 1.0,
			"status": 429.0, "error_class": "rate_limited", "error_code": "RESOURCE_EXHAUSTED", "route": "vertex/gemini-2.5-flash", "connection": "vertex"})
		gatewaytest.CheckAttempt(t, a[i+1], map[string]any{"msg": "attempt", "outcome": "ok", "provider": "mock", "attempt": 2.0})
	}
}

// TestStatusMapping: with no other route, each Google status reaches the client as the
// status the table gives and is logged with its class; only INVALID_ARGUMENT is the client's
// 400, and quota errors keep Vertex AI's retry delay.
func TestStatusMapping(t *testing.T) {
	h := newHarness(t)
	for i, tt := range []struct {
		err    error
		status int
		class  string
		logged float64
	}{
		{vertexfake.Exhausted(7 * time.Second), 429, "rate_limited", 429},
		{vertexfake.Status(codes.Unavailable, "The service is currently unavailable."), 503, "unavailable", 503},
		{vertexfake.Status(codes.DeadlineExceeded, "Deadline exceeded"), 504, "timeout", 504},
		{vertexfake.Status(codes.PermissionDenied, "Permission 'aiplatform.endpoints.predict' denied"), 502, "auth", 403},
		{vertexfake.Status(codes.Unauthenticated, "Request had invalid authentication credentials"), 502, "auth", 401},
		{vertexfake.Status(codes.NotFound, "Publisher Model gemini-9 was not found"), 502, "not_found", 404},
		{vertexfake.Status(codes.InvalidArgument, "Request contains an invalid argument."), 400, "bad_request", 400},
		{vertexfake.Status(codes.FailedPrecondition, "User has requested a restricted HarmBlockThreshold setting"), 400, "bad_request", 400},
		{vertexfake.Status(codes.Internal, "Internal error encountered."), 502, "unavailable", 500},
	} {
		h.fake.Enqueue(vertexfake.Reply{Err: tt.err})
		_, err := h.client.Chat.Completions.New(context.Background(), gatewaytest.UserOnly("gw/gemini", "hi"))
		e := gatewaytest.APIError(t, err)
		if e.StatusCode != tt.status {
			t.Errorf("%v: client status %d, want %d", tt.err, e.StatusCode, tt.status)
		}
		if tt.status == 429 && e.Response.Header.Get("Retry-After") != "7" {
			t.Errorf("Retry-After %q", e.Response.Header.Get("Retry-After"))
		}
		a := h.logs.Attempts(t, i+1)
		gatewaytest.CheckAttempt(t, a[i], map[string]any{"error_class": tt.class, "status": tt.logged})
	}
}

// TestErrorMidStream: once content went out, a failure status ends the stream with an error
// event and no [DONE], for Gemini and for Claude (whose chunks are cut mid-event), and there
// is no failover.
func TestErrorMidStream(t *testing.T) {
	h := newHarness(t)
	// Claude's failure comes with the first HttpBody chunk after the first text event.
	sse := []byte(anthropicfake.SSE(claudeAnswer.Events("claude-sonnet-4-5@20250929")))
	end := bytes.Index(sse, []byte(`"text_delta"`))
	end += bytes.Index(sse[end:], []byte("\n\n")) + 2
	after := 0
	for n := 0; n < end; after++ {
		n += len(vertexfake.Awkward(sse)[after])
	}
	h.fake.Enqueue(
		vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "one two three four five six"}, After: 2, Err: vertexfake.Status(codes.Unavailable, "connection reset")},
		vertexfake.Reply{Claude: claudeAnswer, After: after, Err: vertexfake.Status(codes.Internal, "stream aborted")},
	)
	for _, tt := range []struct{ model, content, code string }{
		{"gw/gemini-backup", `"content":"one two "`, `"code":"upstream_unavailable"`},
		{"gw/claude-backup", `"content":"Grüße `, `"code":"upstream_error"`},
	} {
		r := h.srv.Chat(t, `{"model":"`+tt.model+`","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		body := string(r.Body)
		if r.Status != 200 || !strings.Contains(body, tt.content) || strings.Contains(body, "[DONE]") || !strings.Contains(body, tt.code) {
			t.Errorf("%s:\n%s", tt.model, body)
		}
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 2 {
		t.Fatalf("%d attempts, want one per request (no failover after output)", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"msg": "provider_error", "outcome": "error", "error_class": "unavailable", "error_code": "UNAVAILABLE"})
	if u, ok := a[0]["usage"]; ok {
		t.Errorf("the early, empty usageMetadata was reported as usage: %v", u)
	}
	gatewaytest.CheckAttempt(t, a[1], map[string]any{"msg": "provider_error", "outcome": "error", "error_class": "unavailable", "error_code": "INTERNAL"})
}

// TestGatewayTimeouts: the gateway's own first-byte and idle timers cancel the call; the
// attempt is logged as a timeout (the cancellation's cause, not the Canceled status the
// interrupted call reports), before output with a failover, after it with an error event.
func TestGatewayTimeouts(t *testing.T) {
	h := newHarness(t)
	h.fake.Enqueue(
		vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "too late"}, StallAt: 0, StallFor: time.Second},
		vertexfake.Reply{Gemini: &vertexfake.Answer{Text: "one two three four five six"}, StallAt: 2, StallFor: time.Second},
	)
	r := h.srv.Chat(t, `{"model":"gw/gemini-slow","stream":true,"messages":[{"role":"user","content":"from the backup"}]}`)
	body := string(r.Body)
	if r.Status != 200 || !strings.Contains(body, "backup") || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("first-byte timeout: %s", body)
	}
	body = string(h.srv.Chat(t, `{"model":"gw/gemini-slow","stream":true,"messages":[{"role":"user","content":"hi"}]}`).Body)
	if !strings.Contains(body, `"content":"one two "`) || strings.Contains(body, "[DONE]") || !strings.Contains(body, `"code":"upstream_timeout"`) {
		t.Errorf("idle timeout:\n%s", body)
	}
	a := h.logs.Attempts(t, 2)
	if len(a) != 3 {
		t.Fatalf("%d attempts", len(a))
	}
	gatewaytest.CheckAttempt(t, a[0], map[string]any{"outcome": "failover", "error_class": "timeout"})
	gatewaytest.CheckAttempt(t, a[1], map[string]any{"outcome": "ok", "provider": "mock"})
	gatewaytest.CheckAttempt(t, a[2], map[string]any{"outcome": "error", "error_class": "timeout"})
}

// TestRefusedBeforeAnyCall: what a Vertex AI route cannot serve is a typed 400 naming the
// param, and Vertex AI never sees the request.
func TestRefusedBeforeAnyCall(t *testing.T) {
	h := newHarness(t)
	strict := gatewaytest.UserOnly("gw/gemini", "hi")
	strict.Tools = []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "f", Strict: oai.Bool(true), Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{}, "additionalProperties": false}})}
	digit := gatewaytest.UserOnly("gw/gemini", "hi")
	digit.Tools = []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "2fa"})}
	late := oai.ChatCompletionNewParams{Model: "gw/gemini", Messages: []oai.ChatCompletionMessageParamUnion{
		oai.UserMessage("hi"), oai.AssistantMessage("hello"), oai.SystemMessage("From now on, be rude.")}}
	hot := gatewaytest.UserOnly("gw/claude", "hi")
	hot.Temperature = oai.Float(1.5)
	for _, tt := range []struct {
		name   string
		params oai.ChatCompletionNewParams
		param  string
	}{
		{"strict tool", strict, "tools[0].function.strict"},
		{"function name Gemini refuses", digit, "tools[0].function.name"},
		{"late system message", late, "messages"},
		{"claude temperature", hot, "temperature"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.client.Chat.Completions.New(context.Background(), tt.params)
			e := gatewaytest.APIError(t, err)
			if e.StatusCode != 400 || e.Param != tt.param || e.Type != "invalid_request_error" {
				t.Errorf("status %d type %q param %q: %s", e.StatusCode, e.Type, e.Param, e.Message)
			}
		})
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("Vertex AI received %d requests", n)
	}
}

// TestMaaSBaseURLQueryIsKept: the OpenAI-compatible endpoint's path joins the path of
// base_url, whose query stays the query.
func TestMaaSBaseURLQueryIsKept(t *testing.T) {
	openapi := vertexfake.NewOpenAPI()
	t.Cleanup(openapi.Close)
	p, err := vertex.New(&config.Connection{Kind: vertex.Kind, Project: vertexfake.Project, Location: vertexfake.Location,
		Endpoint: "127.0.0.1:1", Insecure: true, BaseURL: openapi.URL + "/?alt=json"}, providers.Env{})
	if err != nil {
		t.Fatal(err)
	}
	req, oe := openai.DecodeChatRequest([]byte(`{"model":"gw/llama","messages":[{"role":"user","content":"hi"}]}`), llm.Limits{})
	if oe != nil {
		t.Fatal(oe)
	}
	if _, err := p.Generate(context.Background(), req, providers.Target{Model: "meta/llama-3.3-70b-instruct-maas"}); err != nil {
		t.Fatal(err)
	}
	seen := openapi.Seen()
	if len(seen) != 1 || seen[0].Path != "/v1/projects/"+vertexfake.Project+"/locations/"+vertexfake.Location+"/endpoints/openapi/chat/completions" || seen[0].Query != "alt=json" {
		t.Errorf("seen %+v", seen)
	}
}

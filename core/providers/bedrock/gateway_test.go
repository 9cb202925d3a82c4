package bedrock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/bedrock"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

type harness struct {
	fake   *bedrockfake.Server
	srv    *gatewaytest.Server
	logs   *gatewaytest.LogBuffer
	client oai.Client
}

// newHarness serves the real gateway over the fake Bedrock runtime, with static credentials
// from the environment (as the default chain finds them) and a mock backup route. nova is a
// Converse model; claude and claude-backup are Claude models, on InvokeModel; claude-stalls
// and nova-stalls give up on a route after a first_byte of 300ms.
func newHarness(t *testing.T) *harness {
	t.Helper()
	awstest.Isolate(t, "AKIDGATEWAY")
	f := bedrockfake.Start()
	t.Cleanup(f.Close)
	f.AccessKeyID = "AKIDGATEWAY"
	srv, logs := gatewaytest.ServeLogged(t, fmt.Sprintf(`
connections:
  aws:
    kind: bedrock
    region: us-west-2
    endpoint: %s
  backup:
    kind: mock
models:
  nova:
    routes:
      - {connection: aws, model: amazon.nova-test-v1:0}
  claude:
    price: {input_per_mtok: 3.0, output_per_mtok: 15.0, cached_input_per_mtok: 0.3, cache_write_per_mtok: 3.75}
    routes:
      - {connection: aws, model: us.anthropic.claude-sonnet-4-5-20250929-v1:0}
  claude-codex:
    price: {input_per_mtok: 3.0, output_per_mtok: 15.0}
    max_output_tokens: 4096
    routes:
      - {connection: aws, model: us.anthropic.claude-sonnet-4-5-20250929-v1:0}
  claude-backup:
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: aws, model: us.anthropic.claude-busy-v1:0, residency: us}
      - {connection: backup, model: echo, residency: us}
  flaky:
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: aws, model: throttled-model, residency: us}
      - {connection: backup, model: echo, residency: us}
  claude-stalls:
    timeouts: {first_byte: 300ms, total: 30s}
    routes:
      - {connection: aws, model: us.anthropic.claude-stall-v1:0}
      - {connection: backup, model: echo}
  nova-stalls:
    timeouts: {first_byte: 300ms, total: 30s}
    routes:
      - {connection: aws, model: amazon.nova-stall-v1:0}
      - {connection: backup, model: echo}
`, f.URL), registerBedrock, mock.Register)
	return &harness{fake: f, srv: srv, logs: logs, client: srv.OpenAI()}
}

// registerBedrock registers the provider over the SDK's full chain, as the local server does.
func registerBedrock(reg providers.Registry) { bedrock.Register(reg, sdkconfig.Load) }

var weatherTools = []oai.ChatCompletionToolUnionParam{
	oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Description: oai.String("Weather for a city"),
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}),
	oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"tz": map[string]any{"type": "string"}}}}),
}

func TestGatewayChat(t *testing.T) {
	h := newHarness(t)
	h.fake.Script("amazon.nova-test-v1:0", bedrockfake.Answer{
		Blocks: []bedrockfake.Block{{Text: "Bonjour !"}},
		Usage:  &bedrockfake.Usage{InputTokens: ptr(10), OutputTokens: ptr(3), TotalTokens: ptr(113), CacheReadInputTokens: ptr(100)},
	})
	var resp *http.Response
	c, err := h.client.Chat.Completions.New(context.Background(), oai.ChatCompletionNewParams{
		Model:    "nova",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage("Answer in French."), oai.UserMessage("Hello")},
	}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != "Bonjour !" || c.Choices[0].FinishReason != "stop" || c.Model != "nova" {
		t.Errorf("content %q finish %q model %q", got, c.Choices[0].FinishReason, c.Model)
	}
	if u := c.Usage; u.PromptTokens != 110 || u.CompletionTokens != 3 || u.TotalTokens != 113 || u.PromptTokensDetails.CachedTokens != 100 {
		t.Errorf("usage %+v", u)
	}
	if got := resp.Header.Get(gateway.HeaderRoute); got != "aws/amazon.nova-test-v1:0" {
		t.Errorf("route header %q", got)
	}
	if got := h.fake.Last(); got.ModelID != "amazon.nova-test-v1:0" || got.Stream || !strings.Contains(string(got.Body), `"system":[{"text":"Answer in French."}]`) {
		t.Errorf("Bedrock got model %q stream %v body %s", got.ModelID, got.Stream, got.Body)
	}
}

func TestGatewayStreamWithUsage(t *testing.T) {
	h := newHarness(t)
	h.fake.Script("amazon.nova-test-v1:0", bedrockfake.Answer{
		Blocks: []bedrockfake.Block{{Text: "The quick brown fox jumps over the lazy dog."}},
		Chunk:  5,
		Usage:  bedrockfake.Tokens(9, 11),
	})
	st := h.client.Chat.Completions.NewStreaming(context.Background(), oai.ChatCompletionNewParams{
		Model:         "nova",
		Messages:      []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Say the pangram")},
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	})
	acc := oai.ChatCompletionAccumulator{}
	chunks := 0
	for st.Next() {
		acc.AddChunk(st.Current())
		chunks++
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "The quick brown fox jumps over the lazy dog." {
		t.Errorf("content %q", got)
	}
	if acc.Choices[0].FinishReason != "stop" || acc.Usage.PromptTokens != 9 || acc.Usage.CompletionTokens != 11 || acc.Usage.TotalTokens != 20 {
		t.Errorf("finish %q usage %+v", acc.Choices[0].FinishReason, acc.Usage)
	}
	if chunks < 10 {
		t.Errorf("%d chunks: the text was not streamed piece by piece", chunks)
	}

	// On the wire: the usage chunk (empty choices) comes after the finish chunk, then [DONE].
	r := h.srv.Chat(t, `{"model":"nova","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"again"}]}`)
	data := gatewaytest.SSEData(t, r.Body)
	if r.Header.Get("Content-Type") != "text/event-stream" || len(data) < 3 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]:\n%s", r.Body)
	}
	if u := data[len(data)-2]; !strings.Contains(u, `"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":11,"total_tokens":20}`) {
		t.Errorf("no usage chunk before [DONE]: %s", u)
	}
	if f := data[len(data)-3]; !strings.Contains(f, `"finish_reason":"stop"`) {
		t.Errorf("no finish chunk before the usage chunk: %s", f)
	}
}

// TestGatewayStreamedToolCalls plays one answer with two parallel tool calls, their
// arguments cut into two-byte fragments, once as JSON and once streamed, through the official
// SDK: the accumulated calls must be complete JSON (no lost closing brace), keep their own
// indexes, and equal the non-streamed calls.
func TestGatewayStreamedToolCalls(t *testing.T) {
	h := newHarness(t)
	h.fake.Script("amazon.nova-test-v1:0", bedrockfake.Answer{
		// Bedrock numbers content blocks with the text first; OpenAI numbers tool calls alone.
		Blocks: []bedrockfake.Block{
			{Text: "Let me check."},
			{ToolUse: &bedrockfake.ToolUse{ID: "tooluse_w1", Name: "get_weather", Input: `{"city":"Paris, \"FR\"","opts":{"units":["c","k"]}}`}},
			{ToolUse: &bedrockfake.ToolUse{ID: "tooluse_t2", Name: "get_time", Input: `{"tz":"Europe/Paris"}`}},
		},
		Chunk: 2,
		Usage: bedrockfake.Tokens(30, 12),
	})
	params := oai.ChatCompletionNewParams{
		Model:    "nova",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Weather and time in Paris?")},
		Tools:    weatherTools,
	}
	plain, err := h.client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	st := h.client.Chat.Completions.NewStreaming(context.Background(), params)
	acc := oai.ChatCompletionAccumulator{}
	var finished []oai.FinishedChatCompletionToolCall
	for st.Next() {
		acc.AddChunk(st.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	streamed := acc.Choices[0].Message.ToolCalls
	want := plain.Choices[0].Message.ToolCalls
	if len(streamed) != 2 || len(want) != 2 {
		t.Fatalf("streamed %d tool calls, plain %d, want 2 each", len(streamed), len(want))
	}
	for i := range want {
		s, w := streamed[i], want[i]
		if s.ID != w.ID || s.Function.Name != w.Function.Name {
			t.Errorf("call %d: streamed %s %s, plain %s %s", i, s.ID, s.Function.Name, w.ID, w.Function.Name)
		}
		var sv, wv any
		if err := json.Unmarshal([]byte(s.Function.Arguments), &sv); err != nil {
			t.Errorf("call %d: streamed arguments are not complete JSON: %v: %s", i, err, s.Function.Arguments)
		}
		if err := json.Unmarshal([]byte(w.Function.Arguments), &wv); err != nil {
			t.Errorf("call %d: plain arguments are not JSON: %v", i, err)
		}
		if sj, wj := mustJSON(sv), mustJSON(wv); sj != wj {
			t.Errorf("call %d: streamed arguments %s, plain %s", i, sj, wj)
		}
	}
	if acc.Choices[0].Message.Content != "Let me check." || plain.Choices[0].Message.Content != "Let me check." {
		t.Errorf("content: streamed %q, plain %q", acc.Choices[0].Message.Content, plain.Choices[0].Message.Content)
	}
	if streamed[0].ID != "tooluse_w1" || streamed[1].ID != "tooluse_t2" {
		t.Errorf("calls out of order: %s, %s", streamed[0].ID, streamed[1].ID)
	}
	if len(finished) != 2 || finished[0].Index != 0 || finished[1].Index != 1 {
		t.Errorf("finished calls %+v, want indexes 0 and 1", finished)
	}
	if acc.Choices[0].FinishReason != "tool_calls" || plain.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish reasons %q / %q", acc.Choices[0].FinishReason, plain.Choices[0].FinishReason)
	}

	// The raw chunks: each call is named once, under its own index.
	body := string(h.srv.Chat(t, `{"model":"nova","stream":true,"tools":[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"get_time"}}],"messages":[{"role":"user","content":"again"}]}`).Body)
	for i, id := range []string{"tooluse_w1", "tooluse_t2"} {
		if n := strings.Count(body, `{"index":`+fmt.Sprint(i)+`,"id":"`+id+`"`); n != 1 {
			t.Errorf("call %s opened %d times at index %d:\n%s", id, n, i, body)
		}
	}
}

// TestGatewayFailsOverOnRouteErrors: a route Bedrock throttles, or whose model Bedrock does
// not know, fails over to the backup before any output, on Converse and on InvokeModel, and
// the logged class is the one self-repair acts on (not_found disables the route).
func TestGatewayFailsOverOnRouteErrors(t *testing.T) {
	throttled := bedrockfake.Exception{Type: "ThrottlingException", Message: "Too many requests"}
	// Bedrock's answer to an unknown model id (recorded from the live API): a 400
	// ValidationException, which is not the client's fault.
	unknown := bedrockfake.Exception{Type: "ValidationException", Message: "The provided model identifier is invalid.", Status: 400}
	for _, tc := range []struct {
		name   string
		stream bool
		answer bedrockfake.Answer
		class  string
		status float64
		code   string
	}{
		{"http 429", false, bedrockfake.Answer{Error: &throttled}, "rate_limited", 429, "ThrottlingException"},
		{"http 429 stream", true, bedrockfake.Answer{Error: &throttled}, "rate_limited", 429, "ThrottlingException"},
		{"in-stream before content", true, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "never"}}, FailAfter: 1,
			StreamError: &throttled}, "rate_limited", 429, "ThrottlingException"},
		{"unknown model", false, bedrockfake.Answer{Error: &unknown}, "not_found", 400, "ValidationException"},
		{"unknown model stream", true, bedrockfake.Answer{Error: &unknown}, "not_found", 400, "ValidationException"},
	} {
		for _, rt := range []struct{ api, model, upstream string }{{"converse", "flaky", "throttled-model"}, {"invoke", "claude-backup", "us.anthropic.claude-busy-v1:0"}} {
			t.Run(tc.name+"/"+rt.api, func(t *testing.T) {
				h := newHarness(t)
				h.fake.Script(rt.upstream, tc.answer)
				body := `{"model":"` + rt.model + `","messages":[{"role":"user","content":"echo me back"}]}`
				if tc.stream {
					body = `{"model":"` + rt.model + `","stream":true,"messages":[{"role":"user","content":"echo me back"}]}`
				}
				r := h.srv.Chat(t, body)
				out := string(r.Body)
				if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != "backup/echo" || r.Header.Get(gateway.HeaderAttempts) != "2" {
					t.Fatalf("status %d route %q attempts %q:\n%s", r.Status, r.Header.Get(gateway.HeaderRoute), r.Header.Get(gateway.HeaderAttempts), out)
				}
				if tc.stream {
					data := gatewaytest.SSEData(t, out)
					if data[len(data)-1] != "[DONE]" || strings.Contains(out, "never") {
						t.Errorf("the backup's stream is not clean:\n%s", out)
					}
				} else if !strings.Contains(out, `"content":"echo me back"`) {
					t.Errorf("the backup did not answer: %s", out)
				}
				if n := len(h.fake.Requests()); n != 1 {
					t.Errorf("Bedrock got %d requests: the SDK retried", n)
				}
				failed := h.logs.WaitLines(t, record.MsgProviderError, 1)
				ok := h.logs.WaitLines(t, record.MsgAttempt, 1)
				if len(failed) != 1 || len(ok) != 1 {
					t.Fatalf("attempt lines: %d failed, %d ok", len(failed), len(ok))
				}
				want := map[string]any{"provider": "bedrock", "connection": "aws", "route": "aws/" + rt.upstream, "upstream_model": rt.upstream,
					"attempt": 1.0, "outcome": "failover", "error_class": tc.class, "status": tc.status, "error_code": tc.code, "level": "ERROR"}
				gatewaytest.CheckAttempt(t, failed[0], want)
				if ok[0]["route"] != "backup/echo" || ok[0]["outcome"] != "ok" || ok[0]["attempt"] != 2.0 {
					t.Errorf("second attempt line %v", ok[0])
				}
			})
		}
	}
}

func TestGatewayBrokenStreams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer bedrockfake.Answer
		class  string
		code   string
	}{
		{"exception mid-stream", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "Half an answer, then"}}, Chunk: 5, FailAfter: 3,
			StreamError: &bedrockfake.Exception{Type: "ModelStreamErrorException", Message: "The model failed"}}, "unavailable", "ModelStreamErrorException"},
		{"connection cut", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "Half an answer, then"}}, Chunk: 5, Cut: true, CutAfter: 3}, "stream_broken", ""},
		{"clean end without messageStop", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "Half an answer, then"}}, Chunk: 5, EndAfter: 3}, "stream_broken", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.fake.Script("amazon.nova-test-v1:0", tc.answer)
			r := h.srv.Chat(t, `{"model":"nova","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
			body := string(r.Body)
			data := gatewaytest.SSEData(t, body)
			if r.Status != 200 || len(data) < 2 {
				t.Fatalf("status %d:\n%s", r.Status, body)
			}
			if !strings.Contains(data[0], `"content":"Half "`) {
				t.Errorf("first chunk %s", data[0])
			}
			last := data[len(data)-1]
			if !strings.HasPrefix(last, `{"error":{`) || strings.Contains(body, "[DONE]") {
				t.Errorf("the stream must end with an error event and no [DONE]:\n%s", body)
			}
			// The official SDK reports the broken stream as an error.
			st := h.client.Chat.Completions.NewStreaming(context.Background(), oai.ChatCompletionNewParams{
				Model: "nova", Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}})
			for st.Next() {
			}
			if err := st.Err(); err == nil {
				t.Error("the SDK took a broken stream for a finished one")
			} else if !strings.Contains(err.Error(), "Amazon Bedrock") {
				t.Errorf("the SDK did not surface the error event naming the provider: %v", err)
			}
			lines := h.logs.WaitLines(t, record.MsgProviderError, 2)
			if len(lines) < 1 || lines[0]["error_class"] != tc.class || lines[0]["outcome"] != "error" || tc.code != "" && lines[0]["error_code"] != tc.code {
				t.Errorf("attempt log %v, want class %s code %q outcome error", lines, tc.class, tc.code)
			}
		})
	}
}

func TestGatewayCompletionsNotSupported(t *testing.T) {
	h := newHarness(t)
	r := h.srv.Do(t, http.MethodPost, "/v1/completions", `{"model":"nova","prompt":"Once upon a time","max_tokens":5}`)
	var e struct {
		Error struct {
			Message, Type, Code string
			Param               *string
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	want := "The completions endpoint is not supported for nova on Amazon Bedrock. Use the chat endpoint instead."
	if r.Status != 501 || r.Header.Get("X-Should-Retry") != "false" || e.Error.Message != want || e.Error.Code != "unsupported_endpoint" || e.Error.Type != "invalid_request_error" {
		t.Errorf("status %d x-should-retry %q body %s", r.Status, r.Header.Get("X-Should-Retry"), r.Body)
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("Bedrock got %d requests", n)
	}
}

func TestGatewayRefusesBeforeCalling(t *testing.T) {
	h := newHarness(t)
	r := h.srv.Chat(t, `{"model":"nova","temperature":1.5,"messages":[{"role":"user","content":"hi"}]}`)
	if body := string(r.Body); r.Status != 400 || !strings.Contains(body, `"param":"temperature"`) || !strings.Contains(body, "Amazon Bedrock") {
		t.Errorf("status %d: %s", r.Status, body)
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Errorf("Bedrock got %d requests", n)
	}
}

func ptr(n int) *int { return &n }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestNonStreamFirstByteFailsOver: a Bedrock route that sends no response headers within
// first_byte is given up then, not after total, on InvokeModel (Claude) and Converse alike
// and on every door's non-stream request: the next route answers, the attempt is logged as
// a first-byte timeout, and the stalled call is cancelled.
func TestNonStreamFirstByteFailsOver(t *testing.T) {
	doors := []struct {
		door, path, body string
		header           []string
	}{
		{"chat", "/v1/chat/completions", `{"model":"MODEL","messages":[{"role":"user","content":"hi"}]}`, nil},
		{"messages", "/v1/messages", `{"model":"MODEL","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, []string{"Anthropic-Version", "2023-06-01"}},
		{"responses", "/v1/responses", `{"model":"MODEL","input":"hi"}`, nil},
	}
	apis := []struct {
		model, upstream, op string
	}{
		{"claude-stalls", "us.anthropic.claude-stall-v1:0", bedrockfake.OpInvoke},
		{"nova-stalls", "amazon.nova-stall-v1:0", bedrockfake.OpConverse},
	}
	for _, api := range apis {
		for _, d := range doors {
			t.Run(api.op+" "+d.door, func(t *testing.T) {
				h := newHarness(t)
				h.fake.Script(api.upstream, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "too late"}}, StallBeforeHeaders: time.Minute})
				r := h.srv.Do(t, http.MethodPost, d.path, strings.Replace(d.body, "MODEL", api.model, 1), d.header...)
				if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != "backup/echo" || r.Header.Get(gateway.HeaderAttempts) != "2" {
					t.Fatalf("%d via %q after %s attempts: %s", r.Status, r.Header.Get(gateway.HeaderRoute), r.Header.Get(gateway.HeaderAttempts), r.Body)
				}
				if reqs := h.fake.Requests(); len(reqs) != 1 || reqs[0].Op != api.op {
					t.Errorf("Bedrock was asked %+v, want one %s", reqs, api.op)
				}
				a := h.logs.Attempts(t, 1)
				if len(a) != 2 {
					t.Fatalf("%d attempt lines, want 2", len(a))
				}
				gatewaytest.CheckAttempt(t, a[0], map[string]any{"msg": "provider_error", "outcome": "failover", "error_class": "timeout",
					"error_message": providers.ErrFirstByteTimeout.Message, "route": "aws/" + api.upstream, "endpoint": d.door})
				gatewaytest.WaitFor(t, func() bool { return h.fake.Canceled() == 1 }, "the stalled Bedrock call was not cancelled")
			})
		}
	}
}

package openaicompat_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// One model on OpenAI itself (the native Responses API) and one on vLLM (translated to Chat
// Completions), both on the fake.
const responsesGatewayConfig = `
connections:
  openai: {kind: openai, api_key: sk-test-0123456789, base_url: FAKE}
  vllm: {kind: vllm, base_url: FAKE}
models:
  gw/native: {routes: [{connection: openai, model: gpt-upstream}]}
  gw/vllm: {routes: [{connection: vllm, model: qwen-upstream}]}
`

type responsesHarness struct {
	fake   *openaifake.Server
	srv    *gatewaytest.Server
	client oai.Client
}

func newResponsesHarness(t *testing.T, store responsestore.Store) *responsesHarness {
	t.Helper()
	fake := openaifake.New()
	t.Cleanup(fake.Close)
	cfg := gatewaytest.Config(t, strings.ReplaceAll(responsesGatewayConfig, "FAKE", fake.BaseURL()), config.Options{})
	reg := providers.Registry{}
	openaicompat.Register(reg)
	logs := &gatewaytest.LogBuffer{}
	srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: logs.Logger(), ResponseStore: store})
	return &responsesHarness{fake: fake, srv: srv, client: srv.OpenAI()}
}

func (h *responsesHarness) last(t *testing.T) openaifake.Request {
	t.Helper()
	reqs := h.fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("the fake received nothing")
	}
	return reqs[len(reqs)-1]
}

func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: oai.String(s)}
}

// On the openai kind the request goes to OpenAI's own Responses API with the client's fields
// (a hosted tool included) and the upstream model; the answer comes back as OpenAI wrote it,
// with the gateway's id and model, whole and streamed alike.
func TestNativeResponsesPassThrough(t *testing.T) {
	h := newResponsesHarness(t, nil)
	h.fake.Default = openaifake.Reply{Text: "Paris is sunny", WebSearch: true, Reasoning: "looked it up", PromptTokens: 9, CompletionTokens: 4, CachedTokens: 3}
	params := responses.ResponseNewParams{
		Model: "gw/native", Input: textInput("Weather in Paris?"), Instructions: oai.String("Be brief."),
		Tools:   []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
		Include: []responses.ResponseIncludable{responses.ResponseIncludableWebSearchCallActionSources},
	}
	resp, err := h.client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	got := h.last(t)
	if got.Path != "/v1/responses" || got.Body["model"] != "gpt-upstream" || got.Body["instructions"] != "Be brief." ||
		got.Body["store"] != false || got.Body["previous_response_id"] != nil {
		t.Errorf("upstream request %s", got.Raw)
	}
	if in, _ := got.Body["input"].([]any); len(in) != 1 || !strings.Contains(string(got.Raw), `"type":"input_text","text":"Weather in Paris?"`) {
		t.Errorf("upstream input %s", got.Raw)
	}
	if !strings.Contains(string(got.Raw), `"tools":[{"type":"web_search"}]`) || !strings.Contains(string(got.Raw), `"include":["web_search_call.action.sources"]`) {
		t.Errorf("the hosted tool and include did not reach OpenAI as sent: %s", got.Raw)
	}
	if !strings.HasPrefix(resp.ID, "resp_") || resp.ID == "resp_fake" || resp.Model != "gw/native" || resp.OutputText() != "Paris is sunny" {
		t.Errorf("response %s", resp.RawJSON())
	}
	if len(resp.Output) != 3 || resp.Output[0].Type != "web_search_call" || resp.Output[1].Type != "reasoning" {
		t.Errorf("OpenAI's output items were not passed through: %s", resp.JSON.Output.Raw())
	}
	if resp.Usage.InputTokens != 9 || resp.Usage.InputTokensDetails.CachedTokens != 3 {
		t.Errorf("usage %s", resp.JSON.Usage.Raw())
	}

	s := gatewaytest.StreamResponse(t, h.client, params)
	for _, want := range []string{"response.web_search_call.searching", "response.reasoning_summary_text.delta", "response.output_text.delta", "response.output_item.done", "response.completed"} {
		if !contains(s.Types, want) {
			t.Errorf("no %s among the passed-through events %v", want, s.Types)
		}
	}
	if s.Text != "Paris is sunny" || s.Final.Model != "gw/native" || s.Final.ID == "resp_fake" {
		t.Errorf("stream text %q, final %s", s.Text, s.Final.RawJSON())
	}
	if a, b := gatewaytest.ComparableResponse(t, s.Final.RawJSON()), gatewaytest.ComparableResponse(t, resp.RawJSON()); !reflect.DeepEqual(a, b) {
		t.Errorf("streamed and whole responses differ:\n%v\n%v", a, b)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A stored native response is continued by the gateway: OpenAI gets the whole conversation as
// input items and store true (so it can resolve its own reasoning items), never the
// gateway's previous_response_id.
func TestNativeResponsesContinueFromTheGatewaysStore(t *testing.T) {
	h := newResponsesHarness(t, responsesstoreMemory())
	h.fake.Default = openaifake.Reply{Text: "first answer", PromptTokens: 3, CompletionTokens: 2}
	first, err := h.client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "gw/native", Input: textInput("one")})
	if err != nil {
		t.Fatal(err)
	}
	if h.last(t).Body["store"] != true {
		t.Errorf("a stored response's upstream store: %s", h.last(t).Raw)
	}
	h.fake.Default = openaifake.Reply{Text: "second answer", PromptTokens: 3, CompletionTokens: 2}
	second, err := h.client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "gw/native",
		PreviousResponseID: oai.String(first.ID), Input: textInput("two")})
	if err != nil {
		t.Fatal(err)
	}
	up := h.last(t)
	in, _ := up.Body["input"].([]any)
	if len(in) != 3 || up.Body["previous_response_id"] != nil || !strings.Contains(string(up.Raw), `"text":"first answer"`) {
		t.Errorf("upstream input after previous_response_id: %s", up.Raw)
	}
	if second.PreviousResponseID != first.ID || second.OutputText() != "second answer" {
		t.Errorf("second %s", second.RawJSON())
	}
}

func responsesstoreMemory() responsestore.Store { return responsestore.NewMemory() }

// A native stream that fails after output ends with the gateway's error and
// response.failed, numbered after the upstream's events.
func TestNativeResponsesFailureAfterOutput(t *testing.T) {
	h := newResponsesHarness(t, nil)
	h.fake.Default = openaifake.Reply{Text: "one two three four", ErrorEventAfter: 2, ErrorEventMessage: "upstream blew up"}
	s := gatewaytest.StreamResponse(t, h.client, responses.ResponseNewParams{Model: "gw/native", Input: textInput("go")})
	n := len(s.Types)
	if n < 2 || s.Types[n-2] != "error" || s.Types[n-1] != "response.failed" || s.Final.Status != responses.ResponseStatusFailed || s.Text != "one two" {
		t.Errorf("events %v, text %q, final %s", s.Types, s.Text, s.Final.RawJSON())
	}
}

// On any other OpenAI-wire kind the request is translated to Chat Completions: text, a
// function tool and its output, stream and whole alike; a hosted tool is refused naming it.
func TestTranslatedResponsesOnVLLM(t *testing.T) {
	h := newResponsesHarness(t, nil)
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Strict: oai.Bool(false),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	h.fake.Default = openaifake.Reply{ToolCalls: []openaifake.ToolCall{{ID: "call_up_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, PromptTokens: 7, CompletionTokens: 5}
	params := responses.ResponseNewParams{Model: "gw/vllm", Input: textInput("Weather in Paris?"), Instructions: oai.String("Be brief."),
		Tools: []responses.ToolUnionParam{tool}, ParallelToolCalls: oai.Bool(false)}
	resp, err := h.client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	up := h.last(t)
	if up.Path != "/v1/chat/completions" || up.Body["model"] != "qwen-upstream" || up.Body["parallel_tool_calls"] != false {
		t.Errorf("upstream %s", up.Raw)
	}
	msgs, _ := up.Body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[0].(map[string]any)["content"] != "Be brief." {
		t.Errorf("upstream messages %s", up.Raw)
	}
	if len(resp.Output) != 1 || resp.Output[0].Type != "function_call" {
		t.Fatalf("output %s", resp.JSON.Output.Raw())
	}
	call := resp.Output[0].AsFunctionCall()
	if call.CallID != "call_up_1" || call.Arguments != `{"city":"Paris"}` || resp.Usage.InputTokens != 7 {
		t.Errorf("call %s, usage %s", call.RawJSON(), resp.JSON.Usage.Raw())
	}
	s := gatewaytest.StreamResponse(t, h.client, params)
	if a, b := gatewaytest.ComparableResponse(t, s.Final.RawJSON()), gatewaytest.ComparableResponse(t, resp.RawJSON()); !reflect.DeepEqual(a, b) {
		t.Errorf("streamed and whole responses differ:\n%v\n%v", a, b)
	}

	out := responses.ResponseInputItemParamOfFunctionCallOutput("sunny")
	out.OfFunctionCallOutput.CallID = oai.String(call.CallID)
	h.fake.Default = openaifake.Reply{Text: "It is sunny.", PromptTokens: 9, CompletionTokens: 3}
	resp, err = h.client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "gw/vllm", Tools: params.Tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
			out,
		}}})
	if err != nil {
		t.Fatal(err)
	}
	up = h.last(t)
	if !strings.Contains(string(up.Raw), `{"role":"tool","content":"sunny","tool_call_id":"call_up_1"}`) || resp.OutputText() != "It is sunny." {
		t.Errorf("upstream %s\nresponse %s", up.Raw, resp.RawJSON())
	}

	n := len(h.fake.Requests())
	_, err = h.client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "gw/vllm", Input: textInput("x"),
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}}})
	var e *oai.Error
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Param != "tools[0]" || !strings.Contains(e.Message, "connection kind openai") {
		t.Errorf("a hosted tool on vLLM: %v", err)
	}
	if len(h.fake.Requests()) != n {
		t.Error("a refused request reached the upstream")
	}
}

// The native route's upstream errors are the client's in OpenAI's shape: a 400 is not failed
// over and keeps OpenAI's param.
func TestNativeResponsesUpstreamRefusal(t *testing.T) {
	h := newResponsesHarness(t, nil)
	h.fake.Default = openaifake.Reply{Status: 400, ErrorBody: `{"error":{"message":"Invalid value for 'reasoning.effort'","type":"invalid_request_error","param":"reasoning.effort","code":"invalid_value"}}`}
	var raw json.RawMessage = []byte(`{"model":"gw/native","input":"x","reasoning":{"effort":"high"}}`)
	err := h.client.Post(context.Background(), "responses", raw, nil, option.WithMaxRetries(0))
	var e *oai.Error
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Param != "reasoning.effort" || e.Code != "upstream_bad_request" {
		t.Errorf("got %v", err)
	}
}

// Every request of the Codex recordings, through the gateway: OpenAI itself serves them all
// (the default hosted tools included, sent on as Codex wrote them); vLLM serves those made
// with Codex's default tools off, and refuses the others before any request, naming the
// hosted web_search tool (docs/clients.md: web_search = "disabled"); the multi_agent_v1
// namespace beside it every route is offered flattened.
func TestCodexRecordingsThroughTheGateway(t *testing.T) {
	h := newResponsesHarness(t, nil)
	h.fake.Default = openaifake.Reply{Text: "PONG", PromptTokens: 5, CompletionTokens: 1}
	for _, rec := range gatewaytest.AgentRecordings(t, "codex-*.jsonl") {
		name := rec.File + ":" + strconv.Itoa(rec.Line)
		defaultTools := strings.Contains(rec.File, "default-tools") || strings.Contains(rec.File, "not-hardened")
		for _, model := range []string{"gw/native", "gw/vllm"} {
			var body map[string]any
			if err := json.Unmarshal(rec.Body, &body); err != nil {
				t.Fatal(err)
			}
			body["model"] = model
			raw, _ := json.Marshal(body)
			header := []string{"Accept", "text/event-stream"}
			for k, v := range rec.Headers {
				switch strings.ToLower(k) {
				case "x-codex-turn-metadata", "session-id", "thread-id", "originator", "x-client-request-id":
					header = append(header, k, v)
				}
			}
			n := len(h.fake.Requests())
			r := h.srv.Do(t, "POST", "/v1/responses", string(raw), header...)
			refused := model == "gw/vllm" && defaultTools
			switch {
			case refused:
				e := r.ErrorObject(t)
				if r.Status != 400 || e["param"] != "tools[8]" || !strings.Contains(e["message"].(string), "web search") || len(h.fake.Requests()) != n {
					t.Errorf("%s on %s: %d %s", name, model, r.Status, r.Body)
				}
			case r.Status != 200 || !strings.Contains(string(r.Body), "event: response.completed") || strings.Contains(string(r.Body), "[DONE]"):
				t.Errorf("%s on %s: %d %s", name, model, r.Status, r.Body)
			case model == "gw/native":
				up := h.last(t)
				tools, _ := up.Body["tools"].([]any)
				if len(tools) != len(body["tools"].([]any)) || up.Body["client_metadata"] == nil || up.Body["prompt_cache_key"] == nil {
					t.Errorf("%s: OpenAI did not get Codex's request as sent: %s", name, up.Raw)
				}
			}
		}
	}
}

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

const responsesConfig = `
keys:
  - {name: app, value: sk-gw-responses-0123456789}
  - {name: other, value: sk-gw-responses-other-0123}
connections:
  mock: {kind: mock}
models:
  mock-echo: {routes: [{connection: mock, model: echo}]}
  mock-lorem: {routes: [{connection: mock, model: lorem}]}
  mock-tools: {routes: [{connection: mock, model: tools}]}
  mock-failover:
    routes: [{connection: mock, model: "error:503"}, {connection: mock, model: echo}]
  mock-cut: {routes: [{connection: mock, model: "cut:3"}]}
  mock-priced:
    price: {input_per_mtok: 1, output_per_mtok: 2}
    max_output_tokens: 20
    routes: [{connection: mock, model: lorem}]
  mock-priced-unbounded:
    price: {input_per_mtok: 1, output_per_mtok: 2}
    routes: [{connection: mock, model: lorem}]
`

const (
	responsesKey      = "sk-gw-responses-0123456789"
	responsesOtherKey = "sk-gw-responses-other-0123"
)

// withStore gives the gateway a memory response store.
func withStore(o *gateway.Options) { o.ResponseStore = responsestore.NewMemory() }

func responsesClient(g *testGateway, opts ...option.RequestOption) oai.Client {
	return g.OpenAI(append([]option.RequestOption{option.WithAPIKey(responsesKey)}, opts...)...)
}

func text(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: oai.String(s)}
}

func items(in ...responses.ResponseInputItemUnionParam) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfInputItemList: in}
}

func comparable(t *testing.T, raw string) map[string]any {
	return gatewaytest.ComparableResponse(t, raw)
}

func streamed(t *testing.T, c oai.Client, params responses.ResponseNewParams) ([]string, responses.Response, string) {
	t.Helper()
	s := gatewaytest.StreamResponse(t, c, params)
	return s.Types, s.Final, s.Text
}

// TestResponsesDoorWithTheOpenAISDK drives /v1/responses with openai-go: a whole answer, the
// same answer streamed in OpenAI's event order, and the stream's final response equal to
// the whole one.
func TestResponsesDoorWithTheOpenAISDK(t *testing.T) {
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	params := responses.ResponseNewParams{
		Model:        "mock-echo",
		Instructions: oai.String("Be brief."),
		Input:        text("Hello, gateway"),
		Metadata:     map[string]string{"team": "docs"},
	}
	resp, err := c.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.ID, "resp_") || resp.Object != "response" || resp.Model != "mock-echo" ||
		resp.Status != responses.ResponseStatusCompleted || resp.OutputText() != "Hello, gateway" {
		t.Errorf("response %s", resp.RawJSON())
	}
	if resp.Instructions.OfString != "Be brief." || resp.Metadata["team"] != "docs" || storeOf(t, resp.RawJSON()) {
		t.Errorf("the response does not repeat the request (instructions, metadata, store false without a store): %s", resp.RawJSON())
	}
	if len(resp.Output) != 1 || resp.Output[0].Type != "message" || !strings.HasPrefix(resp.Output[0].ID, "msg_") {
		t.Errorf("output %s", resp.JSON.Output.Raw())
	}
	if resp.Usage.InputTokens != 4 || resp.Usage.OutputTokens != 2 || resp.Usage.TotalTokens != 6 {
		t.Errorf("usage %s", resp.JSON.Usage.Raw())
	}

	types, final, deltas := streamed(t, c, params)
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
		"response.output_item.done", "response.completed"}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("events\n%v\nwant\n%v", types, want)
	}
	if deltas != "Hello, gateway" {
		t.Errorf("deltas add up to %q", deltas)
	}
	if got, whole := comparable(t, final.RawJSON()), comparable(t, resp.RawJSON()); !reflect.DeepEqual(got, whole) {
		t.Errorf("the stream's response differs from the whole answer:\n%v\n%v", got, whole)
	}
}

// The mock calls the offered function; its output goes back as a function_call_output
// after the call, and the next answer reads it: in whole answers and streamed.
func TestResponsesFunctionToolRoundTrip(t *testing.T) {
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name: "get_weather", Description: oai.String("the weather"), Strict: oai.Bool(false),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	}}
	first := responses.ResponseNewParams{Model: "mock-tools", Input: text("Weather in Paris?"), Tools: []responses.ToolUnionParam{tool}}
	resp, err := c.Responses.New(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 1 || resp.Output[0].Type != "function_call" {
		t.Fatalf("output %s", resp.JSON.Output.Raw())
	}
	call := resp.Output[0].AsFunctionCall()
	if call.Name != "get_weather" || call.CallID == "" || !strings.HasPrefix(call.ID, "fc_") || !json.Valid([]byte(call.Arguments)) {
		t.Fatalf("call %s", call.RawJSON())
	}

	types, final, _ := streamed(t, c, first)
	want := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("events\n%v\nwant\n%v", types, want)
	}
	if got, whole := comparable(t, final.RawJSON()), comparable(t, resp.RawJSON()); !reflect.DeepEqual(got, whole) {
		t.Errorf("the stream's response differs from the whole answer:\n%v\n%v", got, whole)
	}

	second := responses.ResponseNewParams{Model: "mock-tools", Tools: first.Tools, Input: items(
		responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
		functionOutput(call.CallID, "sunny, 21 C"),
	)}
	resp, err = c.Responses.New(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.OutputText(); got != "The tool returned: sunny, 21 C" {
		t.Errorf("after the output: %q", got)
	}
}

func functionOutput(callID, out string) responses.ResponseInputItemUnionParam {
	p := responses.ResponseInputItemParamOfFunctionCallOutput(out)
	p.OfFunctionCallOutput.CallID = oai.String(callID)
	return p
}

// With a store, a response is kept for its key: previous_response_id continues from it
// (the function call it made answered by the next request), GET returns it, another key sees
// nothing, DELETE forgets it.
func TestResponsesPreviousResponseIDWithTheMemoryStore(t *testing.T) {
	g := newGateway(t, responsesConfig, withStore)
	c := responsesClient(g)
	ctx := context.Background()
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "lookup", Strict: oai.Bool(false),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-tools", Input: text("find it"),
		Tools: []responses.ToolUnionParam{tool}})
	if err != nil {
		t.Fatal(err)
	}
	if !storeOf(t, first.RawJSON()) || first.Output[0].Type != "function_call" {
		t.Fatalf("first %s", first.RawJSON())
	}
	call := first.Output[0].AsFunctionCall()

	// Streamed, so the stream's store path is the one that keeps the second response.
	types, second, _ := streamed(t, c, responses.ResponseNewParams{Model: "mock-tools", PreviousResponseID: oai.String(first.ID),
		Tools: []responses.ToolUnionParam{tool}, Input: items(functionOutput(call.CallID, "42"))})
	if second.OutputText() != "The tool returned: 42" || second.PreviousResponseID != first.ID || !storeOf(t, second.RawJSON()) {
		t.Fatalf("second (%v) %s", types, second.RawJSON())
	}

	// A third turn continues the chain: the echo model repeats the last user text, which
	// came two responses ago.
	third, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String(second.ID),
		Input: text("and again")})
	if err != nil {
		t.Fatal(err)
	}
	if third.OutputText() != "and again" {
		t.Errorf("third %s", third.RawJSON())
	}

	got, err := c.Responses.Get(ctx, second.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RawJSON() != second.RawJSON() {
		t.Errorf("GET returned\n%s\nwant the streamed response\n%s", got.RawJSON(), second.RawJSON())
	}

	other := responsesClient(g, option.WithAPIKey(responsesOtherKey))
	_, err = other.Responses.Get(ctx, second.ID, responses.ResponseGetParams{})
	if status(err) != http.StatusNotFound {
		t.Errorf("another key's GET: %v", err)
	}
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String(second.ID), Input: text("x")})
	if e := apiError(t, err); e.StatusCode != 400 || e.Param != "previous_response_id" || e.Code != "previous_response_not_found" {
		t.Errorf("another key continuing: %v", err)
	}
	if err := other.Responses.Delete(ctx, second.ID); status(err) != http.StatusNotFound {
		t.Errorf("another key's DELETE: %v", err)
	}

	if err := c.Responses.Delete(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Responses.Get(ctx, second.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
		t.Errorf("GET after DELETE: %v", err)
	}
}

// Without a store, previous_response_id is refused naming it, store: true is answered with
// store: false, and GET finds nothing.
func TestResponsesWithoutAStore(t *testing.T) {
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	ctx := context.Background()
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text("hi"), Store: oai.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if storeOf(t, resp.RawJSON()) {
		t.Errorf("store: true without a store: %s", resp.RawJSON())
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text("hi"), PreviousResponseID: oai.String(resp.ID)})
	if e := apiError(t, err); e.StatusCode != 400 || e.Param != "previous_response_id" || !strings.Contains(e.Message, "stores no responses") {
		t.Errorf("previous_response_id without a store: %v", err)
	}
	if _, err := c.Responses.Get(ctx, resp.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
		t.Errorf("GET without a store: %v", err)
	}
}

// storeOf reads the response object's store, which openai-go does not model.
func storeOf(t *testing.T, raw string) bool {
	t.Helper()
	var r struct {
		Store *bool `json:"store"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil || r.Store == nil {
		t.Fatalf("no store in %s", raw)
	}
	return *r.Store
}

func apiError(t *testing.T, err error) *oai.Error {
	t.Helper()
	var e *oai.Error
	if !errors.As(err, &e) {
		t.Fatalf("want an *openai.Error, got %v", err)
	}
	return e
}

func status(err error) int {
	var e *oai.Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// Refusals reach the SDK as typed errors with OpenAI's param notation and codes.
func TestResponsesTypedErrors(t *testing.T) {
	g := newGateway(t, responsesConfig)
	for _, tc := range []struct {
		name, body, key string
		status          int
		param, code     string
	}{
		{"unknown field", `{"model":"mock-echo","input":"x","temprature":1}`, responsesKey, 400, "temprature", "unknown_parameter"},
		{"case differs", `{"MODEL":"mock-echo","input":"x"}`, responsesKey, 400, "MODEL", "unknown_parameter"},
		{"repeated key", `{"model":"mock-echo","input":"x","metadata":{"a":"1","a":"2"}}`, responsesKey, 400, "metadata.a", "duplicate_parameter"},
		{"deep type", `{"model":"mock-echo","input":[{"role":"user","content":[{"type":"input_text","text":5}]}]}`, responsesKey, 400, "input[0].content[0].text", "invalid_type"},
		{"missing input", `{"model":"mock-echo"}`, responsesKey, 400, "input", "missing_required_parameter"},
		{"orphan output", `{"model":"mock-echo","input":[{"type":"function_call_output","call_id":"c1","output":"x"}]}`, responsesKey, 400, "input[0].call_id", "invalid_value"},
		{"temperature", `{"model":"mock-echo","input":"x","temperature":3}`, responsesKey, 400, "temperature", "decimal_above_max_value"},
		{"hosted tool", `{"model":"mock-echo","input":"x","tools":[{"type":"web_search"}]}`, responsesKey, 400, "tools[0]", "unsupported_parameter"},
		{"include", `{"model":"mock-echo","input":"x","include":["file_search_call.results"]}`, responsesKey, 400, "include[0]", "unsupported_parameter"},
		{"background", `{"model":"mock-echo","input":"x","background":true}`, responsesKey, 400, "background", "unsupported_parameter"},
		{"unknown model", `{"model":"nope","input":"x"}`, responsesKey, 404, "model", "model_not_found"},
		{"bad key", `{"model":"mock-echo","input":"x"}`, "sk-wrong", 401, "", "invalid_api_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw json.RawMessage = []byte(tc.body)
			c := responsesClient(g, option.WithAPIKey(tc.key))
			err := c.Post(context.Background(), "responses", raw, nil)
			e := apiError(t, err)
			if e.StatusCode != tc.status || e.Param != tc.param || e.Code != tc.code {
				t.Errorf("got %d %q %q: %s", e.StatusCode, e.Param, e.Code, e.Message)
			}
		})
	}
}

// The output maximum makes the response incomplete: status and reason in the whole answer,
// response.incomplete ending the stream.
func TestResponsesIncompleteAtTheOutputMaximum(t *testing.T) {
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	params := responses.ResponseNewParams{Model: "mock-lorem", Input: text("go"), MaxOutputTokens: oai.Int(16)}
	resp, err := c.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != responses.ResponseStatusIncomplete || resp.IncompleteDetails.Reason != "max_output_tokens" || resp.MaxOutputTokens != 16 {
		t.Errorf("response %s", resp.RawJSON())
	}
	types, final, _ := streamed(t, c, params)
	if types[len(types)-1] != "response.incomplete" || final.Status != responses.ResponseStatusIncomplete {
		t.Errorf("events %v, final %s", types, final.RawJSON())
	}
}

// Before any output a failed route is failed over; after output began the stream ends with
// error and response.failed, never a completion.
func TestResponsesStreamFailures(t *testing.T) {
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	types, final, _ := streamed(t, c, responses.ResponseNewParams{Model: "mock-failover", Input: text("still here")})
	if types[len(types)-1] != "response.completed" || final.OutputText() != "still here" {
		t.Errorf("failover: %v %s", types, final.RawJSON())
	}

	types, final, deltas := streamed(t, c, responses.ResponseNewParams{Model: "mock-cut", Input: text("go")})
	n := len(types)
	if n < 2 || types[n-2] != "error" || types[n-1] != "response.failed" || final.Status != responses.ResponseStatusFailed ||
		final.Error.Code == "" || deltas == "" {
		t.Errorf("cut: %v %s", types, final.RawJSON())
	}
	for _, ty := range types {
		if ty == "response.completed" || ty == "response.output_item.done" {
			t.Errorf("a broken stream sent %s", ty)
		}
	}
}

// GET and DELETE are the only methods on /v1/responses/{id}, and POST the only one on
// /v1/responses; an unknown path is a 404 in OpenAI's shape.
func TestResponsesEndpoints(t *testing.T) {
	g := newGateway(t, responsesConfig, withStore)
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodGet, "/v1/responses", 405, "POST"},
		{http.MethodPut, "/v1/responses/resp_x", 405, "GET, DELETE"},
		{http.MethodGet, "/v1/responses/resp_x", 404, ""},
		{http.MethodPost, "/v1/responses/resp_x/cancel", 404, ""},
	} {
		r := g.Do(t, tc.method, tc.path, "", "Authorization", "Bearer "+responsesKey)
		if r.Status != tc.status || r.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q: %s", tc.method, tc.path, r.Status, r.Header.Get("Allow"), r.Body)
		}
		r.ErrorObject(t)
	}
	r := g.Do(t, http.MethodGet, "/v1/responses/resp_x?stream=true", "", "Authorization", "Bearer "+responsesKey)
	if e := r.ErrorObject(t); r.Status != 400 || e["param"] != "stream" {
		t.Errorf("GET ?stream=true: %d %s", r.Status, r.Body)
	}
}

// A priced model needs an output maximum. Codex never sends max_output_tokens, so on this
// door the model's max_output_tokens ceiling stands in for it (and bounds the answer); a
// priced model without a ceiling refuses, saying both ways out.
func TestResponsesPricedModelsTakeTheCeilingAsTheMaximum(t *testing.T) {
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	resp, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "mock-priced", Input: text("go")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != responses.ResponseStatusIncomplete || len(strings.Fields(resp.OutputText())) != 20 {
		t.Errorf("response %s", resp.RawJSON())
	}
	_, err = c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "mock-priced-unbounded", Input: text("go")})
	if e := apiError(t, err); e.StatusCode != 400 || e.Param != "max_output_tokens" || !strings.Contains(e.Message, "ceiling") {
		t.Errorf("a priced model without a ceiling: %v", err)
	}
	r := g.Chat(t, `{"model":"mock-priced","messages":[{"role":"user","content":"go"}]}`, "Authorization", "Bearer "+responsesKey)
	if e := r.ErrorObject(t); r.Status != 400 || e["param"] != "max_completion_tokens" {
		t.Errorf("the chat door keeps its rule: %d %s", r.Status, r.Body)
	}
}

// Usage carries output_tokens_details.reasoning_tokens as the backend reported it, whole and
// streamed, on a translated route (Chat Completions' completion_tokens_details) and through
// the openai kind's pass-through (the Responses usage as OpenAI sent it). On a translated
// route both details are always there, as OpenAI always writes them and the Responses
// object's schema requires them: a count the backend did not report is 0 (no reasoning or
// cache tokens counted), never a figure of the gateway's making.
func TestResponsesUsageReportsReasoningTokensAsTheBackendDid(t *testing.T) {
	tests := []struct {
		name     string
		kind     string // the connection's kind: openai passes the request through
		upstream string // the upstream's usage object, in its API's shape
		want     string // usage in the gateway's response
	}{
		{"translated, reasoning reported", "openai-compatible",
			`{"prompt_tokens":10,"completion_tokens":25,"total_tokens":35,"completion_tokens_details":{"reasoning_tokens":20}}`,
			`{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":25,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":35}`},
		{"translated, zero reasoning reported", "openai-compatible",
			`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"completion_tokens_details":{"reasoning_tokens":0}}`,
			`{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}`},
		{"translated, no reasoning reported", "openai-compatible",
			`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`,
			`{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}`},
		{"translated, cache reads reported", "openai-compatible",
			`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":8}}`,
			`{"input_tokens":10,"input_tokens_details":{"cached_tokens":8},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}`},
		{"native, reasoning reported", "openai",
			`{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":25,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":35}`,
			`{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":25,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":35}`},
		{"native, no reasoning reported", "openai",
			`{"input_tokens":10,"output_tokens":5,"total_tokens":15}`,
			`{"input_tokens":10,"output_tokens":5,"total_tokens":15}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			up := openaifake.New()
			defer up.Close()
			up.Default = openaifake.Reply{Text: "thought it through", RawUsage: json.RawMessage(tc.upstream)}
			g := newGateway(t, fmt.Sprintf(`
connections:
  up: {kind: %s, api_key: sk-up-reasoning-0123456789, base_url: %s}
models:
  m: {routes: [{connection: up, model: o-fake}]}
`, tc.kind, up.BaseURL()))
			c := g.OpenAI()
			params := responses.ResponseNewParams{Model: "m", Input: text("think")}
			resp, err := c.Responses.New(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			checkUsageJSON(t, "whole", resp.JSON.Usage.Raw(), tc.want)
			s := gatewaytest.StreamResponse(t, c, params)
			if s.Types[len(s.Types)-1] != "response.completed" || s.Text != "thought it through" {
				t.Fatalf("stream %v %q", s.Types, s.Text)
			}
			checkUsageJSON(t, "streamed", s.Final.JSON.Usage.Raw(), tc.want)
			if n := len(up.Requests()); n != 2 {
				t.Errorf("%d upstream requests, want 2", n)
			}
		})
	}
	// The mock reports no reasoning or cache count either.
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	params := responses.ResponseNewParams{Model: "mock-echo", Input: text("two words")}
	resp, err := c.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	mock := `{"input_tokens":2,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":4}`
	checkUsageJSON(t, "mock whole", resp.JSON.Usage.Raw(), mock)
	checkUsageJSON(t, "mock streamed", gatewaytest.StreamResponse(t, c, params).Final.JSON.Usage.Raw(), mock)
}

// checkUsageJSON compares two usage objects as JSON values: the fields present and their counts.
func checkUsageJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s usage %q: %v", what, got, err)
	}
	_ = json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s usage\n%s\nwant\n%s", what, got, want)
	}
}

// TestResponsesJSONObjectOnTheMock: under text.format json_object the mock answers an input
// that is a JSON object with that object as sent, whole and streamed, and wraps other text.
func TestResponsesJSONObjectOnTheMock(t *testing.T) {
	g := newGateway(t, responsesConfig)
	c := responsesClient(g)
	format := responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}}
	for _, tc := range []struct{ said, want string }{
		{`{"city": "Paris", "days": [1, 2]}`, `{"city": "Paris", "days": [1, 2]}`},
		{"Hello, gateway", `{"text":"Hello, gateway"}`},
	} {
		params := responses.ResponseNewParams{Model: "mock-echo", Input: text(tc.said), Text: format}
		resp, err := c.Responses.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if resp.OutputText() != tc.want {
			t.Errorf("%q answered %q, want %q", tc.said, resp.OutputText(), tc.want)
		}
		if _, final, deltas := streamed(t, c, params); deltas != tc.want || final.OutputText() != tc.want {
			t.Errorf("%q streamed %q (final %q), want %q", tc.said, deltas, final.OutputText(), tc.want)
		}
	}
}

package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

func responsesText(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: oai.String(s)}
}

// sentMessages decodes what Anthropic was sent.
type sentMessages struct {
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
}

func lastSent(t *testing.T, h *harness) (sentMessages, string) {
	t.Helper()
	got := h.fake.Last()
	if got.Rejected != nil {
		t.Fatalf("the fake refused the request: %v\n%s", got.Rejected, got.Body)
	}
	var s sentMessages
	if err := json.Unmarshal(got.Body, &s); err != nil {
		t.Fatalf("%v\n%s", err, got.Body)
	}
	return s, string(got.Body)
}

// The Responses door on Anthropic: instructions and developer messages become the system
// prompt, the answer comes back as a message item with Anthropic's usage in OpenAI's terms,
// and the stream's final response equals the whole one.
func TestResponsesOnAnthropic(t *testing.T) {
	h := newHarness(t)
	answer := &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("Bonjour!")},
		Usage: anthropicfake.Usage{Input: 12, CacheCreation: 100, CacheRead: 2000, Output: 9}}
	h.fake.Enqueue(anthropicfake.Reply{Answer: answer}, anthropicfake.Reply{Answer: answer})
	params := responses.ResponseNewParams{Model: "gw/claude", Instructions: oai.String("Answer in French."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfMessage("Be polite.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage("Hello", responses.EasyInputMessageRoleUser),
		}}}
	resp, err := h.client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	sent, body := lastSent(t, h)
	if !strings.Contains(body, `"system":[{"type":"text","text":"Answer in French."},{"type":"text","text":"Be polite."}]`) ||
		len(sent.Messages) != 1 || sent.Messages[0].Role != "user" {
		t.Errorf("sent %s", body)
	}
	if resp.OutputText() != "Bonjour!" || resp.Model != "gw/claude" || resp.Status != responses.ResponseStatusCompleted {
		t.Errorf("response %s", resp.RawJSON())
	}
	if u := resp.Usage; u.InputTokens != 2112 || u.InputTokensDetails.CachedTokens != 2000 || u.OutputTokens != 9 || u.TotalTokens != 2121 {
		t.Errorf("usage %s", resp.JSON.Usage.Raw())
	}
	s := gatewaytest.StreamResponse(t, h.client, params)
	if a, b := gatewaytest.ComparableResponse(t, s.Final.RawJSON()), gatewaytest.ComparableResponse(t, resp.RawJSON()); !reflect.DeepEqual(a, b) {
		t.Errorf("streamed and whole responses differ:\n%v\n%v", a, b)
	}
}

// Anthropic's thinking comes back as a reasoning item whose summary is the thinking and
// whose encrypted_content (asked for with include) carries the signature; given back in the
// next request with the tool call it preceded, it is the thinking block again, signature and
// all, as Anthropic requires in a tool loop.
func TestResponsesReasoningRoundTripOnAnthropic(t *testing.T) {
	h := newHarness(t)
	answer := &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Thinking("The user wants weather."),
		anthropicfake.ToolUse("toolu_01", "get_weather", `{"city":"Paris"}`)}, StopReason: "tool_use",
		Usage: anthropicfake.Usage{Input: 20, Output: 11}}
	h.fake.Enqueue(anthropicfake.Reply{Answer: answer}, anthropicfake.Reply{Answer: answer})
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Strict: oai.Bool(false),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	params := responses.ResponseNewParams{Model: "gw/claude", Input: responsesText("Weather in Paris?"),
		Tools:     []responses.ToolUnionParam{tool},
		Include:   []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		Reasoning: shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}}
	resp, err := h.client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 2 || resp.Output[0].Type != "reasoning" || resp.Output[1].Type != "function_call" {
		t.Fatalf("output %s", resp.JSON.Output.Raw())
	}
	rs := resp.Output[0].AsReasoning()
	if len(rs.Summary) != 1 || rs.Summary[0].Text != "The user wants weather." || !strings.HasPrefix(rs.EncryptedContent, "fngate:v1:signature:") {
		t.Errorf("reasoning %s", rs.RawJSON())
	}
	s := gatewaytest.StreamResponse(t, h.client, params)
	for _, want := range []string{"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.function_call_arguments.done"} {
		if !slicesContains(s.Types, want) {
			t.Errorf("no %s in %v", want, s.Types)
		}
	}
	if a, b := gatewaytest.ComparableResponse(t, s.Final.RawJSON()), gatewaytest.ComparableResponse(t, resp.RawJSON()); !reflect.DeepEqual(a, b) {
		t.Errorf("streamed and whole responses differ:\n%v\n%v", a, b)
	}

	// The next turn: the output items as they came, then the function's output.
	var next []responses.ResponseInputItemUnionParam
	next = append(next, responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser))
	for _, it := range resp.Output {
		var p responses.ResponseInputItemUnionParam
		if err := json.Unmarshal([]byte(it.RawJSON()), &p); err != nil {
			t.Fatal(err)
		}
		next = append(next, p)
	}
	call := resp.Output[1].AsFunctionCall()
	out := responses.ResponseInputItemParamOfFunctionCallOutput("sunny")
	out.OfFunctionCallOutput.CallID = oai.String(call.CallID)
	next = append(next, out)
	h.fake.Enqueue(anthropicfake.Reply{Answer: &anthropicfake.Answer{Blocks: []anthropicfake.Block{anthropicfake.Text("Sunny.")}}})
	resp, err = h.client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "gw/claude", Tools: params.Tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: next}})
	if err != nil {
		t.Fatal(err)
	}
	_, body := lastSent(t, h)
	if !strings.Contains(body, `{"type":"thinking","thinking":"The user wants weather.","signature":"RXVnZmFrZXNpZ25hdHVyZQ=="}`) ||
		!strings.Contains(body, `"tool_use_id":"toolu_01"`) || resp.OutputText() != "Sunny." {
		t.Errorf("sent %s\nresponse %s", body, resp.RawJSON())
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// What Anthropic cannot honour is refused before any request, naming the field.
func TestResponsesRefusalsOnAnthropic(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name   string
		params responses.ResponseNewParams
		param  string
	}{
		{"hosted tool", responses.ResponseNewParams{Model: "gw/claude", Input: responsesText("x"),
			Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}}}, "tools[0]"},
		{"effort", responses.ResponseNewParams{Model: "gw/claude", Input: responsesText("x"),
			Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortHigh}}, "reasoning.effort"},
		{"temperature", responses.ResponseNewParams{Model: "gw/claude", Input: responsesText("x"), Temperature: oai.Float(1.5)}, "temperature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(h.fake.Requests())
			_, err := h.client.Responses.New(context.Background(), tc.params)
			var e *oai.Error
			if !errors.As(err, &e) || e.StatusCode != 400 || e.Param != tc.param {
				t.Errorf("got %v", err)
			}
			if len(h.fake.Requests()) != n {
				t.Error("a refused request reached Anthropic")
			}
		})
	}
}

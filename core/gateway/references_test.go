package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// reference is an item_reference as the Vercel AI SDK sends it, with its type; openai-go
// leaves the type out unless asked, as OpenAI allows.
func reference(id string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfItemReference: &responses.ResponseInputItemItemReferenceParam{ID: id, Type: "item_reference"}}
}

func bareReference(id string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfItemReference: &responses.ResponseInputItemItemReferenceParam{ID: id}}
}

func userItem(s string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(s, responses.EasyInputMessageRoleUser)
}

// With a store, an item_reference to an item the gateway made is resolved from the stored
// response of the same key on a translated route: an earlier function call (made whole and
// streamed) answered by its output, an earlier answer's message. The response that resolved
// one is stored with the item itself, so previous_response_id continues from it.
func TestResponsesItemReferencesResolveFromTheStore(t *testing.T) {
	g := newGateway(t, responsesConfig, withStore)
	c := responsesClient(g)
	ctx := context.Background()
	tool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "lookup", Strict: oai.Bool(false),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}
	first := responses.ResponseNewParams{Model: "mock-tools", Input: text("find it"), Tools: []responses.ToolUnionParam{tool}}
	whole, err := c.Responses.New(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	_, streamedFirst, _ := streamed(t, c, first)
	for name, resp := range map[string]responses.Response{"whole": *whole, "streamed": streamedFirst} {
		call := resp.Output[0].AsFunctionCall()
		second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-tools", Tools: first.Tools,
			Input: items(userItem("find it"), reference(call.ID), functionOutput(call.CallID, "42"))})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if second.OutputText() != "The tool returned: 42" {
			t.Errorf("%s: %s", name, second.RawJSON())
		}
	}

	answer, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text("remember cobalt")})
	if err != nil {
		t.Fatal(err)
	}
	msg := answer.Output[0].ID
	turn, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo",
		Input: items(userItem("remember cobalt"), bareReference(msg), userItem("what was it?"))})
	if err != nil {
		t.Fatal(err)
	}
	if turn.OutputText() != "what was it?" {
		t.Errorf("turn %s", turn.RawJSON())
	}
	// The continued history holds the message, not the reference: the mock counts its words.
	next, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", PreviousResponseID: oai.String(turn.ID),
		Input: text("again")})
	if err != nil {
		t.Fatal(err)
	}
	if next.OutputText() != "again" || next.Usage.InputTokens != 2+2+3+3+1 {
		t.Errorf("continued: %s", next.RawJSON())
	}
}

// A reference the store cannot resolve stays a 400 naming input[N]: another key's item, a
// deleted response's, any item without a store, and OpenAI's own ids on a translated route.
func TestResponsesItemReferencesThatCannotBeResolved(t *testing.T) {
	g := newGateway(t, responsesConfig, withStore)
	c := responsesClient(g)
	ctx := context.Background()
	answer, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text("hello")})
	if err != nil {
		t.Fatal(err)
	}
	msg := answer.Output[0].ID
	turn := func(c oai.Client, ref string) error {
		_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo",
			Input: items(userItem("hello"), reference(ref), userItem("again"))})
		return err
	}
	check := func(name string, err error, words ...string) {
		t.Helper()
		e := apiError(t, err)
		if e.StatusCode != 400 || e.Param != "input[1]" || !strings.Contains(e.Message, "item_reference") {
			t.Errorf("%s: %v", name, err)
		}
		for _, w := range words {
			if !strings.Contains(e.Message, w) {
				t.Errorf("%s: %q does not say %q", name, e.Message, w)
			}
		}
	}
	other := responsesClient(g, option.WithAPIKey(responsesOtherKey))
	check("another key's item", turn(other, msg), msg, "not an item of this key's stored responses")
	check("an id of OpenAI's form", turn(c, "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b"), "only OpenAI can resolve")
	check("an item the response does not hold", turn(c, msg[:len(msg)-1]+"z"), "not an item of this key's stored responses")
	if err := c.Responses.Delete(ctx, answer.ID); err != nil {
		t.Fatal(err)
	}
	check("a deleted response's item", turn(c, msg), "not an item of this key's stored responses")

	bare := newGateway(t, responsesConfig)
	check("without a store", turn(responsesClient(bare), msg), "stores no responses", "store: false")
}

// On the openai kind, a reference to one of OpenAI's items goes to OpenAI as it was sent; one
// to an item the gateway made on another route goes as the item itself, which OpenAI could
// not resolve.
func TestResponsesItemReferencesOnTheNativeRoute(t *testing.T) {
	up := openaifake.New()
	defer up.Close()
	up.Default = openaifake.Reply{Text: "native"}
	g := newGateway(t, fmt.Sprintf(`
keys:
  - {name: app, value: %s}
connections:
  mock: {kind: mock}
  oai: {kind: openai, api_key: sk-up-native-0123456789, base_url: %s}
models:
  mock-echo: {routes: [{connection: mock, model: echo}]}
  native: {routes: [{connection: oai, model: gpt-fake}]}
`, responsesKey, up.BaseURL()), withStore)
	c := responsesClient(g)
	ctx := context.Background()
	answer, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo", Input: text("hello")})
	if err != nil {
		t.Fatal(err)
	}
	const theirs = "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b"
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "native",
		Input: items(userItem("hello"), reference(answer.Output[0].ID), reference(theirs), userItem("again"))})
	if err != nil {
		t.Fatal(err)
	}
	reqs := up.Requests()
	last := reqs[len(reqs)-1]
	in, _ := last.Body["input"].([]any)
	if len(in) != 4 {
		t.Fatalf("input %s", last.Raw)
	}
	if ref, _ := in[2].(map[string]any); len(ref) != 2 || ref["type"] != "item_reference" || ref["id"] != theirs {
		t.Errorf("OpenAI's reference was not passed on as sent: %v", in[2])
	}
	if item, _ := in[1].(map[string]any); item["type"] != "message" || item["role"] != "assistant" || item["id"] != answer.Output[0].ID {
		t.Errorf("the gateway's item was not sent whole: %v", in[1])
	}

	// The output of a call OpenAI holds is OpenAI's to pair with it.
	const theirCall = "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0"
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "native",
		Input: items(userItem("weather?"), reference(theirCall), functionOutput("call_theirs", "sunny"))})
	if err != nil {
		t.Fatalf("an output of OpenAI's referenced call: %v", err)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-echo",
		Input: items(userItem("weather?"), reference(theirCall), functionOutput("call_theirs", "sunny"))})
	if e := apiError(t, err); e.StatusCode != 400 || e.Param != "input[1]" {
		t.Errorf("the same on a translated route: %v", err)
	}
}

// unreadableStore cannot be read.
type unreadableStore struct{ responsestore.Store }

func (unreadableStore) Get(context.Context, string, string) (*responsestore.Stored, error) {
	return nil, errors.New("store unreachable")
}

// A store that cannot be read makes a request with references a 503, as previous_response_id
// does: no evidence either way, so nothing is refused as not found.
func TestResponsesItemReferencesWithTheStoreDown(t *testing.T) {
	g := newGateway(t, responsesConfig, func(o *gateway.Options) { o.ResponseStore = unreadableStore{responsestore.NewMemory()} })
	c := responsesClient(g)
	ref := "msg_" + strings.Repeat("aZ", 24) + "0"
	_, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "mock-echo",
		Input: items(userItem("hi"), reference(ref), userItem("again"))})
	if e := apiError(t, err); e.StatusCode != http.StatusServiceUnavailable || e.Code != "response_store_unavailable" {
		t.Errorf("%v", err)
	}
}

// On a WebSocket, an item_reference may name an item of the connection's last response, as
// previous_response_id may, though it was not stored (and the gateway has no store); on
// another connection the same reference is the 400 naming it.
func TestWebSocketItemReferenceToTheConnectionsResponse(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	first := s.Turn(t, `{"type":"response.create","model":"mock-tools","store":false,"input":"find it","tools":`+lookupTool+`}`)
	out, _ := first.Final["output"].([]any)
	if first.Status() != "completed" || len(out) != 1 {
		t.Fatalf("first: %v", first.Raw)
	}
	call := out[0].(map[string]any)
	next := `{"type":"response.create","model":"mock-tools","store":false,"tools":` + lookupTool + `,"input":[` +
		`{"role":"user","content":"find it"},{"type":"item_reference","id":"` + call["id"].(string) + `"},` +
		`{"type":"function_call_output","call_id":"` + call["call_id"].(string) + `","output":"42"}]}`
	second := s.Turn(t, next)
	if second.Status() != "completed" || second.Text() != "The tool returned: 42" {
		t.Fatalf("second: %v", second.Raw)
	}
	other := gatewaytest.DialResponses(t, g.URL, socketKey)
	refused := other.Turn(t, next)
	e, _ := refused.Error["error"].(map[string]any)
	if refused.Status() != "error" || e["param"] != "input[1]" {
		t.Errorf("on another connection: %v", refused.Raw)
	}
}

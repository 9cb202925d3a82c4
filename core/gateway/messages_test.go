package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const messagesConfig = `
keys:
  - {name: app, value: sk-gw-messages-0123456789}
connections:
  mock: {kind: mock}
models:
  claude-mock: {routes: [{connection: mock, model: echo}]}
  claude-mock-tools: {routes: [{connection: mock, model: tools}]}
  claude-mock-failover:
    routes: [{connection: mock, model: "error:529"}, {connection: mock, model: echo}]
  claude-mock-down: {routes: [{connection: mock, model: "error:503"}]}
  claude-mock-cut: {routes: [{connection: mock, model: "cut:3"}]}
`

const messagesKey = "sk-gw-messages-0123456789"

func anthropicClient(g *testGateway, opts ...option.RequestOption) anthropic.Client {
	return g.Anthropic(append([]option.RequestOption{option.WithAPIKey(messagesKey)}, opts...)...)
}

func userText(s string) anthropic.MessageParam {
	return anthropic.NewUserMessage(anthropic.NewTextBlock(s))
}

// TestMessagesDoorWithTheAnthropicSDK drives /v1/messages with the official Go SDK: a whole
// answer, the same answer streamed and assembled by the SDK's accumulator, and the gateway's
// names in both.
func TestMessagesDoorWithTheAnthropicSDK(t *testing.T) {
	g := newGateway(t, messagesConfig)
	c := anthropicClient(g)
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     "claude-mock",
		MaxTokens: 100,
		System:    []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages:  []anthropic.MessageParam{userText("Hello, gateway")},
	}
	msg, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Model != "claude-mock" || msg.Role != "assistant" || len(msg.Content) != 1 || msg.Content[0].Text != "Hello, gateway" ||
		msg.StopReason != anthropic.StopReasonEndTurn || !strings.HasPrefix(msg.ID, "msg_") {
		t.Errorf("message %+v", msg)
	}
	if msg.Usage.InputTokens != 4 || msg.Usage.OutputTokens != 2 {
		t.Errorf("usage %+v", msg.Usage)
	}

	stream := c.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	var events []string
	for stream.Next() {
		ev := stream.Current()
		events = append(events, ev.Type)
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	// The SDK does not yield the ping that follows message_start.
	want := "message_start content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
	if acc.Model != msg.Model || len(acc.Content) != 1 || acc.Content[0].Text != msg.Content[0].Text || acc.StopReason != msg.StopReason ||
		acc.Usage.InputTokens != msg.Usage.InputTokens || acc.Usage.OutputTokens != msg.Usage.OutputTokens {
		t.Errorf("streamed %+v\nwhole    %+v", acc, msg)
	}
}

// TestMessagesToolUse: a tool call streamed as input_json_delta assembles to the input the
// whole answer carries, and the tool result goes back as a tool_result block.
func TestMessagesToolUse(t *testing.T) {
	g := newGateway(t, messagesConfig)
	c := anthropicClient(g)
	ctx := context.Background()
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
		Name:        "get_weather",
		Description: anthropic.String("Weather for a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}},
	}}}
	params := anthropic.MessageNewParams{Model: "claude-mock-tools", MaxTokens: 100, Tools: tools,
		Messages: []anthropic.MessageParam{userText("Paris")}}
	whole, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	stream := c.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	var calls []anthropic.ToolUseBlock
	for _, m := range []anthropic.Message{*whole, acc} {
		if m.StopReason != anthropic.StopReasonToolUse {
			t.Errorf("stop reason %q", m.StopReason)
		}
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				calls = append(calls, b.AsToolUse())
			}
		}
	}
	if len(calls) != 2 || calls[0].Name != "get_weather" || string(calls[0].Input) != string(calls[1].Input) || calls[0].ID == "" {
		t.Fatalf("tool calls whole and streamed: %+v", calls)
	}
	var in struct {
		City string
		Days int
	}
	if err := json.Unmarshal(calls[0].Input, &in); err != nil || in.City != "Paris" || in.Days != 1 {
		t.Errorf("input %s: %v", calls[0].Input, err)
	}

	params.Messages = append(params.Messages, whole.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(calls[0].ID, "18 degrees and sunny", false)))
	final, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if final.Content[0].Text != "The tool returned: 18 degrees and sunny" {
		t.Errorf("after the tool result: %+v", final.Content)
	}
}

// TestMessagesErrors: failures reach the SDK as its typed errors, with Anthropic's statuses
// and error types, and the request-id header.
func TestMessagesErrors(t *testing.T) {
	g := newGateway(t, messagesConfig)
	ctx := context.Background()
	cases := []struct {
		name    string
		client  anthropic.Client
		model   string
		status  int
		errType string
	}{
		{"wrong key", g.Anthropic(option.WithAPIKey("sk-wrong")), "claude-mock", 401, "authentication_error"},
		{"unknown model", anthropicClient(g), "claude-nope", 404, "not_found_error"},
		{"provider down", anthropicClient(g), "claude-mock-down", 529, "overloaded_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.client.Messages.New(ctx, anthropic.MessageNewParams{Model: anthropic.Model(tc.model), MaxTokens: 10,
				Messages: []anthropic.MessageParam{userText("hi")}})
			var ae *anthropic.Error
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want an *anthropic.Error", err)
			}
			var body struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if ae.StatusCode != tc.status || json.Unmarshal([]byte(ae.RawJSON()), &body) != nil || body.Type != "error" || body.Error.Type != tc.errType ||
				body.Error.Message == "" || ae.RequestID == "" {
				t.Errorf("status %d body %s request-id %q", ae.StatusCode, ae.RawJSON(), ae.RequestID)
			}
		})
	}
	r0 := g.Do(t, http.MethodPost, "/v1/messages", `{"model":"claude-mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		"Anthropic-Version", "2023-06-01")
	if r0.Status != 401 || !strings.Contains(string(r0.Body), `"authentication_error"`) || r0.Header.Get("Request-Id") == "" {
		t.Errorf("no key: %d %s", r0.Status, r0.Body)
	}
	// The SDK sends x-api-key; a Bearer key (Claude Code's ANTHROPIC_AUTH_TOKEN) works too.
	r := g.Do(t, http.MethodPost, "/v1/messages?beta=true", `{"model":"claude-mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		"Authorization", "Bearer "+messagesKey, "Anthropic-Version", "2023-06-01")
	if r.Status != 200 {
		t.Errorf("bearer: %d %s", r.Status, r.Body)
	}
	// An unknown field is refused, as Anthropic refuses it, naming it.
	r = g.Do(t, http.MethodPost, "/v1/messages", `{"model":"claude-mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"temprature":1}`,
		"X-Api-Key", messagesKey, "Anthropic-Version", "2023-06-01")
	if r.Status != 400 || !strings.Contains(string(r.Body), `"invalid_request_error"`) || !strings.Contains(string(r.Body), "temprature: Extra inputs are not permitted") {
		t.Errorf("unknown field: %d %s", r.Status, r.Body)
	}
}

// TestMessagesFailoverAndCommit: a 529 before output fails over, and the failed attempt's
// preamble never reaches the client; a cut after output ends with an error event and no
// message_stop.
func TestMessagesFailoverAndCommit(t *testing.T) {
	g := newGateway(t, messagesConfig)
	r := g.Do(t, http.MethodPost, "/v1/messages", `{"model":"claude-mock-failover","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"after failover"}]}`,
		"X-Api-Key", messagesKey, "Anthropic-Version", "2023-06-01")
	body := string(r.Body)
	if r.Status != 200 || r.Header.Get(gateway.HeaderRoute) != "mock/echo" || r.Header.Get(gateway.HeaderAttempts) != "2" ||
		strings.Count(body, "event: message_start") != 1 || !strings.Contains(body, "event: message_stop") {
		t.Errorf("failover: %d %v\n%s", r.Status, r.Header, body)
	}
	r = g.Do(t, http.MethodPost, "/v1/messages", `{"model":"claude-mock-cut","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		"X-Api-Key", messagesKey, "Anthropic-Version", "2023-06-01")
	body = string(r.Body)
	if r.Status != 200 || !strings.Contains(body, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"") ||
		strings.Contains(body, "message_stop") || !strings.Contains(body, `" dolor"`) {
		t.Errorf("cut: %d\n%s", r.Status, body)
	}
	if !strings.Contains(g.logs.String(), `"endpoint":"messages"`) {
		t.Error("the attempt log does not name the messages endpoint")
	}
}

// TestMessagesProbesAndModels: the probes Claude Code makes at start answer 200, and
// GET /v1/models answers in Anthropic's list shape for a client that sends anthropic-version.
func TestMessagesProbesAndModels(t *testing.T) {
	g := newGateway(t, messagesConfig)
	for _, path := range []string{"/", "/api/hello"} {
		if r := g.Do(t, http.MethodHead, path, ""); r.Status != 200 {
			t.Errorf("HEAD %s: %d", path, r.Status)
		}
	}
	r := g.Do(t, http.MethodGet, "/v1/models?limit=1000", "", "X-Api-Key", messagesKey, "Anthropic-Version", "2023-06-01")
	var list struct {
		Data []struct {
			Type, ID, DisplayName, CreatedAt string
		}
		HasMore bool   `json:"has_more"`
		FirstID string `json:"first_id"`
		LastID  string `json:"last_id"`
	}
	if err := json.Unmarshal(r.Body, &list); err != nil || r.Status != 200 {
		t.Fatalf("%d %s: %v", r.Status, r.Body, err)
	}
	if len(list.Data) != 5 || list.Data[0].Type != "model" || list.Data[0].ID != "claude-mock" || list.HasMore || list.FirstID != "claude-mock" || list.LastID != "claude-mock-tools" {
		t.Errorf("list %s", r.Body)
	}
	c := anthropicClient(g)
	page, err := c.Models.List(context.Background(), anthropic.ModelListParams{Limit: anthropic.Int(2)})
	if err != nil || len(page.Data) != 2 || !page.HasMore || page.Data[1].ID != "claude-mock-cut" {
		t.Errorf("SDK page %s %v", page.RawJSON(), err)
	}
	r = g.Do(t, http.MethodGet, "/v1/models", "", "Authorization", "Bearer "+messagesKey)
	if !strings.Contains(string(r.Body), `"object":"list"`) {
		t.Errorf("OpenAI shape without anthropic-version: %s", r.Body)
	}
}

// TestMessagesCountTokens: the mock counts exactly (its own word count), and says so.
func TestMessagesCountTokens(t *testing.T) {
	g := newGateway(t, messagesConfig)
	c := anthropicClient(g)
	n, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model: "claude-mock", Messages: []anthropic.MessageParam{userText("one two three")}})
	if err != nil {
		t.Fatal(err)
	}
	if n.InputTokens != 3 {
		t.Errorf("input_tokens %d", n.InputTokens)
	}
	r := g.Do(t, http.MethodPost, "/v1/messages/count_tokens?beta=true", `{"model":"claude-mock","messages":[{"role":"user","content":"a b"}]}`,
		"X-Api-Key", messagesKey, "Anthropic-Version", "2023-06-01")
	if r.Header.Get(gateway.HeaderTokenCount) != "exact" {
		t.Errorf("%s %v", r.Body, r.Header)
	}
}

var _ = gatewaytest.Config

// TestWeightedRoutingKeepsASessionOnOneRoute: Claude Code's session id pins the weighted
// draw, so a session's requests stay on one route (its prompt cache stays warm), while
// sessions still spread over the routes by weight. The session is logged as a label.
func TestWeightedRoutingKeepsASessionOnOneRoute(t *testing.T) {
	g := newGateway(t, `
connections:
  a: {kind: mock}
  b: {kind: mock}
models:
  claude-spread:
    routing: {policy: weighted}
    routes: [{connection: a, model: echo, weight: 1}, {connection: b, model: echo, weight: 1}]
`)
	ask := func(session string) string {
		r := g.Do(t, http.MethodPost, "/v1/messages", `{"model":"claude-spread","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			"Anthropic-Version", "2023-06-01", "X-Claude-Code-Session-Id", session)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return r.Header.Get(gateway.HeaderRoute)
	}
	routes := map[string]bool{}
	for s := 0; s < 16; s++ {
		session := fmt.Sprintf("session-%d", s)
		first := ask(session)
		for i := 0; i < 4; i++ {
			if got := ask(session); got != first {
				t.Fatalf("session %s moved from %s to %s", session, first, got)
			}
		}
		routes[first] = true
	}
	if len(routes) != 2 {
		t.Errorf("16 sessions all went to %v", routes)
	}
	if !strings.Contains(g.logs.String(), `"session":"session-3"`) {
		t.Error("the session is not in the log labels")
	}
}

package anthropic_test

import (
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// TestResponseFormatThroughTheGateway: openai-go asks for a json_schema response_format
// under the extended profile; a model with structured outputs answers through
// output_config.format, an older one through the answer tool, and either way the client
// gets what OpenAI returns (the JSON as the content, finish stop, no tool calls), whole and
// streamed.
func TestResponseFormatThroughTheGateway(t *testing.T) {
	fake := anthropicfake.New()
	t.Cleanup(fake.Close)
	fake.Script = anthropicfake.Model
	cfg := gatewaytest.Config(t, `
request_profile: extended
connections:
  claude: {kind: anthropic, api_key: `+anthropicfake.APIKey+`, base_url: "`+fake.URL+`"}
models:
  native: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
  by-tool: {routes: [{connection: claude, model: claude-3-5-haiku-20241022}]}
`, config.Options{})
	reg := providers.Registry{}
	anthropic.Register(reg)
	srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: (&gatewaytest.LogBuffer{}).Logger()})
	client := srv.OpenAI()
	format := oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "trip", Schema: map[string]any{
			"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}}}
	// The fake writes the user's text into a tool's input, and "You said: ..." into a text.
	for model, want := range map[string]string{"native": `{"city":"You said: Paris"}`, "by-tool": `{"city":"Paris"}`} {
		t.Run(model, func(t *testing.T) {
			params := gatewaytest.UserOnly(model, "Paris")
			params.ResponseFormat = format
			resp, err := client.Chat.Completions.New(t.Context(), params)
			if err != nil {
				t.Fatal(err)
			}
			c := resp.Choices[0]
			if c.Message.Content != want || c.FinishReason != "stop" || len(c.Message.ToolCalls) != 0 {
				t.Errorf("answer %q %s %d tool calls", c.Message.Content, c.FinishReason, len(c.Message.ToolCalls))
			}
			sent := string(fake.Last().Body)
			if native := strings.Contains(sent, `"output_config":{"format"`); native != (model == "native") {
				t.Errorf("sent %s", sent)
			}
			text, finish, _ := gatewaytest.StreamText(t, client.Chat.Completions.NewStreaming(t.Context(), params))
			if text != want || finish != "stop" {
				t.Errorf("streamed %q %s", text, finish)
			}
		})
	}
}

// TestResponsesTextFormatOnAnthropic: the Responses door's text.format is the chat door's
// response_format on the same routes: native structured output where the model has it, the
// answer tool elsewhere, the JSON as the output text either way.
func TestResponsesTextFormatOnAnthropic(t *testing.T) {
	fake := anthropicfake.New()
	t.Cleanup(fake.Close)
	fake.Script = anthropicfake.Model
	cfg := gatewaytest.Config(t, `
connections:
  claude: {kind: anthropic, api_key: `+anthropicfake.APIKey+`, base_url: "`+fake.URL+`"}
models:
  native: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
  by-tool: {routes: [{connection: claude, model: claude-3-5-haiku-20241022}]}
`, config.Options{})
	reg := providers.Registry{}
	anthropic.Register(reg)
	srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: (&gatewaytest.LogBuffer{}).Logger()})
	client := srv.OpenAI()
	format := responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
		Name: "trip", Schema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}}}
	for model, want := range map[string]string{"native": `{"city":"You said: Paris"}`, "by-tool": `{"city":"Paris"}`} {
		t.Run(model, func(t *testing.T) {
			resp, err := client.Responses.New(t.Context(), responses.ResponseNewParams{Model: model,
				Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("Paris")}, Text: format})
			if err != nil {
				t.Fatal(err)
			}
			if resp.OutputText() != want || resp.Status != "completed" {
				t.Errorf("output %q status %s: %s", resp.OutputText(), resp.Status, resp.RawJSON())
			}
			if native := strings.Contains(string(fake.Last().Body), `"output_config":{"format"`); native != (model == "native") {
				t.Errorf("sent %s", fake.Last().Body)
			}
		})
	}
}

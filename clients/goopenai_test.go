package clients

import (
	"context"
	"errors"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// TestGoOpenAIToolExample runs go-openai's own tool example (examples/completion-with-tool)
// against the gateway on each backend: it names its tool message after the function, so
// under strict the second call is a 400 naming messages[2].name, and under extended (where a
// tool message's name is implied by its tool_call_id) the example works to the end.
func TestGoOpenAIToolExample(t *testing.T) {
	gw := serveSDKGateway(t)
	for _, b := range gw.Backends {
		for _, profile := range []string{"strict", "extended"} {
			t.Run(b.Name+" "+profile, func(t *testing.T) {
				key := sdkStrictKey
				if profile == "extended" {
					key = sdkExtendedKey
				}
				cfg := goopenai.DefaultConfig(key)
				cfg.BaseURL = gw.URL + "/v1"
				answer, err := goOpenAIToolExample(context.Background(), goopenai.NewClientWithConfig(cfg), b.Tools)
				if profile == "extended" {
					if err != nil || !strings.Contains(answer, "Sunny") {
						t.Fatalf("answer %q, error %v", answer, err)
					}
					return
				}
				var apiErr *goopenai.APIError
				if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Param == nil || *apiErr.Param != "messages[2].name" {
					t.Fatalf("strict: answer %q, error %v", answer, err)
				}
			})
		}
	}
}

// goOpenAIToolExample is the example's main, with the model and the client given.
func goOpenAIToolExample(ctx context.Context, client *goopenai.Client, model string) (string, error) {
	params := jsonschema.Definition{
		Type: jsonschema.Object,
		Properties: map[string]jsonschema.Definition{
			"location": {Type: jsonschema.String, Description: "The city and state, e.g. San Francisco, CA"},
			"unit":     {Type: jsonschema.String, Enum: []string{"celsius", "fahrenheit"}},
		},
		Required: []string{"location"},
	}
	f := goopenai.FunctionDefinition{Name: "get_current_weather", Description: "Get the current weather in a given location", Parameters: params}
	tool := goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &f}
	dialogue := []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "What is the weather in Boston today?"}}
	resp, err := client.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: model, Messages: dialogue, Tools: []goopenai.Tool{tool}})
	if err != nil {
		return "", err
	}
	if len(resp.Choices) != 1 || len(resp.Choices[0].Message.ToolCalls) != 1 {
		return "", errors.New("the first answer is not one tool call")
	}
	msg := resp.Choices[0].Message
	dialogue = append(dialogue, msg, goopenai.ChatCompletionMessage{
		Role:       goopenai.ChatMessageRoleTool,
		Content:    "Sunny and 80 degrees.",
		Name:       msg.ToolCalls[0].Function.Name,
		ToolCallID: msg.ToolCalls[0].ID,
	})
	resp, err = client.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: model, Messages: dialogue, Tools: []goopenai.Tool{tool}})
	if err != nil {
		return "", err
	}
	if len(resp.Choices) != 1 {
		return "", errors.New("the second answer has no choice")
	}
	return resp.Choices[0].Message.Content, nil
}

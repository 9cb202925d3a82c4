package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fngate/fngate/internal/openaifake"
)

// The official OpenAI Go SDK is the client most users point at the gateway: these tests drive
// the gateway through it, so wire details (chunk shapes, error bodies, statuses) are checked by
// the SDK's own parsers rather than by our reading of the spec.

func sdkClient(g *testGateway) openaisdk.Client {
	return openaisdk.NewClient(option.WithBaseURL(g.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

func weatherTool() openaisdk.ChatCompletionToolUnionParam {
	return openaisdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:       "get_weather",
		Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})
}

func TestSDKConformance(t *testing.T) {
	g, a, _ := newPair(t)
	client := sdkClient(g)
	ctx := context.Background()
	params := func() openaisdk.ChatCompletionNewParams {
		return openaisdk.ChatCompletionNewParams{
			Model:               "m",
			MaxCompletionTokens: openaisdk.Int(50),
			Messages:            []openaisdk.ChatCompletionMessageParamUnion{openaisdk.SystemMessage("be brief"), openaisdk.UserMessage("hello")},
		}
	}

	t.Run("non-stream", func(t *testing.T) {
		a.Enqueue(openaifake.Reply{Text: "hello back", PromptTokens: 4, CompletionTokens: 2})
		resp, err := client.Chat.Completions.New(ctx, params())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Model != "m" || len(resp.Choices) != 1 || resp.Choices[0].Message.Content != "hello back" || resp.Choices[0].FinishReason != "stop" {
			t.Errorf("response %+v", resp)
		}
		if resp.Usage.PromptTokens != 4 || resp.Usage.CompletionTokens != 2 || resp.Usage.TotalTokens != 6 {
			t.Errorf("usage %+v", resp.Usage)
		}
	})

	t.Run("stream with usage", func(t *testing.T) {
		a.Enqueue(openaifake.Reply{Text: "one two three", PromptTokens: 4, CompletionTokens: 3})
		p := params()
		p.StreamOptions = openaisdk.ChatCompletionStreamOptionsParam{IncludeUsage: openaisdk.Bool(true)}
		stream := client.Chat.Completions.NewStreaming(ctx, p)
		acc := openaisdk.ChatCompletionAccumulator{}
		chunks := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].Message.Content != "one two three" || acc.Usage.TotalTokens != 7 || chunks < 4 {
			t.Errorf("accumulated %q usage %+v over %d chunks", acc.Choices[0].Message.Content, acc.Usage, chunks)
		}
	})

	t.Run("streamed tool calls equal the non-stream answer", func(t *testing.T) {
		reply := openaifake.Reply{ToolCalls: []openaifake.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Tokyo"}`},
		}}
		p := params()
		p.Tools = []openaisdk.ChatCompletionToolUnionParam{weatherTool()}
		a.Enqueue(reply)
		whole, err := client.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		a.Enqueue(reply)
		stream := client.Chat.Completions.NewStreaming(ctx, p)
		acc := openaisdk.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		want, got := whole.Choices[0].Message.ToolCalls, acc.Choices[0].Message.ToolCalls
		if len(want) != 2 || len(got) != len(want) {
			t.Fatalf("tool calls: stream %d, whole %d", len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Function.Name != want[i].Function.Name || !openaifake.JSONEqual(got[i].Function.Arguments, want[i].Function.Arguments) {
				t.Errorf("call %d: stream %+v, whole %+v", i, got[i].Function, want[i].Function)
			}
		}
		if acc.Choices[0].FinishReason != "tool_calls" || whole.Choices[0].FinishReason != "tool_calls" {
			t.Errorf("finish reasons %q %q", acc.Choices[0].FinishReason, whole.Choices[0].FinishReason)
		}
	})

	t.Run("refused field is a typed 400", func(t *testing.T) {
		p := params()
		p.TopP = openaisdk.Float(0.5)
		_, err := client.Chat.Completions.New(ctx, p)
		var apiErr *openaisdk.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "top_p" || apiErr.Type != "invalid_request_error" {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("unknown model is a typed 404", func(t *testing.T) {
		p := params()
		p.Model = "no-such-model"
		_, err := client.Chat.Completions.New(ctx, p)
		var apiErr *openaisdk.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("error after output surfaces as a stream error", func(t *testing.T) {
		a.Enqueue(openaifake.Reply{Text: "one two three", CutAfter: 2})
		stream := client.Chat.Completions.NewStreaming(ctx, params())
		acc := openaisdk.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if stream.Err() == nil {
			t.Fatalf("a broken stream looked complete to the SDK (content %q)", acc.Choices[0].Message.Content)
		}
	})

	t.Run("models list", func(t *testing.T) {
		page, err := client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 1 || page.Data[0].ID != "m" {
			t.Errorf("models %+v", page.Data)
		}
	})

	t.Run("legacy completions", func(t *testing.T) {
		_, err := client.Completions.New(ctx, openaisdk.CompletionNewParams{
			Model:     "m",
			Prompt:    openaisdk.CompletionNewParamsPromptUnion{OfString: openaisdk.String("once")},
			MaxTokens: openaisdk.Int(5),
		})
		if err != nil {
			t.Fatal(fmt.Errorf("completions through the SDK: %w", err))
		}
	})
}

package bedrock

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// TestConverseChecksImageDataOnce: Check refuses image data that is not base64, in a
// message and in a tool result, naming the block, so the translation, which trusts Check,
// decodes only data that decodes; data with line breaks decodes to its bytes.
func TestConverseChecksImageDataOnce(t *testing.T) {
	image := func(data string) llm.Part { return llm.Part{Kind: llm.PartImage, MediaType: "image/png", Data: data} }
	inMessage := func(img llm.Part) *llm.Request {
		return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "see"}, img}}}}
	}
	inResult := func(img llm.Part) *llm.Request {
		return &llm.Request{Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "look"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolUse, ID: "t1", Name: "shot", Input: `{}`}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartToolResult, ToolUseID: "t1", Content: []llm.Part{{Kind: llm.PartText, Text: "page"}, img}}}},
		}}
	}
	target := providers.Target{Model: "amazon.nova-pro-v1:0"}
	for _, tt := range []struct {
		name  string
		req   *llm.Request
		param string
	}{
		{"no data", inMessage(image("")), "messages[0].content[1]"},
		{"not base64", inMessage(image("aGk*")), "messages[0].content[1]"},
		{"unpadded", inMessage(image("aGk")), "messages[0].content[1]"},
		{"in a tool result", inResult(image("aGVsbA=")), "messages[2].content[0].content[1]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			oe := (&Provider{}).Check(tt.req, target)
			if oe == nil || oe.Status != 400 || oe.Param != tt.param {
				t.Fatalf("Check = %v, want a 400 on %s", oe, tt.param)
			}
		})
	}
	for _, req := range []*llm.Request{inMessage(image("aGVs\r\nbG8=")), inResult(image("aGVs\nbG8="))} {
		if oe := (&Provider{}).Check(req, target); oe != nil {
			t.Fatalf("Check refuses base64 with line breaks: %v", oe)
		}
		c, err := buildConverse(req, target)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for _, m := range c.Messages {
			for _, b := range m.Content {
				switch b := b.(type) {
				case *types.ContentBlockMemberImage:
					got = b.Value.Source.(*types.ImageSourceMemberBytes).Value
				case *types.ContentBlockMemberToolResult:
					for _, rb := range b.Value.Content {
						if img, ok := rb.(*types.ToolResultContentBlockMemberImage); ok {
							got = img.Value.Source.(*types.ImageSourceMemberBytes).Value
						}
					}
				}
			}
		}
		if !bytes.Equal(got, []byte("hello")) {
			t.Errorf("the image went as %q, want %q", got, "hello")
		}
	}
}

package vertex

import (
	"bytes"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// TestGeminiChecksImageDataOnce: Check refuses image data that is not base64, naming the
// block, so imagePart, which trusts Check, decodes only data that decodes; data with line
// breaks decodes to its bytes.
func TestGeminiChecksImageDataOnce(t *testing.T) {
	req := func(data string) *llm.Request {
		return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Kind: llm.PartText, Text: "see"}, {Kind: llm.PartImage, MediaType: "image/png", Data: data}}}}}
	}
	target := providers.Target{Model: "gemini-2.5-flash"}
	for _, data := range []string{"aGk*", "aGk", "aGVsbA=", "aGVsbA==x"} {
		if oe := (&Provider{}).Check(req(data), target); oe == nil || oe.Status != 400 || oe.Param != "messages[0].content[1]" {
			t.Errorf("Check(%q) = %v, want a 400 on messages[0].content[1]", data, oe)
		}
	}
	r := req("aGVs\r\nbG8=")
	if oe := (&Provider{}).Check(r, target); oe != nil {
		t.Fatalf("Check refuses base64 with line breaks: %v", oe)
	}
	if got := imagePart(&r.Messages[0].Parts[1]).GetInlineData().GetData(); !bytes.Equal(got, []byte("hello")) {
		t.Errorf("the image went as %q, want %q", got, "hello")
	}
}

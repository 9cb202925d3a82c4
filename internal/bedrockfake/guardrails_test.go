package bedrockfake

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// png and jpeg are the base64 of the first bytes of each format: what the fake looks at.
var (
	png  = base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n-rest"))
	jpeg = base64.StdEncoding.EncodeToString([]byte("\xff\xd8\xff\xe0-rest"))
)

// The guardrail fake refuses what Bedrock refuses: bad ids and versions, unknown fields,
// a missing or wrong source, empty content, a block without text.
func TestDecodeApply(t *testing.T) {
	for _, tc := range []struct {
		name, id, version, body, want string
	}{
		{"ok", "abc1", "1", `{"source":"INPUT","content":[{"text":{"text":"hi"}}]}`, ""},
		{"arn", "arn:aws:bedrock:us-east-1:123456789012:guardrail/abc1", "DRAFT", `{"source":"OUTPUT","content":[{"text":{"text":"hi","qualifiers":["guard_content"]}}],"outputScope":"FULL"}`, ""},
		{"bad id", "ABC", "1", `{"source":"INPUT","content":[{"text":{"text":"hi"}}]}`, "guardrailIdentifier"},
		{"bad version", "abc1", "0", `{"source":"INPUT","content":[{"text":{"text":"hi"}}]}`, "guardrailVersion"},
		{"not json", "abc1", "1", `nope`, "Start of structure"},
		{"unknown field", "abc1", "1", `{"source":"INPUT","content":[{"text":{"text":"hi"}}],"extra":1}`, "Malformed"},
		{"no source", "abc1", "1", `{"content":[{"text":{"text":"hi"}}]}`, "'source'"},
		{"bad source", "abc1", "1", `{"source":"input","content":[{"text":{"text":"hi"}}]}`, "enum value set"},
		{"no content", "abc1", "1", `{"source":"INPUT","content":[]}`, "'content'"},
		{"no text", "abc1", "1", `{"source":"INPUT","content":[{"text":{}}]}`, "text.text"},
		{"empty block", "abc1", "1", `{"source":"INPUT","content":[{}]}`, "exactly one member"},
		{"an image", "abc1", "1", `{"source":"INPUT","content":[{"text":{"text":"hi"}},{"image":{"format":"png","source":{"bytes":"` + png + `"}}}]}`, ""},
		{"an image alone", "abc1", "1", `{"source":"INPUT","content":[{"image":{"format":"jpeg","source":{"bytes":"` + jpeg + `"}}}]}`, ""},
		{"an image of another format", "abc1", "1", `{"source":"INPUT","content":[{"image":{"format":"gif","source":{"bytes":"` + png + `"}}}]}`, "image.format"},
		{"an image without bytes", "abc1", "1", `{"source":"INPUT","content":[{"image":{"format":"png"}}]}`, "image.source"},
		{"bytes of another format", "abc1", "1", `{"source":"INPUT","content":[{"image":{"format":"png","source":{"bytes":"` + jpeg + `"}}}]}`, "not a valid png image"},
		{"an unknown image field", "abc1", "1", `{"source":"INPUT","content":[{"image":{"format":"png","source":{"bytes":"` + png + `","s3":"x"}}}]}`, "Malformed"},
		{"21 images", "abc1", "1", `{"source":"INPUT","content":[` + strings.TrimSuffix(strings.Repeat(`{"image":{"format":"png","source":{"bytes":"`+png+`"}}},`, 21), ",") + `]}`, "at most 20 images"},
	} {
		_, ex := decodeApply(tc.id, tc.version, []byte(tc.body))
		got := ""
		if ex != nil {
			got = ex.Type + ": " + ex.Message
		}
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Only a SigV4 signature for service bedrock in the fake's region gets through.
func TestGuardrailsSigV4(t *testing.T) {
	g := NewGuardrails(t)
	const good = "AWS4-HMAC-SHA256 Credential=AKID/20261202/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", 403},
		{"Bearer token", 403},
		{strings.Replace(good, "/bedrock/", "/s3/", 1), 403},
		{strings.Replace(good, "us-east-1", "eu-west-1", 1), 403},
		{good, 200},
	} {
		req, _ := http.NewRequest("POST", g.URL()+"/guardrail/"+GuardrailID+"/version/1/apply", strings.NewReader(`{"source":"INPUT","content":[{"text":{"text":"hi"}}]}`))
		req.Header.Set("Authorization", tc.auth)
		req.Header.Set("X-Amz-Date", "20261202T000000Z")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Authorization %q: %d, want %d (%s)", tc.auth, resp.StatusCode, tc.want, resp.Header.Get("X-Amzn-ErrorType"))
		}
	}
	if calls := g.Calls(); len(calls) != 1 || calls[0].Shape != ShapePass {
		t.Errorf("calls %+v, want the signed one only", calls)
	}
}

package openai

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fngate/fngate/core/llm"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", `quote " and \ backslash`, "line\nfeed\r\ttab", "\x00\x1f\x7f", "héllo wörld", "emoji 🎉", "\u2028\u2029", "bad \xff utf8", "<html>&amp;"}
	for _, s := range inputs {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encoded to invalid JSON %s: %v", s, got, err)
		}
		want := s
		if !utf8.ValidString(s) {
			want = strings.ToValidUTF8(s, "\ufffd")
		}
		if back != want {
			t.Errorf("%q round-tripped to %q", s, back)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff\xfe", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var back string
		if err := json.Unmarshal(AppendString(nil, s), &back); err != nil {
			t.Fatalf("invalid JSON for %q: %v", s, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("%q round-tripped to %q", s, back)
		}
	})
}

// Every chunk the encoder writes must be valid JSON in the shape OpenAI clients parse.
func TestChunkEncoder(t *testing.T) {
	e := NewChatChunkEncoder("chatcmpl-1", 1700000000, "gw/\"model\"", true)
	deltas := []struct {
		d     llm.Delta
		first bool
		want  string
	}{
		{llm.Delta{Text: "hi"}, true, `{"role":"assistant","content":"hi"}`},
		{llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "c1", Name: "f", Arguments: ""}}}, true, `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}`},
		{llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: 1, Arguments: `{"a`}}}, false, `{"tool_calls":[{"index":1,"function":{"arguments":"{\"a"}}]}`},
		{llm.Delta{Stop: llm.StopEnd}, false, `{}`},
		{llm.Delta{Refusal: "no"}, false, `{"refusal":"no"}`},
		{llm.Delta{Stop: llm.StopEnd}, true, `{"role":"assistant","content":""}`},
	}
	for _, tc := range deltas {
		b := e.AppendDelta(nil, &tc.d, tc.first)
		s := string(b)
		if !strings.HasPrefix(s, "data: ") || !strings.HasSuffix(s, "}\n\n") {
			t.Fatalf("not an SSE event: %q", s)
		}
		var c struct {
			ID      string          `json:"id"`
			Object  string          `json:"object"`
			Model   string          `json:"model"`
			Usage   json.RawMessage `json:"usage"`
			Choices []struct {
				Delta        json.RawMessage `json:"delta"`
				FinishReason *string         `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(s[6:])), &c); err != nil {
			t.Fatalf("invalid chunk %s: %v", s, err)
		}
		if c.ID != "chatcmpl-1" || c.Object != "chat.completion.chunk" || c.Model != `gw/"model"` || string(c.Usage) != "null" {
			t.Errorf("chunk envelope %s", s)
		}
		if string(c.Choices[0].Delta) != tc.want {
			t.Errorf("delta %s, want %s", c.Choices[0].Delta, tc.want)
		}
		if (c.Choices[0].FinishReason != nil) != (tc.d.Stop != "") {
			t.Errorf("finish_reason %v for %+v", c.Choices[0].FinishReason, tc.d)
		}
	}
	u := &llm.Usage{InputTokens: llm.Int(3), OutputTokens: llm.Int(4)}
	b := e.AppendUsage(nil, u.WithTotal())
	if want := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gw/\"model\"","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}` + "\n\n"; string(b) != want {
		t.Errorf("usage chunk\n%s\nwant\n%s", b, want)
	}
}

func TestErrorJSON(t *testing.T) {
	b := AppendError(nil, &llm.Error{Status: 400, Type: llm.TypeInvalidRequest, Message: `bad "x"`, Param: "x"})
	if string(b) != `{"error":{"message":"bad \"x\"","type":"invalid_request_error","param":"x","code":null}}` {
		t.Errorf("%s", b)
	}
}

func TestUsageMerge(t *testing.T) {
	u := llm.Usage{}
	u.Merge(&llm.Usage{InputTokens: llm.Int(10), CacheReadTokens: llm.Int(2)})
	u.Merge(&llm.Usage{OutputTokens: llm.Int(5)})
	u.Merge(nil)
	got := string(AppendUsage(nil, u.WithTotal()))
	if got != `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":2}}` {
		t.Errorf("%s", got)
	}
}

// FuzzDecodeChat: no input may panic the decoder or validator, and whatever they accept must
// satisfy the invariants the providers rely on.
func FuzzDecodeChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"1","content":"x"}]}`,
		`{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}},"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"top_p":1}`,
		`{"model":1}`, `[]`, `{`, `{"model":"m","messages":[],"metadata":{"a":"b"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, oe := DecodeChat(body, llm.Limits{})
		if oe != nil {
			if oe.Status != 400 || oe.Message == "" {
				t.Fatalf("bad refusal %+v", oe)
			}
			return
		}
		if req.Model == "" || len(req.Messages) == 0 {
			t.Fatalf("accepted an incomplete request: %s", body)
		}
		for _, m := range req.Messages {
			if m.Role != RoleAssistant && m.Content == nil {
				t.Fatalf("accepted a %s message without content: %s", m.Role, body)
			}
		}
	})
}

package bedrockfake

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The fake is only useful if it refuses what Bedrock refuses.
func TestValidate(t *testing.T) {
	const tools = `"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]}`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"ok", `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`, ""},
		{"tool round trip", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"json":{"a":1}}]}},{"text":"more"}]}],` + tools + `}`, ""},
		{"empty", `{"messages":[]}`, "must start with a user message"},
		{"assistant first", `{"messages":[{"role":"assistant","content":[{"text":"hi"}]}]}`, "must start with a user message"},
		{"no alternation", `{"messages":[{"role":"user","content":[{"text":"a"}]},{"role":"user","content":[{"text":"b"}]}]}`, "must alternate"},
		{"blank text", `{"messages":[{"role":"user","content":[{"text":" \n"}]}]}`, "is blank"},
		{"blank system", `{"system":[{"text":""}],"messages":[{"role":"user","content":[{"text":"a"}]}]}`, "is blank"},
		{"no toolConfig", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}]}`, "toolConfig field must be defined"},
		{"bad tool id", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"call.1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"call.1","content":[{"text":"r"}]}}]}],` + tools + `}`, "toolUseId"},
		{"orphan result", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t2","content":[{"text":"r"}]}}]}],` + tools + `}`, "did not use"},
		{"unanswered call", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"text":"r"}]}],` + tools + `}`, "need a toolResult"},
		{"blank tool result", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":""}]}}]}],` + tools + `}`, "is blank"},
		{"input not object", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":"{}"}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"r"}]}}]}],` + tools + `}`, "JSON object"},
		{"blank description", `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"f","description":" ","inputSchema":{"json":{}}}}]}}`, "description"},
		{"choice names unknown tool", `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{}}}}],"toolChoice":{"tool":{"name":"g"}}}}`, "not in toolConfig.tools"},
		{"temperature", `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"temperature":1.5}}`, "temperature"},
		{"unknown field", `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"topK":3}`, "Malformed"},
	} {
		got := Validate([]byte(tc.body))
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: Validate = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSplitKeepsCharacters(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		s := "a世界👋é"
		parts := split(s, n)
		if strings.Join(parts, "") != s {
			t.Fatalf("split(%d) lost bytes: %q", n, parts)
		}
		for _, p := range parts {
			if !utf8.ValidString(p) {
				t.Errorf("split(%d) cut a character: %q", n, parts)
			}
		}
	}
}

package bedrockfake

import (
	"encoding/base64"
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

// Converse blocks the Messages door brings: images, cache points, a tool result's status.
func TestValidateConverseExtras(t *testing.T) {
	const img = `{"image":{"format":"png","source":{"bytes":"aGk="}}}`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"image and cache point", `{"system":[{"text":"s"},{"cachePoint":{"type":"default","ttl":"1h"}}],"messages":[{"role":"user","content":[{"text":"hi"},` + img + `,{"cachePoint":{"type":"default"}}]}]}`, ""},
		{"image format", `{"messages":[{"role":"user","content":[{"image":{"format":"bmp","source":{"bytes":"aGk="}}}]}]}`, "format"},
		{"image in assistant", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[` + img + `]}]}`, "only allowed in user"},
		{"cache point first", `{"messages":[{"role":"user","content":[{"cachePoint":{"type":"default"}},{"text":"hi"}]}]}`, "must follow"},
		{"cache point type", `{"messages":[{"role":"user","content":[{"text":"hi"},{"cachePoint":{"type":"ephemeral"}}]}]}`, "enum"},
		{"five cache points", `{"system":[{"text":"a"},{"cachePoint":{"type":"default"}},{"text":"b"},{"cachePoint":{"type":"default"}},{"text":"c"},{"cachePoint":{"type":"default"}}],"messages":[{"role":"user","content":[{"text":"hi"},{"cachePoint":{"type":"default"}},{"text":"x"},{"cachePoint":{"type":"default"}}]}]}`, "maximum of 4"},
		{"status", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"t1","status":"failed","content":[{"text":"r"}]}}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{}}}}]}}`, "status"},
		{"additional fields", `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"additionalModelRequestFields":[1]}`, "additionalModelRequestFields"},
	} {
		got := Validate([]byte(tc.body))
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: Validate = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// InvokeModel takes Bedrock's Anthropic body: the fake refuses what Bedrock refuses of it.
func TestValidateInvoke(t *testing.T) {
	const msgs = `"max_tokens":10,"messages":[{"role":"user","content":"hi"}]`
	const v = `"anthropic_version":"bedrock-2023-05-31",`
	for _, tc := range []struct {
		name, body string
		betas      []string
		want       string
	}{
		{"ok", `{` + v + msgs + `}`, nil, ""},
		{"model", `{` + v + `"model":"claude",` + msgs + `}`, nil, "extraneous key [model]"},
		{"stream", `{` + v + `"stream":true,` + msgs + `}`, nil, "extraneous key [stream]"},
		{"service tier", `{` + v + `"service_tier":"auto",` + msgs + `}`, nil, "extraneous key [service_tier]"},
		{"no version", `{` + msgs + `}`, nil, "required key [anthropic_version]"},
		{"direct version", `{"anthropic_version":"2023-06-01",` + msgs + `}`, nil, "bedrock-2023-05-31"},
		{"betas not a list", `{` + v + `"anthropic_beta":"a,b",` + msgs + `}`, nil, "anthropic_beta"},
		{"unknown beta", `{` + v + `"anthropic_beta":["a","b"],` + msgs + `}`, []string{"a"}, "invalid beta flag"},
		{"known betas", `{` + v + `"anthropic_beta":["a"],` + msgs + `}`, []string{"a"}, ""},
		{"metadata", `{` + v + `"metadata":{"user_id":"u","tags":["x"]},` + msgs + `}`, nil, "metadata.tags"},
		{"no max_tokens", `{` + v + `"messages":[{"role":"user","content":"hi"}]}`, nil, "max_tokens"},
		{"system role", `{` + v + `"max_tokens":10,"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`, nil, "system"},
		{"claude code shape", `{` + v + `"max_tokens":10,"thinking":{"type":"adaptive"},"context_management":{"edits":[]},"output_config":{"effort":"high"},
			"tools":[{"name":"Read","input_schema":{"type":"object"},"defer_loading":true},{"type":"web_search_20250305","name":"web_search"}],
			"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":true}]}]}`, nil, ""},
		{"only server tools", `{` + v + `"tools":[{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"auto"},` + msgs + `}`, nil, ""},
		{"image url", `{` + v + `"max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}`, nil, "not supported on Amazon Bedrock"},
		{"thinking without signature", `{` + v + `"max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t"}]}]}`, nil, "signature"},
		{"unanswered tool use", `{` + v + `"max_tokens":10,"tools":[{"name":"f","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":"next"}]}`, nil, "tool_result"},
	} {
		got := ValidateInvoke([]byte(tc.body), tc.betas)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: ValidateInvoke = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestValidateCount(t *testing.T) {
	inner := `{"anthropic_version":"bedrock-2023-05-31","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	b64 := base64.StdEncoding.EncodeToString([]byte(inner))
	for _, tc := range []struct {
		name, body, want string
	}{
		{"invoke form", `{"input":{"invokeModel":{"body":"` + b64 + `"}}}`, ""},
		{"invoke form, bad body", `{"input":{"invokeModel":{"body":"` + base64.StdEncoding.EncodeToString([]byte(`{"max_tokens":1}`)) + `"}}}`, "anthropic_version"},
		{"converse form", `{"input":{"converse":{"messages":[{"role":"user","content":[{"text":"hi"}]}]}}}`, ""},
		{"converse form, inference config", `{"input":{"converse":{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{}}}}`, "extraneous"},
		{"both", `{"input":{"converse":{},"invokeModel":{}}}`, "exactly one"},
	} {
		got := ValidateCount([]byte(tc.body), nil)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: ValidateCount = %q, want %q", tc.name, got, tc.want)
		}
	}
}

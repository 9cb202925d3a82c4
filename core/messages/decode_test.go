package messages

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

func headers(kv ...string) http.Header {
	h := http.Header{}
	h.Set("Anthropic-Version", "2023-06-01")
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
			continue
		}
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestDecodeRefusesWhatAnthropicRefuses(t *testing.T) {
	const hi = `"model":"m","max_tokens":10,`
	cases := []struct {
		name, body string
		h          http.Header
		param      string
		msg        string
	}{
		{"empty body", ``, nil, "", "empty"},
		{"not JSON", `{"model":`, nil, "", "not valid JSON"},
		{"array body", `[1]`, nil, "", "JSON object"},
		{"no version header", `{` + hi + `"messages":[{"role":"user","content":"x"}]}`, headers("Anthropic-Version", ""), "anthropic-version", "required"},
		{"unknown version", `{` + hi + `"messages":[{"role":"user","content":"x"}]}`, headers("Anthropic-Version", "2099-01-01"), "anthropic-version", "invalid version"},
		{"unknown field", `{` + hi + `"messages":[{"role":"user","content":"x"}],"foo":1}`, nil, "foo", "Extra inputs are not permitted"},
		{"field in another case", `{` + hi + `"messages":[{"role":"user","content":"x"}],"MODEL":"m"}`, nil, "MODEL", "Extra inputs"},
		{"repeated key", `{` + hi + `"messages":[{"role":"user","content":"x"}],"model":"n"}`, nil, "model", "more than once"},
		{"repeated key in a block", `{` + hi + `"messages":[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]}`, nil, "text", "more than once"},
		{"no model", `{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, nil, "model", "Field required"},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, nil, "max_tokens", "Field required"},
		{"zero max_tokens", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, nil, "max_tokens", "greater than or equal to 1"},
		{"max_tokens not an integer", `{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"x"}]}`, nil, "max_tokens", "valid integer"},
		{"no messages", `{` + hi[:len(hi)-1] + `}`, nil, "messages", "Field required"},
		{"temperature above 1", `{` + hi + `"temperature":1.5,"messages":[{"role":"user","content":"x"}]}`, nil, "temperature", "less than or equal to 1"},
		{"top_p negative", `{` + hi + `"top_p":-0.1,"messages":[{"role":"user","content":"x"}]}`, nil, "top_p", "greater than or equal to 0"},
		{"bad role", `{` + hi + `"messages":[{"role":"tool","content":"x"}]}`, nil, "messages.0.role", "'user', 'assistant' or 'system'"},
		{"empty user content", `{` + hi + `"messages":[{"role":"user","content":""}]}`, nil, "messages.0.content", "non-empty content"},
		{"block without type", `{` + hi + `"messages":[{"role":"user","content":[{"text":"x"}]}]}`, nil, "messages.0.content.0.type", "Field required"},
		{"text without text", `{` + hi + `"messages":[{"role":"user","content":[{"type":"text"}]}]}`, nil, "messages.0.content.0.text", "Field required"},
		{"tool_use in a user message", `{` + hi + `"messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}]}`, nil, "messages.0.content.0.type", "not allowed in a user message"},
		{"tool_result without its call", `{` + hi + `"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]}]}`, nil, "messages.0.content.0", "corresponding `tool_use`"},
		{"tool call left unanswered", `{` + hi + `"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},{"role":"user","content":"y"}]}`, nil, "messages.1", "without `tool_result`"},
		{"tool input not an object", `{` + hi + `"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":"{}"}]}]}`, nil, "messages.1.content.0.input", "valid dictionary"},
		{"image media type", `{` + hi + `"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AA=="}}]}]}`, nil, "messages.0.content.0.source.media_type", "image/jpeg"},
		{"tool without schema", `{` + hi + `"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f"}]}`, nil, "tools.0.input_schema", "Field required"},
		{"tool name pattern", `{` + hi + `"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a b","input_schema":{"type":"object"}}]}`, nil, "tools.0.name", "pattern"},
		{"duplicate tool", `{` + hi + `"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{}},{"name":"f","input_schema":{}}]}`, nil, "tools.1.name", "unique"},
		{"tool_choice without tools", `{` + hi + `"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"any"}}`, nil, "tool_choice", "providing tools"},
		{"tool_choice names another tool", `{` + hi + `"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"g"}}`, nil, "tool_choice.name", "not one of the tools"},
		{"tool_choice type", `{` + hi + `"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"required"}}`, nil, "tool_choice.type", "'auto', 'any', 'tool' or 'none'"},
		{"thinking budget too small", `{` + hi + `"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":100}}`, nil, "thinking.budget_tokens", "1024"},
		{"thinking budget at max_tokens", `{"model":"m","max_tokens":2000,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":2000}}`, nil, "thinking.budget_tokens", "less than max_tokens"},
		{"metadata member", `{` + hi + `"messages":[{"role":"user","content":"x"}],"metadata":{"user":"x"}}`, nil, "metadata.user", "Extra inputs"},
		{"blank stop sequence", `{` + hi + `"messages":[{"role":"user","content":"x"}],"stop_sequences":[" "]}`, nil, "stop_sequences.0", "non-whitespace"},
		{"too deep", `{` + hi + `"messages":[{"role":"user","content":"x"}],"container":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, nil, "", "deeper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			if h == nil {
				h = headers()
			}
			_, e := Decode([]byte(tc.body), h, llm.Limits{})
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Status != http.StatusBadRequest || e.Param != tc.param || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("got %d param %q %q; want 400 param %q with %q", e.Status, e.Param, e.Message, tc.param, tc.msg)
			}
		})
	}
}

func TestDecodeKeepsWhatOnlyAnthropicHonours(t *testing.T) {
	body := `{"model":"claude","max_tokens":1000,"stream":true,
	  "system":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}],
	  "messages":[
	    {"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}},
	                              {"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"}}]},
	    {"role":"system","content":"late instructions"},
	    {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"ok","citations":[]},
	                                   {"type":"tool_use","id":"toolu_1","name":"f","input":{ "a" : 1 }}]},
	    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r"}],"is_error":true}]}],
	  "tools":[{"name":"f","input_schema":{"type":"object"},"defer_loading":true},{"type":"web_search_20250305","name":"web_search","max_uses":3}],
	  "tool_choice":{"type":"auto","disable_parallel_tool_use":true},
	  "thinking":{"type":"adaptive","display":"updates"},
	  "context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},
	  "output_config":{"effort":"high"},
	  "metadata":{"user_id":"u1"}}`
	h := headers("Anthropic-Beta", "a-1, b-2", "X-Claude-Code-Session-Id", "s1")
	h.Add("Anthropic-Beta", "c-3,a-1")
	req, e := Decode([]byte(body), h, llm.Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if !req.Stream || *req.MaxTokens != 1000 || req.LateSystem != llm.LateSystemHoist || req.Session != "s1" || req.User != "u1" {
		t.Errorf("scalars: %+v", req)
	}
	if got := strings.Join(req.Anthropic.Betas, ","); got != "a-1,b-2,c-3" {
		t.Errorf("betas %q", got)
	}
	if len(req.System) != 2 || string(req.System[1].CacheControl) != `{"type":"ephemeral"}` {
		t.Errorf("system %+v", req.System)
	}
	u := req.Messages[0].Parts
	if u[0].Kind != llm.PartText || string(u[0].CacheControl) != `{"type":"ephemeral","ttl":"1h"}` || u[1].Kind != llm.PartRaw || u[1].Name != "document" {
		t.Errorf("user parts %+v", u)
	}
	if req.Messages[1].Role != llm.RoleSystem || req.Messages[1].Text() != "late instructions" {
		t.Errorf("system message %+v", req.Messages[1])
	}
	a := req.Messages[2].Parts
	if a[0].Kind != llm.PartThinking || a[0].Signature != "sig" || a[1].Raw == nil || a[2].Input != `{"a":1}` {
		t.Errorf("assistant parts %+v", a)
	}
	r := req.Messages[3].Parts[0]
	if r.Kind != llm.PartToolResult || !r.IsError || len(r.Content) != 1 || r.Content[0].Text != "r" {
		t.Errorf("tool result %+v", r)
	}
	if !req.Tools[0].DeferLoading || req.Tools[0].Raw != nil || req.Tools[1].Raw == nil || req.Tools[1].Name != "web_search" {
		t.Errorf("tools %+v", req.Tools)
	}
	if req.ToolChoice.Mode != llm.ToolChoiceAuto || !req.ToolChoice.DisableParallel {
		t.Errorf("tool choice %+v", req.ToolChoice)
	}
	if req.Thinking.Type != llm.ThinkingAdaptive || req.Thinking.Display != "updates" {
		t.Errorf("thinking %+v", req.Thinking)
	}
	if string(req.Anthropic.Field("output_config")) != `{"effort":"high"}` || req.Anthropic.Field("context_management") == nil {
		t.Errorf("fields %+v", req.Anthropic.Fields)
	}
}

// sharedDir finds ../shared beside the module root, or skips: a user's clone has none.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	shared := filepath.Join(filepath.Dir(dir), "shared")
	if _, err := os.Stat(filepath.Join(shared, "captures")); err != nil {
		t.Skip("../shared/captures is not beside the module: recorded client traffic is not replayed")
	}
	return shared
}

type recorded struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// TestDecodeAcceptsEverythingClaudeCodeSends replays every request Claude Code made in the
// recordings: a refusal here is Claude Code retrying with fewer betas and then failing.
func TestDecodeAcceptsEverythingClaudeCodeSends(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "captures", "agent-clients")
	files, _ := filepath.Glob(filepath.Join(dir, "claude-code-*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no Claude Code recordings")
	}
	n := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 16<<20)
		for line := 1; sc.Scan(); line++ {
			var r recorded
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s:%d: %v", f, line, err)
			}
			if r.Method != http.MethodPost {
				continue
			}
			h := http.Header{}
			for k, v := range r.Headers {
				h.Set(k, v)
			}
			decodeFn := Decode
			if strings.HasPrefix(r.URL, "/v1/messages/count_tokens") {
				decodeFn = DecodeCountTokens
			}
			req, e := decodeFn(r.Body, h, llm.Limits{})
			if e != nil {
				t.Errorf("%s:%d %s: refused: %v", filepath.Base(f), line, r.URL, e)
				continue
			}
			if req.Model == "" || len(req.Messages) == 0 {
				t.Errorf("%s:%d: decoded nothing", filepath.Base(f), line)
			}
			n++
		}
		fh.Close()
	}
	if n == 0 {
		t.Fatal("no requests replayed")
	}
}

// A Files API image is Anthropic's to resolve: the whole block is kept for Anthropic-wire
// routes (which would otherwise get its source object as a content block).
func TestDecodeKeepsAFilesAPIImageWhole(t *testing.T) {
	block := `{"type":"image","source":{"type":"file","file_id":"file_011"},"cache_control":{"type":"ephemeral"}}`
	req, e := Decode([]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[`+block+`]}]}`), headers(), llm.Limits{})
	if e != nil {
		t.Fatal(e)
	}
	p := req.Messages[0].Parts[0]
	if p.Kind != llm.PartImage || string(p.Raw) != block {
		t.Errorf("part %+v, raw %s", p, p.Raw)
	}
}

package vertex

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/core/providers"
)

// TestCheckMessagesDoor: what each family refuses of a Messages door request, naming the
// field, and the documented approximations it accepts instead (cache_control, adaptive
// thinking, defer_loading, earlier thinking, betas).
func TestCheckMessagesDoor(t *testing.T) {
	const (
		gemini = "gemini-2.5-flash"
		claude = "claude-sonnet-4-5@20250929"
		maas   = "meta/llama-4-maverick-17b-128e-instruct-maas"
	)
	user := func(content string) string {
		return `{"model":"gw","max_tokens":100,"messages":[{"role":"user","content":` + content + `}]`
	}
	withTools := func(tools string) string { return user(`"hi"`) + `,"tools":` + tools + `}` }
	toolTurn := `{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},`
	fTool := `[{"name":"f","input_schema":{"type":"object"}}]`
	png := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`
	for _, tt := range []struct {
		name, model, body string
		param             string // "" when the route serves the request
	}{
		{"gemini: server tool", gemini, withTools(`[{"type":"web_search_20250305","name":"web_search"}]`), "tools[0]"},
		{"gemini: document", gemini, user(`[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"}}]`) + `}`, "messages[0].content[0]"},
		{"gemini: citations on text", gemini, user(`[{"type":"text","text":"x","citations":[]}]`) + `}`, "messages[0].content[0]"},
		{"gemini: image by URL", gemini, user(`[{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}},{"type":"text","text":"?"}]`) + `}`, "messages[0].content[0]"},
		{"gemini: GIF", gemini, user(`[{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGOD"}}]`) + `}`, "messages[0].content[0]"},
		{"gemini: image in a tool result", gemini, `{"model":"gw","max_tokens":100,"tools":` + fTool + `,"messages":[` + toolTurn + `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[` + png + `]}]}]}`, "messages[2].content[0].content"},
		{"gemini: strict tool", gemini, withTools(`[{"name":"f","strict":true,"input_schema":{"type":"object"}}]`), "tools[0].function.strict"},
		{"gemini: long function name", gemini, withTools(`[{"name":"` + strings.Repeat("f", 65) + `","input_schema":{"type":"object"}}]`), "tools[0].function.name"},
		{"gemini: one call per turn", gemini, user(`"hi"`) + `,"tools":` + fTool + `,"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`, "tool_choice.disable_parallel_tool_use"},
		{"gemini: six stop sequences", gemini, user(`"hi"`) + `,"stop_sequences":["a","b","c","d","e","f"]}`, "stop_sequences"},
		{"gemini: service_tier", gemini, user(`"hi"`) + `,"service_tier":"auto"}`, "service_tier"},
		{"gemini: context editing", gemini, user(`"hi"`) + `,"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`, "context_management"},
		{"gemini: per-turn setting", gemini, `{"model":"gw","max_tokens":100,"messages":[{"role":"user","content":"hi","output_config":{"effort":"low"}}]}`, "messages[0].output_config"},
		{"gemini: a turn of thinking only", gemini, `{"model":"gw","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"}]},{"role":"user","content":"again"}]}`, "messages[1].content"},
		{"gemini: approximations", gemini, `{"model":"gw","max_tokens":2000,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],` +
			`"thinking":{"type":"adaptive"},"output_config":{"effort":"max"},"context_management":{"edits":[{"type":"clear_thinking_20251015"}]},` +
			`"tools":[{"name":"f","input_schema":{"type":"object"},"defer_loading":true,"cache_control":{"type":"ephemeral"}}],` +
			`"messages":[{"role":"user","content":[` + png + `,{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"r"},{"type":"text","text":"ok"}]},` +
			`{"role":"system","content":"late"},{"role":"user","content":"more"}]}`, ""},

		{"claude: Files API image", claude, user(`[{"type":"image","source":{"type":"file","file_id":"file_1"}}]`) + `}`, "messages[0].content[0]"},
		{"claude: container upload", claude, user(`[{"type":"container_upload","file_id":"file_1"},{"type":"text","text":"run it"}]`) + `}`, "messages[0].content[0]"},
		{"claude: Files API document in a tool result", claude, `{"model":"gw","max_tokens":100,"tools":` + fTool + `,"messages":[` + toolTurn + `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}]}`, "messages[2].content[0].content[0]"},
		{"claude: what Claude carries", claude, `{"model":"gw","max_tokens":100,"tools":[{"type":"web_search_20250305","name":"web_search"}],"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},` +
			`"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"}},{"type":"text","text":"hi"}]},{"role":"system","content":"late"},{"role":"user","content":"more"}]}`, ""},

		{"maas: top_k", maas, user(`"hi"`) + `,"top_k":5}`, "top_k"},
		{"maas: thinking budget", maas, `{"model":"gw","max_tokens":5000,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":1024}}`, "thinking"},
		{"maas: effort", maas, user(`"hi"`) + `,"output_config":{"effort":"low"}}`, "output_config.effort"},
		{"maas: image by URL", maas, user(`[{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]`) + `}`, "messages[0].content[0]"},
		{"maas: named tool_choice", maas, user(`"hi"`) + `,"tools":` + fTool + `,"tool_choice":{"type":"tool","name":"f"}}`, "tool_choice"},
		{"maas: one call per turn", maas, user(`"hi"`) + `,"tools":` + fTool + `,"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`, "tool_choice.disable_parallel_tool_use"},
		{"maas: approximations", maas, `{"model":"gw","max_tokens":100,"thinking":{"type":"adaptive"},"tools":[{"name":"f","input_schema":{"type":"object"},"defer_loading":true}],` +
			`"messages":[{"role":"user","content":[` + png + `,{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Provider{project: "p", location: "l"}
			oe := p.Check(anthropicMessages(t, tt.body, "interleaved-thinking-2025-05-14"), providers.Target{Model: tt.model})
			switch {
			case tt.param == "" && oe != nil:
				t.Fatalf("refused: %v", oe)
			case tt.param != "" && (oe == nil || oe.Status != 400 || oe.Param != tt.param):
				t.Fatalf("got %v, want a 400 naming %s", oe, tt.param)
			}
		})
	}
}

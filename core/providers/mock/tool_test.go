package mock

import (
	"context"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// TestNamedTool: tool:NAME calls the tool of that name, else the one whose name ends with it
// (the prefixed names clients give MCP tools), with the route's arguments or {}; whole and
// streamed alike. When nothing matches it answers with what was offered.
func TestNamedTool(t *testing.T) {
	offer := func(names ...string) []llm.Tool {
		var ts []llm.Tool
		for _, n := range names {
			tool := llm.Tool{Name: n, Parameters: []byte(`{"type":"object"}`)}
			if n == "web_search" {
				tool.Raw = []byte(`{"type":"web_search_20250305","name":"web_search"}`)
			}
			if strings.HasPrefix(n, "deferred_") {
				tool.DeferLoading = true
			}
			ts = append(ts, tool)
		}
		return ts
	}
	none := &llm.ToolChoice{Mode: llm.ToolChoiceNone}
	cases := []struct {
		name   string
		model  string
		tools  []llm.Tool
		choice *llm.ToolChoice
		call   string // the tool called, "" when the answer is text
		args   string
		text   string // the answer's text when no tool is called
	}{
		{"exact", "tool:echo", offer("Read", "echo"), nil, "echo", "{}", ""},
		{"arguments", `tool:echo:{"text":"hi"}`, offer("echo"), nil, "echo", `{"text":"hi"}`, ""},
		{"arguments with colons", `tool:echo:{"url":"http://x:1"}`, offer("echo"), nil, "echo", `{"url":"http://x:1"}`, ""},
		{"Claude Code's MCP prefix", `tool:gh__echo:{"text":"hi"}`, offer("Read", "mcp__fngate__gh__echo"), nil, "mcp__fngate__gh__echo", `{"text":"hi"}`, ""},
		{"exact before an earlier suffix match", "tool:echo", offer("mcp__a__echo", "echo"), nil, "echo", "{}", ""},
		{"several suffix matches: the first offered", "tool:echo", offer("mcp__a__echo", "mcp__b__echo"), nil, "mcp__a__echo", "{}", ""},
		{"a server tool is not called", "tool:web_search", offer("web_search"), nil, "", "",
			"No tool named web_search was offered. Offered: none."},
		{"a deferred tool is not called", "tool:echo", offer("deferred_echo"), nil, "", "",
			"The tool deferred_echo is offered with defer_loading, not loaded yet."},
		{"a loaded match before a deferred one", "tool:echo", offer("deferred_echo", "mcp__a__echo"), nil, "mcp__a__echo", "{}", ""},
		{"no match", "tool:echo", offer("Read", "Write"), nil, "", "", "No tool named echo was offered. Offered: Read, Write."},
		{"no tools", "tool:echo", nil, nil, "", "", "No tool named echo was offered. Offered: none."},
		{"tool_choice none", "tool:echo", offer("echo"), none, "", "", "No tool to call: tool_choice is none."},
	}
	p := &Provider{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := providers.Target{Model: tc.model}
			if err := p.CheckRoute(target); err != nil {
				t.Fatal(err)
			}
			req := &llm.Request{Tools: tc.tools, ToolChoice: tc.choice,
				Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "go"}}}}}
			a, err := p.Generate(context.Background(), req, target)
			if err != nil {
				t.Fatal(err)
			}
			text, _ := a.Text()
			var calls []llm.Part
			for _, part := range a.Parts {
				if part.Kind == llm.PartToolUse {
					calls = append(calls, part)
				}
			}
			switch {
			case tc.call == "" && (len(calls) != 0 || text != tc.text || a.Stop != llm.StopEnd):
				t.Errorf("answer %q %v %s, want the text %q", text, calls, a.Stop, tc.text)
			case tc.call != "" && (len(calls) != 1 || calls[0].Name != tc.call || calls[0].Input != tc.args || a.Stop != llm.StopToolUse):
				t.Errorf("answer %q %v %s, want a call of %s with %s", text, calls, a.Stop, tc.call, tc.args)
			}

			st, err := p.Stream(context.Background(), req, target)
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			var deltas []llm.ToolCallDelta
			for {
				d, err := st.Next()
				if err != nil {
					break
				}
				streamed.WriteString(d.Text)
				deltas = append(deltas, d.ToolCalls...)
			}
			if tc.call == "" && (streamed.String() != tc.text || len(deltas) != 0) ||
				tc.call != "" && (len(deltas) != 1 || deltas[0].Name != tc.call || deltas[0].Arguments != tc.args) {
				t.Errorf("stream %q %+v, want the whole answer's", streamed.String(), deltas)
			}
		})
	}
}

// TestNamedToolAnswersWithTheResult: once the tool's result comes back, tool:NAME answers
// with its text, whether the client sent it as a string or as blocks, so a test can hold
// the upstream's answer to the one that reached the model.
func TestNamedToolAnswersWithTheResult(t *testing.T) {
	call := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolUse, ID: "call_mock_0", Name: "mcp__gh__echo", Input: "{}"}}}
	for _, tc := range []struct {
		name   string
		result llm.Part
	}{
		{"string", llm.Part{Kind: llm.PartToolResult, ToolUseID: "call_mock_0", Text: "UPSTREAM-SAYS-HI"}},
		{"blocks", llm.Part{Kind: llm.PartToolResult, ToolUseID: "call_mock_0",
			Content: []llm.Part{{Kind: llm.PartText, Text: "Output:"}, {Kind: llm.PartText, Text: "UPSTREAM-SAYS-HI"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &llm.Request{
				Tools: []llm.Tool{{Name: "mcp__gh__echo"}},
				Messages: []llm.Message{
					{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: "go"}}},
					call,
					{Role: llm.RoleUser, Parts: []llm.Part{tc.result}},
				},
			}
			a, err := (&Provider{}).Generate(context.Background(), req, providers.Target{Model: `tool:echo:{"text":"hi"}`})
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := a.Text(); !strings.HasPrefix(text, "The tool returned:") || !strings.Contains(text, "UPSTREAM-SAYS-HI") || a.Stop != llm.StopEnd {
				t.Errorf("answer %q %s, want the result's text", text, a.Stop)
			}
		})
	}
}

// TestNamedToolRouteModels: a route model the mock cannot call stops the start, with the
// syntax in the error.
func TestNamedToolRouteModels(t *testing.T) {
	for _, tc := range []struct {
		model, err string
	}{
		{"tool", "needs a tool name"},
		{"tool:", "needs a tool name"},
		{"tool:a b", "needs a tool name"},
		{"tool:echo:", "must be a JSON object"},
		{"tool:echo:[1]", "must be a JSON object"},
		{`tool:echo:{"a":`, "must be a JSON object"},
		{"tool:echo", ""},
		{`tool:gh__echo:{"text":"hi"}`, ""},
	} {
		t.Run(tc.model, func(t *testing.T) {
			err := (&Provider{}).CheckRoute(providers.Target{Model: tc.model})
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("CheckRoute: %v, want %q", err, tc.err)
			}
		})
	}
}

package anthropicfake

import (
	"encoding/json"
	"strconv"

	"github.com/fngate/fngate/core/providers/mock"
)

// Model is a Server.Script that answers like a model would, from the request alone, so real
// SDKs can drive whole conversations through the fake: with output_config.format, the JSON
// of a value its schema accepts; with a tool to call (tool_choice tool names it; any, or
// auto before any tool result, takes the last tool after a tool result and the first
// before), a tool_use of it with input built from its schema; otherwise a text echoing the
// last user text or tool result.
func Model(r *Request) Reply {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = r.Field("messages", &msgs)
	last, afterTool := "", false
	if n := len(msgs); n > 0 {
		last, afterTool = lastText(msgs[n-1].Content)
	}
	var tools []struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"input_schema"`
	}
	_ = r.Field("tools", &tools)
	var choice struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	_ = r.Field("tool_choice", &choice)
	call := -1
	switch {
	case len(tools) == 0 || choice.Type == "none":
	case choice.Type == "tool":
		for i := range tools {
			if tools[i].Name == choice.Name {
				call = i
			}
		}
	case choice.Type == "any" && afterTool:
		call = len(tools) - 1
	case !afterTool:
		call = 0
	}
	usage := Usage{Input: 7, Output: 3}
	if call >= 0 {
		t := tools[call]
		return Reply{Answer: &Answer{Blocks: []Block{ToolUse("toolu_fake_"+strconv.Itoa(len(msgs)), t.Name, mock.SchemaJSON(t.Schema, last))},
			StopReason: "tool_use", Usage: usage}}
	}
	text := "You said: " + last
	if afterTool {
		text = "The tool returned: " + last
	}
	var oc struct {
		Format *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	}
	if _ = r.Field("output_config", &oc); oc.Format != nil {
		text = mock.SchemaJSON(oc.Format.Schema, text)
	}
	return Reply{Answer: &Answer{Blocks: []Block{Text(text)}, Usage: usage}}
}

// lastText is a message's text, or its tool results' text (afterTool).
func lastText(content json.RawMessage) (text string, afterTool bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, false
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(content, &blocks)
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text += b.Text
		case "tool_result":
			afterTool = true
			inner, _ := lastText(b.Content)
			text += inner
		}
	}
	return text, afterTool
}

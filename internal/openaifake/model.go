package openaifake

import (
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/fngate/fngate/core/providers/mock"
)

// Model is a Script that answers like a model would, from the request alone, so real SDKs
// can drive whole conversations through the fake: with a json_schema response_format, JSON
// built from the schema (json_object: {"text": ...}); with tools on offer and no tool result
// to answer yet, a call of the tool tool_choice names (else the first) with arguments built
// from its schema; otherwise a text echoing the last user or tool message. A Responses request
// is read as the chat request it stands for (asChat), so the same conversation gets the same
// answers on both APIs.
func Model(r Request) Reply {
	if r.Path == "/v1/responses" {
		r.Body = asChat(r.Body)
	}
	msgs, _ := r.Body["messages"].([]any)
	last, lastRole := "", ""
	if n := len(msgs); n > 0 {
		m, _ := msgs[n-1].(map[string]any)
		lastRole, _ = m["role"].(string)
		last = textOf(m["content"])
	}
	tools, _ := r.Body["tools"].([]any)
	if len(tools) > 0 && lastRole != "tool" && r.Body["tool_choice"] != "none" {
		fn := chosen(tools, r.Body["tool_choice"])
		name, _ := fn["name"].(string)
		params, _ := json.Marshal(fn["parameters"])
		return Reply{ToolCalls: []ToolCall{{ID: "call_fake_" + strconv.Itoa(len(msgs)), Name: name, Arguments: mock.SchemaJSON(params, last)}},
			PromptTokens: 5, CompletionTokens: 3}
	}
	text := "You said: " + last
	if lastRole == "tool" {
		text = "The tool returned: " + last
	}
	if rf, _ := r.Body["response_format"].(map[string]any); rf != nil {
		switch rf["type"] {
		case "json_schema":
			js, _ := rf["json_schema"].(map[string]any)
			schema, _ := json.Marshal(js["schema"])
			text = mock.SchemaJSON(schema, text)
		case "json_object":
			text = mock.SchemaJSON(nil, text)
		}
	}
	return Reply{Text: text, PromptTokens: 5, CompletionTokens: 3}
}

func chosen(tools []any, choice any) map[string]any {
	want := ""
	if c, ok := choice.(map[string]any); ok {
		f, _ := c["function"].(map[string]any)
		want, _ = f["name"].(string)
	}
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		fn, _ := tm["function"].(map[string]any)
		if name, _ := fn["name"].(string); want == "" || name == want {
			return fn
		}
	}
	return map[string]any{}
}

// asChat is the part of a Responses request Model reads, in Chat Completions' shape: input
// as messages (a function_call_output is a tool message), function tools nested under
// "function", a tool_choice naming a function, text.format as response_format.
func asChat(body map[string]any) map[string]any {
	out := map[string]any{}
	var msgs []any
	switch in := body["input"].(type) {
	case string:
		msgs = append(msgs, map[string]any{"role": "user", "content": in})
	case []any:
		for _, it := range in {
			item, _ := it.(map[string]any)
			switch item["type"] {
			case "function_call_output":
				msgs = append(msgs, map[string]any{"role": "tool", "content": item["output"]})
			case "function_call":
				msgs = append(msgs, map[string]any{"role": "assistant"})
			case "message", nil:
				msgs = append(msgs, map[string]any{"role": item["role"], "content": item["content"]})
			}
		}
	}
	out["messages"] = msgs
	if tools, _ := body["tools"].([]any); len(tools) > 0 {
		var fns []any
		for _, t := range tools {
			if tm, _ := t.(map[string]any); tm["type"] == "function" {
				fns = append(fns, map[string]any{"type": "function", "function": tm})
			}
		}
		out["tools"] = fns
	}
	switch c := body["tool_choice"].(type) {
	case string:
		out["tool_choice"] = c
	case map[string]any:
		out["tool_choice"] = map[string]any{"type": "function", "function": map[string]any{"name": c["name"]}}
	}
	if text, _ := body["text"].(map[string]any); text != nil {
		if f, _ := text["format"].(map[string]any); f["type"] == "json_schema" {
			out["response_format"] = map[string]any{"type": "json_schema", "json_schema": f}
		} else if f["type"] == "json_object" {
			out["response_format"] = f
		}
	}
	return out
}

// textOf is a message content's text: a string, or its text parts joined.
func textOf(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		s := ""
		for _, p := range c {
			pm, _ := p.(map[string]any)
			if t, ok := pm["text"].(string); ok {
				s += t
			}
		}
		return s
	}
	return ""
}

// participant is OpenAI's pattern for messages[].name.
var participant = regexp.MustCompile(`^[^\s<|\\/>]+$`)

// validateExtended checks the fields OpenAI validates beyond the basics, with its words:
// response_format's shape, participant names, stop's size, the sampling ranges.
func validateExtended(body map[string]any) string {
	if rf, ok := body["response_format"]; ok {
		m, _ := rf.(map[string]any)
		switch m["type"] {
		case "text", "json_object":
		case "json_schema":
			js, _ := m["json_schema"].(map[string]any)
			if js == nil {
				return "Missing required parameter: 'response_format.json_schema'."
			}
			if name, _ := js["name"].(string); name == "" {
				return "Missing required parameter: 'response_format.json_schema.name'."
			}
			if _, ok := js["schema"].(map[string]any); !ok {
				return "Invalid type for 'response_format.json_schema.schema': expected an object."
			}
		default:
			return "Invalid value: 'response_format.type'. Supported values are: 'text', 'json_object' and 'json_schema'."
		}
	}
	msgs, _ := body["messages"].([]any)
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		if name, ok := m["name"]; ok {
			if s, _ := name.(string); !participant.MatchString(s) {
				return "Invalid 'messages[" + strconv.Itoa(i) + "].name': string does not match pattern."
			}
		}
	}
	if stop, ok := body["stop"].([]any); ok && len(stop) > 4 {
		return "Invalid 'stop': array too long. Expected an array with maximum length 4."
	}
	for _, k := range []string{"presence_penalty", "frequency_penalty"} {
		if v, ok := body[k].(float64); ok && (v < -2 || v > 2) {
			return "Invalid '" + k + "': decimal above maximum value or below minimum value."
		}
	}
	if v, ok := body["top_p"].(float64); ok && (v < 0 || v > 1) {
		return "Invalid 'top_p': decimal above maximum value or below minimum value."
	}
	return ""
}

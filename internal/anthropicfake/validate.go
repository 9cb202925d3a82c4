package anthropicfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// APIError is an error answer in Anthropic's shape.
type APIError struct {
	Status  int
	Type    string // invalid_request_error, authentication_error, overloaded_error, ...
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

// Body renders {"type":"error","error":{"type","message"},"request_id"}.
func (e *APIError) Body() string { return ErrorBody(e.Type, e.Message) }

// ErrorBody renders an Anthropic error body.
func ErrorBody(typ, message string) string {
	return mustJSON(struct {
		Type      string   `json:"type"`
		Error     apiError `json:"error"`
		RequestID string   `json:"request_id"`
	}{"error", apiError{typ, message}, "req_fake_0001"})
}

func invalid(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// Versions are the anthropic-version header values the fake accepts: the API's dated
// versions, 2026-10-21 included, which the TypeScript SDK sends from 1.0.0 on (its
// CHANGELOG: "add support for new API version 2026-10-21") and the Messages door passes on.
// The fake holds every version to 2023-06-01's rules, which are stricter.
var Versions = []string{"2023-06-01", "2023-01-01", "2026-10-21"}

// VertexVersion is the anthropic_version Claude on Vertex AI requires in the body.
const VertexVersion = "vertex-2023-10-16"

// Dialect selects the rules for where the body came from.
type Dialect int

const (
	// Direct is api.anthropic.com: model in the body, version in a header.
	Direct Dialect = iota
	// Vertex is Claude on Vertex AI: the model is in the URL and anthropic_version in the
	// body.
	Vertex
	// Bedrock is Claude on Bedrock, as bedrockfake hands the body over (with a model): its
	// API version takes no system message inside the conversation.
	Bedrock
)

// ValidateHeaders checks the two headers every direct API call needs.
func ValidateHeaders(h http.Header, apiKey string) *APIError {
	switch key := h.Get("X-Api-Key"); {
	case key == "":
		return &APIError{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "x-api-key header is required"}
	case key != apiKey:
		return &APIError{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "invalid x-api-key"}
	}
	switch v := h.Get("Anthropic-Version"); {
	case v == "":
		return invalid("anthropic-version: header is required")
	case !slices.Contains(Versions, v):
		return invalid("anthropic-version: invalid version %q", v)
	}
	return nil
}

var (
	toolIDPattern   = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
)

var topLevel = map[string]bool{
	"model": true, "max_tokens": true, "messages": true, "system": true, "temperature": true,
	"top_p": true, "top_k": true, "stop_sequences": true, "stream": true, "tools": true,
	"tool_choice": true, "metadata": true, "thinking": true, "service_tier": true,
	// newer fields, each behind its beta where it has one
	"context_management": true, "output_config": true, "output_format": true, "container": true,
	"mcp_servers": true, "inference_geo": true, "speed": true, "cache_control": true, "diagnostics": true,
}

// serverBlocks are the blocks of server tools (Anthropic runs them), which a client sends
// back as Anthropic gave them; the fake checks only their type.
var serverBlocks = map[string]bool{
	"server_tool_use": true, "web_search_tool_result": true, "web_fetch_tool_result": true,
	"code_execution_tool_result": true, "bash_code_execution_tool_result": true,
	"text_editor_code_execution_tool_result": true, "mcp_tool_use": true, "mcp_tool_result": true,
	"container_upload": true, "tool_search_tool_result": true,
}

// ValidateCountBody checks a count_tokens body: a Messages body that carries no output
// maximum, sampling or stream.
func ValidateCountBody(body []byte) *APIError {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil || req == nil {
		return invalid("The request body is not valid JSON")
	}
	for _, k := range []string{"max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata"} {
		if _, ok := req[k]; ok {
			return invalid("%s: Extra inputs are not permitted", k)
		}
	}
	req["max_tokens"] = json.RawMessage("1")
	full, _ := json.Marshal(req)
	return ValidateBody(full, Direct)
}

// ValidateBody checks a Messages request body the way the API does, as far as the gateway's
// translation can get it wrong: required fields, unknown fields, roles, content blocks, tool
// pairing and placement, ranges. It returns the first problem found.
func ValidateBody(body []byte, d Dialect) *APIError {
	var req map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil || req == nil {
		return invalid("The request body is not valid JSON")
	}
	keys := make([]string, 0, len(req))
	for k := range req {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if topLevel[k] {
			continue
		}
		if d == Vertex && k == "anthropic_version" {
			continue
		}
		return invalid("%s: Extra inputs are not permitted", k)
	}
	if d == Vertex {
		var v string
		if json.Unmarshal(req["anthropic_version"], &v) != nil || v != VertexVersion {
			return invalid("anthropic_version: must be %q", VertexVersion)
		}
	} else {
		var model string
		if raw, ok := req["model"]; !ok {
			return invalid("model: Field required")
		} else if json.Unmarshal(raw, &model) != nil || model == "" {
			return invalid("model: Input should be a valid string")
		}
	}
	raw, ok := req["max_tokens"]
	if !ok {
		return invalid("max_tokens: Field required")
	}
	var maxTokens int
	if json.Unmarshal(raw, &maxTokens) != nil {
		return invalid("max_tokens: Input should be a valid integer")
	}
	if maxTokens < 1 {
		return invalid("max_tokens: Input should be greater than or equal to 1")
	}
	if raw, ok := req["temperature"]; ok {
		var t float64
		if json.Unmarshal(raw, &t) != nil {
			return invalid("temperature: Input should be a valid number")
		}
		if t < 0 || t > 1 {
			return invalid("temperature: range: 0..1")
		}
	}
	if _, both := req["top_p"]; both && req["temperature"] != nil && oneSampler(req["model"]) {
		return invalid("`temperature` and `top_p` cannot both be specified for this model. Please use only one.")
	}
	if raw, ok := req["stream"]; ok {
		var s bool
		if json.Unmarshal(raw, &s) != nil {
			return invalid("stream: Input should be a valid boolean")
		}
	}
	if raw, ok := req["system"]; ok {
		if e := validateSystem(raw); e != nil {
			return e
		}
	}
	tools, e := validateTools(req["tools"])
	if e != nil {
		return e
	}
	if raw, ok := req["tool_choice"]; ok {
		if e := validateToolChoice(raw, tools); e != nil {
			return e
		}
	}
	if raw, ok := req["output_config"]; ok {
		if e := validateOutputConfig(raw); e != nil {
			return e
		}
	}
	return validateMessages(req["messages"], d == Direct)
}

// oneSampler reports the models that take temperature or top_p, not both (Opus 4.1 and the
// 4.5 models).
func oneSampler(model json.RawMessage) bool {
	m := string(model)
	return strings.Contains(m, "-4-5") || strings.Contains(m, "opus-4-1")
}

// validateOutputConfig checks output_config's effort and format (structured outputs: a
// json_schema format with an object schema).
func validateOutputConfig(raw json.RawMessage) *APIError {
	var oc map[string]json.RawMessage
	if json.Unmarshal(raw, &oc) != nil || oc == nil {
		return invalid("output_config: Input should be a valid dictionary")
	}
	for k, v := range oc {
		switch k {
		case "effort":
		case "format":
			var f map[string]json.RawMessage
			if json.Unmarshal(v, &f) != nil || f == nil {
				return invalid("output_config.format: Input should be a valid dictionary")
			}
			if string(f["type"]) != `"json_schema"` {
				return invalid("output_config.format.type: Input should be 'json_schema'")
			}
			var schema map[string]any
			if json.Unmarshal(f["schema"], &schema) != nil || schema == nil {
				return invalid("output_config.format.schema: Field required")
			}
			for k := range f {
				if k != "type" && k != "schema" {
					return invalid("output_config.format.%s: Extra inputs are not permitted", k)
				}
			}
		default:
			return invalid("output_config.%s: Extra inputs are not permitted", k)
		}
	}
	return nil
}

func validateSystem(raw json.RawMessage) *APIError {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return invalid("system: Input should be a valid string or list of text blocks")
	}
	for i, b := range blocks {
		var typ, text string
		_ = json.Unmarshal(b["type"], &typ)
		_ = json.Unmarshal(b["text"], &text)
		if typ != "text" {
			return invalid("system.%d.type: Input should be 'text'", i)
		}
		if text == "" {
			return invalid("system: text content blocks must be non-empty")
		}
	}
	return nil
}

func validateTools(raw json.RawMessage) ([]string, *APIError) {
	if raw == nil {
		return nil, nil
	}
	var tools []map[string]json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return nil, invalid("tools: Input should be a valid list")
	}
	var names []string
	for i, t := range tools {
		var kind string
		_ = json.Unmarshal(t["type"], &kind)
		if kind != "" && kind != "custom" {
			// A server tool (web_search_20250305, bash_20250124, ...): Anthropic runs it.
			var name string
			if json.Unmarshal(t["name"], &name) != nil || name == "" {
				return nil, invalid("tools.%d.%s.name: Field required", i, kind)
			}
			names = append(names, name)
			continue
		}
		for k := range t {
			switch k {
			case "name", "description", "input_schema", "cache_control", "type", "strict",
				"defer_loading", "input_examples", "allowed_callers", "eager_input_streaming":
			default:
				return nil, invalid("tools.%d.custom.%s: Extra inputs are not permitted", i, k)
			}
		}
		var name string
		if json.Unmarshal(t["name"], &name) != nil || !toolNamePattern.MatchString(name) {
			return nil, invalid("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		if slices.Contains(names, name) {
			return nil, invalid("tools: Tool names must be unique.")
		}
		names = append(names, name)
		schema, ok := t["input_schema"]
		if !ok {
			return nil, invalid("tools.%d.custom.input_schema: Field required", i)
		}
		var s map[string]json.RawMessage
		if json.Unmarshal(schema, &s) != nil || s == nil {
			return nil, invalid("tools.%d.custom.input_schema: Input should be a valid dictionary", i)
		}
		var typ string
		if _, ok := s["type"]; !ok {
			return nil, invalid("tools.%d.custom.input_schema.type: Field required", i)
		}
		if json.Unmarshal(s["type"], &typ) != nil || typ != "object" {
			return nil, invalid("tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
	}
	return names, nil
}

func validateToolChoice(raw json.RawMessage, tools []string) *APIError {
	var tc struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &tc) != nil {
		return invalid("tool_choice: Input should be a valid dictionary")
	}
	if len(tools) == 0 {
		return invalid("tool_choice: tool_choice may only be specified while providing tools.")
	}
	switch tc.Type {
	case "auto", "any", "none":
	case "tool":
		if !slices.Contains(tools, tc.Name) {
			return invalid("tool_choice.tool.name: Tool '%s' not found in provided tools", tc.Name)
		}
	default:
		return invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
	}
	return nil
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// validateMessages checks the conversation; systemInPlace says whether the API version takes
// system messages inside it (the direct API does; Bedrock's and Vertex AI's fixed versions do
// not, and the gateway hoists them there).
func validateMessages(raw json.RawMessage, systemInPlace bool) *APIError {
	if raw == nil {
		return invalid("messages: Field required")
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &msgs) != nil {
		return invalid("messages: Input should be a valid list")
	}
	if len(msgs) == 0 {
		return invalid("messages: at least one message is required")
	}
	var pending []string // tool_use ids of the previous assistant message
	for i, m := range msgs {
		switch m.Role {
		case "user", "assistant":
		case "system":
			if !systemInPlace {
				return invalid("messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.")
			}
			// The API takes system instructions in place too (Claude Code sends them so), but
			// only as text; they answer no tool call and make none.
			if e := validateSystem(m.Content); e != nil {
				return invalid("messages.%d.content: %s", i, e.Message)
			}
			if len(pending) > 0 {
				return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, pending[0])
			}
			continue
		default:
			return invalid("messages.%d.role: Input should be 'user', 'assistant' or 'system'", i)
		}
		last := i == len(msgs)-1
		var blocks []wireBlock
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			if s == "" && !(last && m.Role == "assistant") {
				return invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
			}
			if s != "" {
				blocks = []wireBlock{{Type: "text", Text: &s}}
			}
		} else if json.Unmarshal(m.Content, &blocks) != nil {
			return invalid("messages.%d.content: Input should be a valid string or list of content blocks", i)
		} else if len(blocks) == 0 && !(last && m.Role == "assistant") {
			return invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}

		// Results answering the previous turn's tool_use blocks must open this message.
		if len(pending) > 0 {
			if m.Role != "user" {
				return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, pending[0])
			}
			n := 0
			for n < len(blocks) && blocks[n].Type == "tool_result" {
				n++
			}
			if n < len(pending) {
				return invalid("messages.%d: Did not find %d `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.", i, len(pending))
			}
		}
		var uses []string
		for j, b := range blocks {
			p := fmt.Sprintf("messages.%d.content.%d", i, j)
			switch b.Type {
			case "text":
				if b.Text == nil {
					return invalid("%s.text: Field required", p)
				}
				if *b.Text == "" {
					return invalid("messages: text content blocks must be non-empty")
				}
			case "tool_use":
				if m.Role != "assistant" {
					return invalid("%s: tool_use blocks are only allowed in assistant messages", p)
				}
				if !toolIDPattern.MatchString(b.ID) {
					return invalid("%s.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", p)
				}
				if b.Name == "" {
					return invalid("%s.tool_use.name: Field required", p)
				}
				if in := bytes.TrimSpace(b.Input); len(in) == 0 || in[0] != '{' {
					return invalid("%s.tool_use.input: Input should be a valid dictionary", p)
				}
				if slices.Contains(uses, b.ID) {
					return invalid("messages.%d: `tool_use` ids must be unique", i)
				}
				uses = append(uses, b.ID)
			case "tool_result":
				if m.Role != "user" {
					return invalid("%s: tool_result blocks are only allowed in user messages", p)
				}
				if !slices.Contains(pending, b.ToolUseID) {
					return invalid("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", p, b.ToolUseID)
				}
				pending = slices.DeleteFunc(pending, func(id string) bool { return id == b.ToolUseID })
			case "image", "document", "search_result":
				if m.Role != "user" {
					return invalid("%s: %s blocks are only allowed in user messages", p, b.Type)
				}
			case "thinking", "redacted_thinking":
				if m.Role != "assistant" {
					return invalid("%s: %s blocks are only allowed in assistant messages", p, b.Type)
				}
			default:
				if !serverBlocks[b.Type] {
					return invalid("%s.type: Input tag '%s' found using 'type' does not match any of the expected tags", p, b.Type)
				}
			}
		}
		if len(pending) > 0 {
			return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(pending, ", "))
		}
		pending = uses
	}
	if len(pending) > 0 {
		return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(msgs)-1, pending[0])
	}
	return nil
}

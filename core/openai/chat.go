// Package openai holds the gateway's public wire: the OpenAI Chat Completions, Completions
// and Embeddings (embeddings.go) request, response, chunk and error shapes, with strict
// decoding and validation.
//
// Strictness is the point: a field the gateway does not implement is refused with a 400 naming
// it, never silently dropped, so a client never believes a setting took effect when it did not.
// A key under the extended request profile (profile.go, extended.go) may also send the fields
// mainstream SDKs send; they reach the routes, which honour each or refuse it with the reason.
package openai

import (
	"encoding/json"
	"reflect"

	"github.com/fngate/fngate/core/llm"
)

// ChatRequest is the subset of POST /v1/chat/completions the gateway serves. Decoding refuses
// every other field (see DecodeChat).
type ChatRequest struct {
	Model               string            `json:"model"`
	Messages            []Message         `json:"messages"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	Temperature         *float64          `json:"temperature"`
	Stream              bool              `json:"stream"`
	StreamOptions       *StreamOptions    `json:"stream_options"`
	Tools               []Tool            `json:"tools"`
	ToolChoice          *ToolChoice       `json:"tool_choice"`
	N                   *int              `json:"n"`
	User                string            `json:"user"`
	Metadata            map[string]string `json:"metadata"`
}

// IncludeUsage reports whether the client asked for the final usage chunk.
func (r *ChatRequest) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// HasStrictTool reports whether any tool asks for strict schema adherence, which only some
// providers implement.
func (r *ChatRequest) HasStrictTool() bool {
	for i := range r.Tools {
		if r.Tools[i].Function.Strict != nil && *r.Tools[i].Function.Strict {
			return true
		}
	}
	return false
}

// StreamOptions is OpenAI's stream_options object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Roles the gateway accepts.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message. Content is a plain string (nil when an assistant message carries
// only tool calls): content-part arrays are refused during decoding.
type Message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`

	// Response-only fields that SDKs echo back when a previous answer is appended to the
	// history. They are accepted only when empty (see validate.go) and never sent upstream.
	Refusal      json.RawMessage `json:"refusal,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Audio        json.RawMessage `json:"audio,omitempty"`
	FunctionCall json.RawMessage `json:"function_call,omitempty"`
}

// Text returns the message content, or "" when there is none.
func (m *Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// ToolCall is an assistant's call of a function tool.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as a JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function tool definition.
type Tool struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef describes a callable function. Parameters is a JSON Schema object, kept raw so
// it reaches providers byte for byte.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Tool choice modes.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	// ToolChoiceFunction is a named function: the model must call Function.
	ToolChoiceFunction = "function"
)

// ToolChoice is either a mode string or a named function object on the wire.
type ToolChoice struct {
	Mode     string // auto, none, required or function
	Function string // set when Mode is function
}

// UnmarshalJSON accepts "auto" | "none" | "required" | {"type":"function","function":{"name":"x"}}.
func (tc *ToolChoice) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
			tc.Mode = s
			return nil
		}
		return &FieldError{Param: "tool_choice", Message: "tool_choice must be \"auto\", \"none\", \"required\" or a named function object, got " + quote(s)}
	}
	var obj toolChoiceObject
	d := newStrictDecoder(b)
	if err := d.Decode(&obj); err != nil {
		return &FieldError{Param: "tool_choice", Message: "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\":\"function\",\"function\":{\"name\":...}}"}
	}
	if e := checkKeys(b, toolChoiceType, "tool_choice"); e != nil {
		return &FieldError{Param: e.Param, Message: e.Message, Code: e.Code}
	}
	if obj.Type != "function" {
		return &FieldError{Param: "tool_choice.type", Message: "only function tools are supported: tool_choice.type must be \"function\""}
	}
	if obj.Function == nil || obj.Function.Name == "" {
		return &FieldError{Param: "tool_choice.function.name", Message: "tool_choice.function.name is required"}
	}
	tc.Mode, tc.Function = ToolChoiceFunction, obj.Function.Name
	return nil
}

// toolChoiceObject is the named-function form of tool_choice.
type toolChoiceObject struct {
	Type     string `json:"type"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

var toolChoiceType = reflect.TypeFor[toolChoiceObject]()

// MarshalJSON writes the OpenAI wire form, so OpenAI-compatible providers can forward it as is.
func (tc ToolChoice) MarshalJSON() ([]byte, error) {
	if tc.Mode != ToolChoiceFunction {
		return json.Marshal(tc.Mode)
	}
	b := []byte(`{"type":"function","function":{"name":`)
	b = AppendString(b, tc.Function)
	return append(b, "}}"...), nil
}

// Request converts the decoded request into the gateway's: each message keeps its role and
// place (tool messages become user messages holding one tool result, assistant tool calls
// become tool_use parts after the text), so a translation back to the OpenAI wire writes the
// same messages.
func (r *ChatRequest) Request() *llm.Request {
	req := &llm.Request{
		Op:             llm.OpChat,
		Model:          r.Model,
		MaxTokens:      r.MaxCompletionTokens,
		MaxTokensParam: "max_completion_tokens",
		Temperature:    r.Temperature,
		Stream:         r.Stream,
		User:           r.User,
		Metadata:       r.Metadata,
		LateSystem:     llm.LateSystemRefuse,
		Messages:       make([]llm.Message, len(r.Messages)),
	}
	for i := range r.Messages {
		m := &r.Messages[i]
		out := &req.Messages[i]
		switch m.Role {
		case RoleTool:
			out.Role = llm.RoleUser
			out.Parts = []llm.Part{{Kind: llm.PartToolResult, ToolUseID: m.ToolCallID, Text: m.Text()}}
			continue
		case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant:
			out.Role = m.Role
		}
		n := len(m.ToolCalls)
		if m.Content != nil {
			n++
		}
		out.Parts = make([]llm.Part, 0, n)
		if m.Content != nil {
			out.Parts = append(out.Parts, llm.Part{Kind: llm.PartText, Text: *m.Content})
		}
		for j := range m.ToolCalls {
			tc := &m.ToolCalls[j]
			out.Parts = append(out.Parts, llm.Part{Kind: llm.PartToolUse, ID: tc.ID, Name: tc.Function.Name, Input: tc.Function.Arguments})
		}
	}
	if len(r.Tools) > 0 {
		req.Tools = make([]llm.Tool, len(r.Tools))
		for i := range r.Tools {
			f := &r.Tools[i].Function
			req.Tools[i] = llm.Tool{Name: f.Name, Description: f.Description, Parameters: f.Parameters, Strict: f.Strict}
		}
	}
	if tc := r.ToolChoice; tc != nil {
		c := &llm.ToolChoice{Mode: tc.Mode}
		if tc.Mode == ToolChoiceFunction {
			c.Mode, c.Name = llm.ToolChoiceTool, tc.Function
		}
		req.ToolChoice = c
	}
	return req
}

// DecodeChatRequest decodes and validates a chat completion body into the gateway's request.
func DecodeChatRequest(body []byte, lim llm.Limits) (*llm.Request, *llm.Error) {
	r, e := DecodeChat(body, lim)
	if e != nil {
		return nil, e
	}
	return r.Request(), nil
}

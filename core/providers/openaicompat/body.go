package openaicompat

import (
	"bytes"
	"strconv"

	"github.com/fngate/fngate/core/openai"
)

// ChatBody writes the Chat Completions request an OpenAI-wire server gets, with the choices
// in which such servers still differ. user and metadata are the gateway's log labels and are
// never written; a stream always asks for usage, so every attempt can be charged. Vertex AI's
// OpenAI-compatible endpoint, reached through its own transport, uses it too.
type ChatBody struct {
	// MaxTokensField names the output maximum (max_completion_tokens or max_tokens).
	MaxTokensField string
	// DeveloperAsSystem writes developer messages as system messages.
	DeveloperAsSystem bool
	// OmitStrict leaves out the tools' strict flags, for a server that would ignore them.
	OmitStrict bool
	// ToolChoiceWithTools leaves out a tool_choice that comes without tools (only "none" is
	// allowed there, which means the same as no choice).
	ToolChoiceWithTools bool
}

// Append appends the body of req for model to b; maxTokens, when not nil, is the output
// maximum.
func (c ChatBody) Append(b []byte, req *openai.ChatRequest, model string, maxTokens *int, stream bool) []byte {
	b = append(b, `{"model":`...)
	b = openai.AppendString(b, model)
	b = append(b, `,"messages":[`...)
	for i := range req.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendMessage(b, &req.Messages[i])
	}
	b = append(b, ']')
	if maxTokens != nil {
		b = append(b, ',', '"')
		b = append(b, c.MaxTokensField...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, int64(*maxTokens), 10)
	}
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = strconv.AppendFloat(b, *req.Temperature, 'g', -1, 64)
	}
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendTool(b, &req.Tools[i].Function)
		}
		b = append(b, ']')
	}
	if req.ToolChoice != nil && (len(req.Tools) > 0 || !c.ToolChoiceWithTools) {
		tc, _ := req.ToolChoice.MarshalJSON()
		b = append(b, `,"tool_choice":`...)
		b = append(b, tc...)
	}
	if stream {
		b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}')
}

func (c ChatBody) appendMessage(b []byte, m *openai.Message) []byte {
	role := m.Role
	if role == openai.RoleDeveloper && c.DeveloperAsSystem {
		role = openai.RoleSystem
	}
	b = append(b, `{"role":`...)
	b = openai.AppendString(b, role)
	b = append(b, `,"content":`...)
	if m.Content != nil {
		b = openai.AppendString(b, *m.Content)
	} else {
		b = append(b, "null"...)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = openai.AppendString(b, tc.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = openai.AppendString(b, tc.Function.Name)
			b = append(b, `,"arguments":`...)
			b = openai.AppendString(b, tc.Function.Arguments)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = openai.AppendString(b, m.ToolCallID)
	}
	return append(b, '}')
}

func (c ChatBody) appendTool(b []byte, f *openai.FunctionDef) []byte {
	b = append(b, `{"type":"function","function":{"name":`...)
	b = openai.AppendString(b, f.Name)
	if f.Description != "" {
		b = append(b, `,"description":`...)
		b = openai.AppendString(b, f.Description)
	}
	if ps := bytes.TrimSpace(f.Parameters); len(ps) > 0 && string(ps) != "null" {
		b = append(b, `,"parameters":`...)
		b = append(b, ps...)
	}
	if f.Strict != nil && !c.OmitStrict {
		b = append(b, `,"strict":`...)
		b = strconv.AppendBool(b, *f.Strict)
	}
	return append(b, "}}"...)
}

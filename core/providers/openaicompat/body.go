package openaicompat

import (
	"bytes"
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// ChatBody writes the Chat Completions request an OpenAI-wire server gets, with the choices
// in which such servers still differ. user and metadata are the gateway's log labels and are
// never written; a stream always asks for usage, so every attempt can be charged. Vertex AI's
// OpenAI-compatible endpoint, reached through its own transport, uses it too.
//
// A request from the Chat Completions door comes back out as the messages it came in as. One
// from another door is written in the same shape: up-front instructions (Anthropic's system)
// as a leading system message, tool results as tool messages before the rest of their user
// turn, text parts joined into one string unless images come with them (then content parts),
// and reasoning from earlier turns left out, as Anthropic itself leaves it out of earlier
// turns' context. Check has refused what the wire cannot carry.
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
	// TopK, ParallelToolCalls and ReasoningEffort say which optional fields the server takes.
	TopK              bool
	ParallelToolCalls bool
	ReasoningEffort   bool
	// Names writes the messages' participant names; elsewhere Check has refused them or the
	// operator lets them be left out.
	Names bool
	// RequireParameters writes OpenRouter's provider.require_parameters when the request sets
	// a parameter an OpenRouter provider might ignore (seed, a penalty, response_format).
	RequireParameters bool
}

// Append appends the body of req for model to b; maxTokens, when not nil, is the output
// maximum.
func (c ChatBody) Append(b []byte, req *llm.Request, model string, maxTokens *int, stream bool) []byte {
	b = append(b, `{"model":`...)
	b = openai.AppendString(b, model)
	b = append(b, `,"messages":[`...)
	n := 0
	if len(req.System) > 0 {
		b = c.appendMessage(b, &llm.Message{Role: llm.RoleSystem, Parts: req.System})
		n++
	}
	for i := range req.Messages {
		b, n = c.appendTurn(b, &req.Messages[i], n)
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
	if req.TopP != nil {
		b = append(b, `,"top_p":`...)
		b = strconv.AppendFloat(b, *req.TopP, 'g', -1, 64)
	}
	if req.TopK != nil && c.TopK {
		b = append(b, `,"top_k":`...)
		b = strconv.AppendInt(b, int64(*req.TopK), 10)
	}
	b = appendStop(b, req.Stop)
	b = appendExtended(b, req)
	if effort := Effort(req); effort != "" && c.ReasoningEffort {
		b = append(b, `,"reasoning_effort":`...)
		b = openai.AppendString(b, effort)
	}
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendTool(b, &req.Tools[i])
		}
		b = append(b, ']')
	}
	if tc := req.ToolChoice; tc != nil && (len(req.Tools) > 0 || !c.ToolChoiceWithTools) {
		b = append(b, `,"tool_choice":`...)
		switch tc.Mode {
		case llm.ToolChoiceTool:
			b = append(b, `{"type":"function","function":{"name":`...)
			b = openai.AppendString(b, tc.Name)
			b = append(b, "}}"...)
		default:
			b = openai.AppendString(b, tc.Mode)
		}
		if tc.DisableParallel && c.ParallelToolCalls && len(req.Tools) > 0 {
			b = append(b, `,"parallel_tool_calls":false`...)
		}
	}
	if c.RequireParameters && (req.Seed != nil || req.PresencePenalty != nil || req.FrequencyPenalty != nil || req.ResponseFormat.JSON()) {
		b = append(b, `,"provider":{"require_parameters":true}`...)
	}
	if stream {
		b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}')
}

func appendStop(b []byte, stop []string) []byte {
	if len(stop) == 0 {
		return b
	}
	b = append(b, `,"stop":[`...)
	for i, s := range stop {
		if i > 0 {
			b = append(b, ',')
		}
		b = openai.AppendString(b, s)
	}
	return append(b, ']')
}

// appendExtended writes seed, the penalties and response_format, for the chat and the legacy
// completions body alike (response_format is never set on a completion).
func appendExtended(b []byte, req *llm.Request) []byte {
	if req.Seed != nil {
		b = append(b, `,"seed":`...)
		b = strconv.AppendInt(b, *req.Seed, 10)
	}
	if req.PresencePenalty != nil {
		b = append(b, `,"presence_penalty":`...)
		b = strconv.AppendFloat(b, *req.PresencePenalty, 'g', -1, 64)
	}
	if req.FrequencyPenalty != nil {
		b = append(b, `,"frequency_penalty":`...)
		b = strconv.AppendFloat(b, *req.FrequencyPenalty, 'g', -1, 64)
	}
	if f := req.ResponseFormat; f.JSON() {
		b = append(b, `,"response_format":{"type":`...)
		b = openai.AppendString(b, f.Type)
		if f.Type == llm.FormatJSONSchema {
			b = append(b, `,"json_schema":{"name":`...)
			b = openai.AppendString(b, f.Name)
			if f.Description != "" {
				b = append(b, `,"description":`...)
				b = openai.AppendString(b, f.Description)
			}
			b = append(b, `,"schema":`...)
			b = append(b, bytes.TrimSpace(f.Schema)...)
			if f.Strict != nil {
				b = append(b, `,"strict":`...)
				b = strconv.AppendBool(b, *f.Strict)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return b
}

// appendTurn writes one message of the conversation, n messages having been written before
// it. A user turn's tool results become tool messages, ahead of the rest of the turn.
func (c ChatBody) appendTurn(b []byte, m *llm.Message, n int) ([]byte, int) {
	rest := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Kind != llm.PartToolResult {
			if p.Kind != llm.PartThinking && p.Kind != llm.PartRedactedThinking {
				rest++
			}
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"role":"tool","content":`...)
		b = openai.AppendString(b, resultText(p))
		b = append(b, `,"tool_call_id":`...)
		b = openai.AppendString(b, p.ToolUseID)
		b = append(b, '}')
	}
	if rest == 0 && len(m.Parts) > 0 && m.Role != llm.RoleAssistant {
		return b, n
	}
	if n > 0 {
		b = append(b, ',')
	}
	return c.appendMessage(b, m), n + 1
}

func (c ChatBody) appendMessage(b []byte, m *llm.Message) []byte {
	role, parts := m.Role, m.Parts
	if role == llm.RoleDeveloper && c.DeveloperAsSystem {
		role = llm.RoleSystem
	}
	b = append(b, `{"role":`...)
	b = openai.AppendString(b, role)
	if m.Name != "" && c.Names {
		b = append(b, `,"name":`...)
		b = openai.AppendString(b, m.Name)
	}
	b = append(b, `,"content":`...)
	b = appendContent(b, parts)
	calls := 0
	for i := range parts {
		p := &parts[i]
		if p.Kind != llm.PartToolUse {
			continue
		}
		if calls == 0 {
			b = append(b, `,"tool_calls":[`...)
		} else {
			b = append(b, ',')
		}
		calls++
		b = append(b, `{"id":`...)
		b = openai.AppendString(b, p.ID)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = openai.AppendString(b, p.Name)
		b = append(b, `,"arguments":`...)
		b = openai.AppendString(b, p.Input)
		b = append(b, "}}"...)
	}
	if calls > 0 {
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendContent writes a message's content: its text as a string (null when it has no text
// part, as an assistant turn with only tool calls), or content parts when images come with
// it.
func appendContent(b []byte, parts []llm.Part) []byte {
	texts, images := 0, 0
	for i := range parts {
		switch parts[i].Kind {
		case llm.PartText:
			texts++
		case llm.PartImage:
			images++
		}
	}
	if images == 0 {
		if texts == 0 {
			return append(b, "null"...)
		}
		m := llm.Message{Parts: parts}
		return openai.AppendString(b, m.Text())
	}
	b = append(b, '[')
	n := 0
	for i := range parts {
		p := &parts[i]
		switch p.Kind {
		case llm.PartText:
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"type":"text","text":`...)
			b = openai.AppendString(b, p.Text)
			b = append(b, '}')
		case llm.PartImage:
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"type":"image_url","image_url":{"url":`...)
			b = openai.AppendString(b, ImageURL(p))
			b = append(b, "}}"...)
		}
	}
	return append(b, ']')
}

// ImageURL is the URL an OpenAI-wire server takes for an image part: its URL, or its bytes as
// a data URL.
func ImageURL(p *llm.Part) string {
	if p.URL != "" {
		return p.URL
	}
	return "data:" + p.MediaType + ";base64," + p.Data
}

// resultText is a tool result as the text of a tool message. OpenAI's tool message has no
// error flag, so a failed result says so in its text.
func resultText(p *llm.Part) string {
	text := p.Text
	if p.Content != nil {
		m := llm.Message{Parts: p.Content}
		text = m.Text()
	}
	if p.IsError {
		return "Error: " + text
	}
	return text
}

func (c ChatBody) appendTool(b []byte, t *llm.Tool) []byte {
	b = append(b, `{"type":"function","function":{"name":`...)
	b = openai.AppendString(b, t.Name)
	if t.Description != "" {
		b = append(b, `,"description":`...)
		b = openai.AppendString(b, t.Description)
	}
	if ps := bytes.TrimSpace(t.Parameters); len(ps) > 0 && string(ps) != "null" {
		b = append(b, `,"parameters":`...)
		b = append(b, ps...)
	}
	if t.Strict != nil && !c.OmitStrict {
		b = append(b, `,"strict":`...)
		b = strconv.AppendBool(b, *t.Strict)
	}
	return append(b, "}}"...)
}

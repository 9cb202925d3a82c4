package openai

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/fngate/fngate/core/llm"
)

// Bounds of OpenAI's own: 128 tool calls per assistant message and 16 metadata pairs (keys up
// to 64 characters, values up to 512). How many messages and tools a request may carry is
// configurable (llm.Limits).
const (
	maxToolCalls        = 128
	maxMetadataPairs    = 16
	maxMetadataKeyLen   = 64
	maxMetadataValueLen = 512
)

// DecodeChat decodes and validates a chat completion request body. Model-specific rules (the
// token ceiling, price-driven requirements, provider limits) are checked later, once the model
// and its routes are known.
func DecodeChat(body []byte, lim llm.Limits) (*ChatRequest, *llm.Error) {
	req := new(ChatRequest)
	if e := decodeStrict(body, req); e != nil {
		return nil, e
	}
	if e := req.validate(lim.WithDefaults()); e != nil {
		return nil, e
	}
	return req, nil
}

func (r *ChatRequest) validate(lim llm.Limits) *llm.Error {
	if r.Model == "" {
		return llm.BadRequest("model", "you must provide a model parameter")
	}
	if len(r.Messages) == 0 {
		return llm.BadRequest("messages", "messages is required and must hold at least one message")
	}
	if len(r.Messages) > lim.MaxMessages {
		return llm.BadRequest("messages", "too many messages: "+strconv.Itoa(len(r.Messages))+" (limit "+strconv.Itoa(lim.MaxMessages)+")")
	}
	if e := validateMessages(r.Messages); e != nil {
		return e
	}
	if r.MaxCompletionTokens != nil && *r.MaxCompletionTokens < 1 {
		return llm.BadRequest("max_completion_tokens", "max_completion_tokens must be at least 1")
	}
	if r.Temperature != nil && (math.IsNaN(*r.Temperature) || *r.Temperature < 0 || *r.Temperature > 2) {
		return llm.BadRequest("temperature", "temperature must be between 0 and 2")
	}
	if r.N != nil && *r.N != 1 {
		return llm.Unsupported("n", "n must be 1: the gateway returns exactly one choice")
	}
	if r.StreamOptions != nil && !r.Stream {
		return llm.BadRequest("stream_options", "stream_options is only allowed when stream is true")
	}
	if e := validateTools(r.Tools, r.ToolChoice, lim); e != nil {
		return e
	}
	return validateMetadata(r.Metadata)
}

func validateMessages(msgs []Message) *llm.Error {
	// Tool results must answer a call of the assistant turn just before them; providers such as
	// Anthropic and Bedrock reject orphans, so refusing here gives the same answer on every route.
	pending := map[string]bool{}
	pendingFrom := 0
	for i := range msgs {
		m := &msgs[i]
		p := "messages[" + strconv.Itoa(i) + "]"
		if m.Role != RoleTool && len(pending) > 0 {
			return unansweredToolCall(pendingFrom, pending)
		}
		if e := validateEchoedFields(m, p); e != nil {
			return e
		}
		if m.Role != RoleAssistant && len(m.ToolCalls) > 0 {
			return llm.BadRequest(p+".tool_calls", p+".tool_calls is only allowed on assistant messages")
		}
		if m.Role != RoleTool && m.ToolCallID != "" {
			return llm.BadRequest(p+".tool_call_id", p+".tool_call_id is only allowed on tool messages")
		}
		switch m.Role {
		case RoleSystem, RoleDeveloper, RoleUser:
			if m.Content == nil {
				return llm.BadRequest(p+".content", p+".content is required for role "+m.Role)
			}
		case RoleAssistant:
			if m.Content == nil && len(m.ToolCalls) == 0 {
				return llm.BadRequest(p+".content", p+".content is required unless tool_calls is given")
			}
			if len(m.ToolCalls) > maxToolCalls {
				return llm.BadRequest(p+".tool_calls", "too many tool calls in "+p)
			}
			pendingFrom = i
			for j := range m.ToolCalls {
				tc := &m.ToolCalls[j]
				tp := p + ".tool_calls[" + strconv.Itoa(j) + "]"
				if tc.ID == "" {
					return llm.BadRequest(tp+".id", tp+".id is required")
				}
				if tc.Type != "function" {
					return llm.Unsupported(tp+".type", tp+".type must be \"function\"")
				}
				if tc.Function.Name == "" {
					return llm.BadRequest(tp+".function.name", tp+".function.name is required")
				}
				if pending[tc.ID] {
					return llm.BadRequest(tp+".id", "duplicate tool call id "+quote(tc.ID)+" in "+p)
				}
				pending[tc.ID] = true
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return llm.BadRequest(p+".tool_call_id", p+".tool_call_id is required for role tool")
			}
			if m.Content == nil {
				return llm.BadRequest(p+".content", p+".content is required for role tool")
			}
			if !pending[m.ToolCallID] {
				return llm.BadRequest(p+".tool_call_id", p+" answers tool call "+quote(m.ToolCallID)+", which the preceding assistant message did not make")
			}
			delete(pending, m.ToolCallID)
		case "":
			return llm.BadRequest(p+".role", p+".role is required")
		case "function":
			return llm.Unsupported(p+".role", "the function role is deprecated and not supported: use tool")
		default:
			return llm.BadRequest(p+".role", p+".role must be one of system, developer, user, assistant or tool, got "+quote(m.Role))
		}
	}
	if len(pending) > 0 {
		return unansweredToolCall(pendingFrom, pending)
	}
	return nil
}

func unansweredToolCall(from int, pending map[string]bool) *llm.Error {
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	p := "messages[" + strconv.Itoa(from) + "]"
	return llm.BadRequest(p+".tool_calls", "an assistant message with tool_calls must be followed by tool messages answering each call; "+p+" has no result for "+quote(ids[0]))
}

// validateEchoedFields accepts the response-only fields an SDK puts back into the history
// (refusal, annotations, audio, function_call) only when they carry nothing.
func validateEchoedFields(m *Message, p string) *llm.Error {
	check := func(name string, raw json.RawMessage) *llm.Error {
		if len(raw) == 0 {
			return nil
		}
		switch string(bytes.TrimSpace(raw)) {
		case "null", `""`, "[]":
			if m.Role == RoleAssistant {
				return nil
			}
		}
		return llm.Unsupported(p+"."+name, p+"."+name+" is not supported by this gateway")
	}
	for _, f := range [...]struct {
		name string
		raw  json.RawMessage
	}{{"refusal", m.Refusal}, {"annotations", m.Annotations}, {"audio", m.Audio}, {"function_call", m.FunctionCall}} {
		if e := check(f.name, f.raw); e != nil {
			return e
		}
	}
	return nil
}

func validateTools(tools []Tool, choice *ToolChoice, lim llm.Limits) *llm.Error {
	if len(tools) > lim.MaxTools {
		return llm.BadRequest("tools", "too many tools: "+strconv.Itoa(len(tools))+" (limit "+strconv.Itoa(lim.MaxTools)+")")
	}
	names := make(map[string]bool, len(tools))
	for i := range tools {
		t := &tools[i]
		p := "tools[" + strconv.Itoa(i) + "]"
		if t.Type != "function" {
			return llm.Unsupported(p+".type", "only function tools are supported: "+p+".type must be \"function\"")
		}
		if !llm.ValidToolName(t.Function.Name, 64) {
			return llm.BadRequest(p+".function.name", p+".function.name must be 1 to 64 characters of a-z, A-Z, 0-9, underscore or dash")
		}
		if names[t.Function.Name] {
			return llm.BadRequest(p+".function.name", "duplicate tool name "+quote(t.Function.Name))
		}
		names[t.Function.Name] = true
		if ps := bytes.TrimSpace(t.Function.Parameters); len(ps) > 0 && ps[0] != '{' && string(ps) != "null" {
			return llm.BadRequest(p+".function.parameters", p+".function.parameters must be a JSON Schema object")
		}
	}
	if choice == nil {
		return nil
	}
	if len(tools) == 0 && choice.Mode != ToolChoiceNone {
		return llm.BadRequest("tool_choice", "tool_choice is only allowed when tools are specified")
	}
	if choice.Mode == ToolChoiceFunction && !names[choice.Function] {
		return llm.BadRequest("tool_choice.function.name", "tool_choice names "+quote(choice.Function)+", which is not in tools")
	}
	return nil
}

func validateMetadata(md map[string]string) *llm.Error {
	if len(md) > maxMetadataPairs {
		return llm.BadRequest("metadata", "metadata holds at most "+strconv.Itoa(maxMetadataPairs)+" key-value pairs")
	}
	for k, v := range md {
		if utf8.RuneCountInString(k) > maxMetadataKeyLen {
			return llm.BadRequest("metadata", "metadata keys are at most 64 characters: "+quote(k))
		}
		if utf8.RuneCountInString(v) > maxMetadataValueLen {
			return llm.BadRequest("metadata."+k, "metadata values are at most 512 characters")
		}
	}
	return nil
}

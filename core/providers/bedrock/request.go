package bedrock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydoc "github.com/aws/smithy-go/document"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// checkChat refuses, before any network I/O, what Converse cannot take or would reject:
// the planner then skips this route instead of letting Bedrock answer 400.
func checkChat(req *openai.ChatRequest) *openai.Error {
	if req.Temperature != nil && *req.Temperature > 1 {
		return openai.Unsupported("temperature", "Amazon Bedrock accepts a temperature from 0 to 1, got "+strconv.FormatFloat(*req.Temperature, 'g', -1, 64))
	}
	if req.ToolChoice != nil && req.ToolChoice.Mode == openai.ToolChoiceNone {
		// Converse has no "none" choice; sending the tools anyway would let the model call them.
		return openai.Unsupported("tool_choice", `Amazon Bedrock has no tool_choice "none": leave out tools (or tool_choice) instead`)
	}
	for i := range req.Tools {
		if s := req.Tools[i].Function.Strict; s != nil && *s {
			return openai.Unsupported("tools["+strconv.Itoa(i)+"].function.strict", "Amazon Bedrock does not enforce strict tool schemas on this route")
		}
	}
	msgs := req.Messages
	leading := true
	// turn tracks the Bedrock message the current OpenAI messages merge into, so that a turn
	// made only of blank text is refused instead of sent empty.
	turnRole, turnStart, turnFilled := "", 0, false
	for i := range msgs {
		m := &msgs[i]
		p := "messages[" + strconv.Itoa(i) + "]"
		switch m.Role {
		case openai.RoleDeveloper:
			return openai.Unsupported(p+".role", "Amazon Bedrock has no developer role: send instructions as a system message at the start")
		case openai.RoleSystem:
			if !leading {
				return openai.Unsupported(p+".role", "Amazon Bedrock takes system messages only at the start of the conversation, before any other message")
			}
			continue
		}
		role := turnRoleOf(m.Role)
		if leading {
			leading = false
			if role != roleUser {
				return openai.Unsupported(p+".role", "Amazon Bedrock needs the conversation to start with a user message, after any system messages")
			}
		}
		if role != turnRole {
			if turnRole != "" && !turnFilled {
				return blankTurn(turnStart)
			}
			turnRole, turnStart, turnFilled = role, i, false
		}
		switch m.Role {
		case openai.RoleUser:
			turnFilled = turnFilled || !blank(m.Text())
		case openai.RoleAssistant:
			turnFilled = turnFilled || !blank(m.Text()) || len(m.ToolCalls) > 0
			for j := range m.ToolCalls {
				if !objectOrEmpty(m.ToolCalls[j].Function.Arguments) {
					return openai.BadRequest(p+".tool_calls["+strconv.Itoa(j)+"].function.arguments",
						"Amazon Bedrock needs tool call arguments to be a JSON object")
				}
			}
		case openai.RoleTool:
			if blank(m.Text()) {
				// Bedrock rejects blank text anywhere, and there is no faithful stand-in for
				// "the tool returned nothing".
				return openai.Unsupported(p+".content", "Amazon Bedrock refuses an empty tool result: send some text, such as \"(no output)\"")
			}
			turnFilled = true
		}
	}
	if leading {
		return openai.Unsupported("messages", "Amazon Bedrock needs at least one user message besides system messages")
	}
	if !turnFilled {
		return blankTurn(turnStart)
	}
	if last := len(msgs) - 1; msgs[last].Role == openai.RoleAssistant {
		return openai.Unsupported("messages["+strconv.Itoa(last)+"].role", "Amazon Bedrock does not continue a final assistant message (prefill) on this route: end with a user or tool message")
	}
	return nil
}

func blankTurn(i int) *openai.Error {
	return openai.Unsupported("messages["+strconv.Itoa(i)+"].content", "Amazon Bedrock refuses blank messages: messages["+strconv.Itoa(i)+"] has no text")
}

const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// turnRoleOf maps an OpenAI role to the Bedrock turn it belongs to: tool results travel in
// user turns.
func turnRoleOf(role string) string {
	if role == openai.RoleAssistant {
		return roleAssistant
	}
	return roleUser
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// objectOrEmpty reports whether tool call arguments can become a toolUse input: a JSON object,
// or nothing at all (a call without arguments).
func objectOrEmpty(args string) bool {
	a := strings.TrimSpace(args)
	return a == "" || a[0] == '{' && json.Valid([]byte(a))
}

// converse is the Converse input shared by the plain and the streaming call.
type converse struct {
	system    []types.SystemContentBlock
	messages  []types.Message
	inference *types.InferenceConfiguration
	tools     *types.ToolConfiguration
}

// buildConverse translates a request that passed checkChat. It still fails rather than send a
// request Bedrock would reject, for a caller that skipped the check.
func buildConverse(req *openai.ChatRequest, t providers.Target) (*converse, error) {
	if oe := checkChat(req); oe != nil {
		return nil, &providers.Error{Class: providers.BadRequest, Status: oe.Status, Param: oe.Param, Message: oe.Message, Provider: displayName}
	}
	c := &converse{}
	msgs := req.Messages
	i := 0
	for ; i < len(msgs) && msgs[i].Role == openai.RoleSystem; i++ {
		if s := msgs[i].Text(); !blank(s) {
			c.system = append(c.system, &types.SystemContentBlockMemberText{Value: s})
		}
	}
	var usedTools []string // tool names the history calls, for a toolConfig Bedrock demands
	for ; i < len(msgs); i++ {
		m := &msgs[i]
		role := types.ConversationRole(turnRoleOf(m.Role))
		switch m.Role {
		case openai.RoleUser:
			if s := m.Text(); !blank(s) {
				c.add(role, &types.ContentBlockMemberText{Value: s})
			}
		case openai.RoleAssistant:
			if s := m.Text(); !blank(s) {
				c.add(role, &types.ContentBlockMemberText{Value: s})
			}
			for j := range m.ToolCalls {
				tc := &m.ToolCalls[j]
				input, err := objectDocument(tc.Function.Arguments)
				if err != nil {
					return nil, &providers.Error{Class: providers.BadRequest, Status: 400, Provider: displayName,
						Param:   "messages[" + strconv.Itoa(i) + "].tool_calls[" + strconv.Itoa(j) + "].function.arguments",
						Message: "tool call arguments are not a JSON object: " + err.Error()}
				}
				c.add(role, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(toolUseID(tc.ID)), Name: aws.String(tc.Function.Name), Input: input}})
				usedTools = appendUnique(usedTools, tc.Function.Name)
			}
		case openai.RoleTool:
			c.add(role, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String(toolUseID(m.ToolCallID)), Content: []types.ToolResultContentBlock{toolResultContent(m.Text())}}})
		}
	}
	maxTokens := req.MaxCompletionTokens
	if maxTokens == nil && t.MaxOutputTokens > 0 {
		// The model's ceiling holds even when the client sets no maximum.
		maxTokens = &t.MaxOutputTokens
	}
	if maxTokens != nil || req.Temperature != nil {
		c.inference = &types.InferenceConfiguration{}
		if maxTokens != nil {
			c.inference.MaxTokens = aws.Int32(int32(min(*maxTokens, 1<<31-1)))
		}
		if req.Temperature != nil {
			c.inference.Temperature = aws.Float32(float32(*req.Temperature))
		}
	}
	tools, err := toolConfig(req, usedTools)
	if err != nil {
		return nil, err
	}
	c.tools = tools
	return c, nil
}

// add appends a block to the last message when it has the same role: Bedrock demands strictly
// alternating roles, so consecutive user, tool and assistant messages merge.
func (c *converse) add(role types.ConversationRole, b types.ContentBlock) {
	if n := len(c.messages); n > 0 && c.messages[n-1].Role == role {
		c.messages[n-1].Content = append(c.messages[n-1].Content, b)
		return
	}
	c.messages = append(c.messages, types.Message{Role: role, Content: []types.ContentBlock{b}})
}

func appendUnique(names []string, name string) []string {
	for _, n := range names {
		if n == name {
			return names
		}
	}
	return append(names, name)
}

// toolConfig renders tools and tool_choice. Bedrock refuses a history holding toolUse or
// toolResult blocks without a toolConfig, so when the client sent no tools the ones the history
// calls are declared with an open schema; no toolChoice is set then.
func toolConfig(req *openai.ChatRequest, used []string) (*types.ToolConfiguration, error) {
	if len(req.Tools) == 0 {
		if len(used) == 0 {
			return nil, nil
		}
		tc := &types.ToolConfiguration{}
		for _, name := range used {
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name:        aws.String(name),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
			}})
		}
		return tc, nil
	}
	tc := &types.ToolConfiguration{Tools: make([]types.Tool, 0, len(req.Tools))}
	for i := range req.Tools {
		f := &req.Tools[i].Function
		schema, err := schemaDocument(f.Parameters)
		if err != nil {
			return nil, &providers.Error{Class: providers.BadRequest, Status: 400, Provider: displayName,
				Param: "tools[" + strconv.Itoa(i) + "].function.parameters", Message: "the parameters schema is not a JSON object: " + err.Error()}
		}
		spec := types.ToolSpecification{Name: aws.String(f.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}
		if !blank(f.Description) {
			// Bedrock refuses a blank description; leaving it out loses nothing.
			spec.Description = aws.String(f.Description)
		}
		tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
	}
	if ch := req.ToolChoice; ch != nil {
		switch ch.Mode {
		case openai.ToolChoiceAuto:
			tc.ToolChoice = &types.ToolChoiceMemberAuto{Value: types.AutoToolChoice{}}
		case openai.ToolChoiceRequired:
			tc.ToolChoice = &types.ToolChoiceMemberAny{Value: types.AnyToolChoice{}}
		case openai.ToolChoiceFunction:
			tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(ch.Function)}}
		}
	}
	return tc, nil
}

// toolResultContent sends a result that is a JSON object as json (models read it as
// structured data) and anything else as text.
func toolResultContent(s string) types.ToolResultContentBlock {
	if t := strings.TrimSpace(s); len(t) > 0 && t[0] == '{' {
		if doc, err := objectDocument(t); err == nil {
			return &types.ToolResultContentBlockMemberJson{Value: doc}
		}
	}
	return &types.ToolResultContentBlockMemberText{Value: s}
}

// schemaDocument turns a tool's parameters into the inputSchema document; a tool without
// parameters takes no arguments.
func schemaDocument(raw json.RawMessage) (document.Interface, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return document.NewLazyDocument(map[string]any{"type": "object", "properties": map[string]any{}}), nil
	}
	return objectDocument(string(raw))
}

// objectDocument decodes a JSON object into a document the SDK can serialize. Numbers stay
// exact: the SDK's document encoder writes json.Number as a string, but document.Number
// verbatim.
func objectDocument(s string) (document.Interface, error) {
	if blank(s) {
		return document.NewLazyDocument(map[string]any{}), nil
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errTrailingData
	}
	if v == nil {
		return nil, errNotObject
	}
	return document.NewLazyDocument(exactNumbers(v)), nil
}

type docError string

func (e docError) Error() string { return string(e) }

const (
	errTrailingData = docError("unexpected data after the JSON object")
	errNotObject    = docError("not a JSON object")
)

func exactNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		return smithydoc.Number(t)
	case map[string]any:
		for k, e := range t {
			t[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = exactNumbers(e)
		}
	}
	return v
}

// toolUseID makes a tool call id acceptable to Bedrock ([a-zA-Z0-9_-], 1 to 64 characters).
// Ids from other providers (OpenAI's call_..., anything a client made up) may not be. The same
// id always maps to the same value, so a toolUse and its toolResult still match, and a hash of
// the original keeps two ids that clean up alike apart.
func toolUseID(id string) string {
	if validToolUseID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	suffix := "_" + hex.EncodeToString(sum[:5])
	b := make([]byte, 0, 64)
	for _, r := range id {
		if len(b) == 64-len(suffix) {
			break
		}
		if r < utf8.RuneSelf && idChar(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return string(b) + suffix
}

func validToolUseID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			return false
		}
	}
	return true
}

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

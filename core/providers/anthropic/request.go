package anthropic

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"strconv"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// DefaultMaxTokens is sent as max_tokens when the client gave no max_completion_tokens and
// the gateway model sets no max_output_tokens. Anthropic requires the field; 4096 is the
// output ceiling of the smallest Claude models still served, so every model accepts it, and
// it is large enough for ordinary answers. Configure max_output_tokens to raise it.
const DefaultMaxTokens = 4096

// RequestOptions are the differences between transports carrying the same Messages body.
type RequestOptions struct {
	// Stream asks for server-sent events.
	Stream bool
	// OmitModel leaves "model" out, for transports that name the model in the URL (Vertex AI).
	OmitModel bool
	// AnthropicVersion, when set, is sent in the body as "anthropic_version" (Vertex AI wants
	// "vertex-2023-10-16"); the direct API takes the version as a header instead.
	AnthropicVersion string
}

// Check reports why req cannot be sent to Anthropic, as a 400 naming the param, or nil. It
// needs no network, so the planner can skip the route before any I/O.
func Check(req *openai.ChatRequest) *openai.Error {
	_, _, oe := check(req)
	return oe
}

// check is Check that also splits the messages into the system prompt (Anthropic has one,
// before the conversation) and the turns.
func check(req *openai.ChatRequest) (system, turns []openai.Message, oe *openai.Error) {
	if req.Temperature != nil && *req.Temperature > 1 {
		return nil, nil, openai.Unsupported("temperature", "temperature "+strconv.FormatFloat(*req.Temperature, 'g', -1, 64)+
			" is above 1, the most Anthropic accepts (its range is 0 to 1)")
	}
	system, turns, oe = openai.SplitSystem(req.Messages, "Anthropic", checkTurn)
	if oe != nil {
		return nil, nil, oe
	}
	for i := range req.Tools {
		f := &req.Tools[i].Function
		p := "tools[" + strconv.Itoa(i) + "].function"
		if f.Strict != nil && *f.Strict {
			return nil, nil, openai.Unsupported(p+".strict", p+".strict is not supported on Anthropic routes: the schema would not be enforced")
		}
		if t, ok := schemaType(f.Parameters); ok && t != "object" {
			return nil, nil, openai.BadRequest(p+".parameters", p+".parameters must describe an object (type \"object\"), as Anthropic requires")
		}
	}
	return system, turns, nil
}

// checkTurn refuses messages[i] when Anthropic would.
func checkTurn(i int, m *openai.Message) *openai.Error {
	p := "messages[" + strconv.Itoa(i) + "]"
	switch m.Role {
	case openai.RoleUser:
		if m.Text() == "" {
			return openai.BadRequest(p+".content", p+".content must not be empty: Anthropic refuses empty messages")
		}
	case openai.RoleAssistant:
		if m.Text() == "" && len(m.ToolCalls) == 0 {
			return openai.BadRequest(p+".content", p+".content must not be empty: Anthropic refuses empty messages")
		}
		for j := range m.ToolCalls {
			if !jsonObject(m.ToolCalls[j].Function.Arguments) {
				tp := p + ".tool_calls[" + strconv.Itoa(j) + "].function.arguments"
				return openai.BadRequest(tp, tp+" must be a JSON object: Anthropic takes tool input as an object")
			}
		}
	}
	return nil
}

// BuildRequest translates req into a Messages API body for t. It refuses what Check refuses.
func BuildRequest(req *openai.ChatRequest, t providers.Target, opt RequestOptions) ([]byte, *openai.Error) {
	system, turns, oe := check(req)
	if oe != nil {
		return nil, oe
	}
	b := make([]byte, 0, 512+64*len(req.Messages))
	b = append(b, '{')
	if opt.AnthropicVersion != "" {
		b = append(b, `"anthropic_version":`...)
		b = openai.AppendString(b, opt.AnthropicVersion)
		b = append(b, ',')
	}
	if !opt.OmitModel {
		b = append(b, `"model":`...)
		b = openai.AppendString(b, t.Model)
		b = append(b, ',')
	}
	b = append(b, `"max_tokens":`...)
	b = strconv.AppendInt(b, int64(maxTokens(req, t)), 10)

	b = appendSystem(b, system)
	b = append(b, `,"messages":`...)
	b = appendTurns(b, buildTurns(turns))

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
			b = appendTool(b, &req.Tools[i].Function)
		}
		b = append(b, ']')
		// Without tools there is nothing to choose from, and Anthropic refuses a tool_choice
		// alone; OpenAI allows "none" there, which means the same as leaving it out.
		if req.ToolChoice != nil {
			b = append(b, `,"tool_choice":`...)
			b = appendToolChoice(b, req.ToolChoice)
		}
	}
	if opt.Stream {
		b = append(b, `,"stream":true`...)
	}
	// user and metadata are the gateway's log labels; they are never sent upstream.
	return append(b, '}'), nil
}

func maxTokens(req *openai.ChatRequest, t providers.Target) int {
	switch {
	case req.MaxCompletionTokens != nil:
		return *req.MaxCompletionTokens
	case t.MaxOutputTokens > 0:
		return t.MaxOutputTokens
	}
	return DefaultMaxTokens
}

// appendSystem writes the leading system and developer messages as the top-level system: a
// string for one, text blocks for several so their boundaries survive. Empty ones say nothing
// and Anthropic refuses empty text blocks, so they are left out.
func appendSystem(b []byte, msgs []openai.Message) []byte {
	var texts []string
	for i := range msgs {
		if s := msgs[i].Text(); s != "" {
			texts = append(texts, s)
		}
	}
	switch len(texts) {
	case 0:
		return b
	case 1:
		b = append(b, `,"system":`...)
		return openai.AppendString(b, texts[0])
	}
	b = append(b, `,"system":[`...)
	for i, s := range texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = openai.AppendString(b, s)
		b = append(b, '}')
	}
	return append(b, ']')
}

type blockKind uint8

const (
	textBlock blockKind = iota
	toolUseBlock
	toolResultBlock
)

// block is one content block of a turn: text holds the text or the tool result, input the
// tool_use input as a JSON object text.
type block struct {
	kind  blockKind
	text  string
	id    string
	name  string
	input string
}

// turn is one Anthropic message.
type turn struct {
	role   string
	blocks []block
}

// buildTurns turns OpenAI messages (after the system prefix) into Anthropic turns: tool
// messages become tool_result blocks of a user turn, and consecutive messages of one role
// share a turn. Merging is what puts every result in the one user message that must follow
// the tool_use turn; they come first in it because decoding already made tool messages
// directly follow their assistant turn, so a user message can only come after them.
func buildTurns(msgs []openai.Message) []turn {
	turns := make([]turn, 0, len(msgs))
	current := func(role string) *turn {
		if n := len(turns); n > 0 && turns[n-1].role == role {
			return &turns[n-1]
		}
		turns = append(turns, turn{role: role})
		return &turns[len(turns)-1]
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case openai.RoleUser:
			t := current("user")
			t.blocks = append(t.blocks, block{kind: textBlock, text: m.Text()})
		case openai.RoleTool:
			t := current("user")
			t.blocks = append(t.blocks, block{kind: toolResultBlock, id: ToolID(m.ToolCallID), text: m.Text()})
		case openai.RoleAssistant:
			t := current("assistant")
			if s := m.Text(); s != "" {
				t.blocks = append(t.blocks, block{kind: textBlock, text: s})
			}
			for j := range m.ToolCalls {
				tc := &m.ToolCalls[j]
				t.blocks = append(t.blocks, block{kind: toolUseBlock, id: ToolID(tc.ID), name: tc.Function.Name, input: tc.Function.Arguments})
			}
		}
	}
	return turns
}

func appendTurns(b []byte, turns []turn) []byte {
	b = append(b, '[')
	for i := range turns {
		t := &turns[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":"`...)
		b = append(b, t.role...)
		b = append(b, `","content":[`...)
		for j := range t.blocks {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendBlock(b, &t.blocks[j])
		}
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

func appendBlock(b []byte, bl *block) []byte {
	switch bl.kind {
	case toolUseBlock:
		b = append(b, `{"type":"tool_use","id":`...)
		b = openai.AppendString(b, bl.id)
		b = append(b, `,"name":`...)
		b = openai.AppendString(b, bl.name)
		b = append(b, `,"input":`...)
		b = appendObject(b, bl.input)
	case toolResultBlock:
		b = append(b, `{"type":"tool_result","tool_use_id":`...)
		b = openai.AppendString(b, bl.id)
		// content is optional; an empty text block would be refused.
		if bl.text != "" {
			b = append(b, `,"content":`...)
			b = openai.AppendString(b, bl.text)
		}
	default:
		b = append(b, `{"type":"text","text":`...)
		b = openai.AppendString(b, bl.text)
	}
	return append(b, '}')
}

// appendObject writes checked tool-call arguments, compacted: Check has made sure they are a
// JSON object or empty, and empty (what some models emit for a call without parameters)
// means no arguments.
func appendObject(b []byte, args string) []byte {
	s := bytes.TrimSpace([]byte(args))
	if len(s) == 0 {
		return append(b, "{}"...)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, s) != nil {
		return append(b, "{}"...) // unreachable after Check
	}
	return append(b, buf.Bytes()...)
}

func appendTool(b []byte, f *openai.FunctionDef) []byte {
	b = append(b, `{"name":`...)
	b = openai.AppendString(b, f.Name)
	if f.Description != "" {
		b = append(b, `,"description":`...)
		b = openai.AppendString(b, f.Description)
	}
	b = append(b, `,"input_schema":`...)
	return append(appendSchema(b, f.Parameters), '}')
}

// appendSchema writes the tool's parameters as input_schema. Anthropic requires an object
// schema with "type":"object"; OpenAI lets a tool without parameters leave the schema out or
// send {}, which mean the same.
func appendSchema(b []byte, params json.RawMessage) []byte {
	ps := bytes.TrimSpace(params)
	if len(ps) == 0 || string(ps) == "null" {
		return append(b, `{"type":"object","properties":{}}`...)
	}
	if _, ok := schemaType(ps); ok {
		return append(b, ps...)
	}
	rest := bytes.TrimSpace(ps[1:])
	if len(rest) > 0 && rest[0] == '}' {
		return append(b, `{"type":"object"}`...)
	}
	b = append(b, `{"type":"object",`...)
	return append(b, rest...)
}

// schemaType returns the schema's top-level "type" when it names one.
func schemaType(params json.RawMessage) (string, bool) {
	ps := bytes.TrimSpace(params)
	if len(ps) == 0 || ps[0] != '{' {
		return "", false
	}
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(ps, &s) != nil || len(s.Type) == 0 {
		return "", false
	}
	var t string
	if json.Unmarshal(s.Type, &t) != nil {
		return string(s.Type), true // a list of types is not "object"
	}
	return t, true
}

func appendToolChoice(b []byte, tc *openai.ToolChoice) []byte {
	switch tc.Mode {
	case openai.ToolChoiceRequired:
		return append(b, `{"type":"any"}`...)
	case openai.ToolChoiceNone:
		return append(b, `{"type":"none"}`...)
	case openai.ToolChoiceFunction:
		b = append(b, `{"type":"tool","name":`...)
		b = openai.AppendString(b, tc.Function)
		return append(b, '}')
	}
	return append(b, `{"type":"auto"}`...)
}

// jsonObject reports whether tool-call arguments can be sent as tool_use input: a JSON
// object, or nothing at all.
func jsonObject(args string) bool {
	s := bytes.TrimSpace([]byte(args))
	if len(s) == 0 {
		return true
	}
	return s[0] == '{' && json.Valid(s)
}

// ToolID makes a tool call id acceptable to Anthropic, which allows only [a-zA-Z0-9_-].
// Ids minted by other providers (Gemini, some OpenAI-compatible servers) may hold other
// characters. Valid ids pass unchanged, so Anthropic's own toolu_ ids round-trip; others get
// the offending characters replaced and a hash of the original appended, so two ids that
// differ only in those characters stay distinct. A call and its result map alike, being the
// same string.
func ToolID(id string) string {
	ok := true
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			ok = false
			break
		}
	}
	if ok && id != "" {
		return id
	}
	out := make([]byte, 0, len(id)+10)
	for i := 0; i < len(id); i++ {
		if c := id[i]; idChar(c) {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	out = append(out, '_')
	return string(strconv.AppendUint(out, uint64(h.Sum32()), 36))
}

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

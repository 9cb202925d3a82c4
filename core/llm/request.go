// Package llm is the wire-neutral core every front door and every provider speaks: one
// request, one answer, one stream of deltas and one error, whatever wire the client used and
// whatever wire the upstream speaks. A front door (core/openai for Chat Completions and the
// legacy Completions, core/messages for Anthropic's Messages, core/responses for OpenAI's
// Responses) decodes its wire into a Request
// once and encodes Answers, Deltas and Errors back; a provider checks a Request once, then
// translates it to its upstream and the upstream's answer back. Planning, attempts, failover,
// the commit point, limits and logs see only these types.
//
//	request.go   Request, Message, Part, Tool, ToolChoice, Thinking: what the client asked;
//	             ValidToolName, the tool-name pattern every door holds names to
//	answer.go    Answer, StopReason: a whole answer
//	delta.go     Delta, ToolCallDelta, Stream: a streamed answer, one increment at a time
//	usage.go     Usage: token counts exactly as reported
//	error.go     Error: a refusal or a failure, with the status that carries it
//	embed.go     EmbedRequest, Embeddings: an embeddings request and its vectors
//	limits.go    Limits: how many messages and tools a door lets one request carry
//
// The model is a superset of the doors' wires, shaped like Anthropic's content blocks (the
// richest of them): a message is a role and ordered parts, tool calls and tool results are
// parts, and what only one wire's own backends can carry (Anthropic's cache_control, server
// tools, documents, betas, context management; the Responses API's hosted tools and items) is
// kept verbatim for them and refused by every other route, never silently dropped.
package llm

import "encoding/json"

// Op is what the client asked for.
type Op uint8

const (
	// OpChat is a conversation (Chat Completions, Messages).
	OpChat Op = iota
	// OpCompletion is the legacy text completion of Prompt.
	OpCompletion
)

// Roles. Tool results are parts of user messages (Anthropic's shape); the OpenAI door turns
// each tool message into a user message holding one ToolResult part.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Request is one client request, decoded and checked by its front door. Providers must treat
// it as read-only: on failover the same request goes to the next route.
type Request struct {
	Op    Op
	Model string // the gateway model asked for

	// System is the instructions given apart from the conversation (Anthropic's top-level
	// system). System and developer messages inside Messages stay where the client put them.
	System   []Part
	Messages []Message
	// Prompt is the text of an OpCompletion.
	Prompt string

	// MaxTokens is the client's output maximum; nil when it gave none.
	MaxTokens *int
	// MaxTokensParam is the door's name for it, for messages that name the field.
	MaxTokensParam string

	Temperature *float64
	TopP        *float64
	TopK        *int
	Stop        []string
	// Seed, PresencePenalty and FrequencyPenalty are OpenAI's sampling knobs (the extended
	// profile on the chat door).
	Seed             *int64
	PresencePenalty  *float64
	FrequencyPenalty *float64
	// ResponseFormat asks for structured output: OpenAI's response_format, the Responses
	// door's text.format. Nil (or FormatText) is plain text.
	ResponseFormat *ResponseFormat
	// NamesOptional lets a route that cannot carry a participant name (Message.Name) leave
	// it out instead of refusing the request: the operator's request_profile_ignore:
	// [messages.name].
	NamesOptional bool

	Tools      []Tool
	ToolChoice *ToolChoice
	Thinking   *Thinking

	Stream bool
	// PassThrough is the client's wire when its door passes an upstream of the same wire
	// through (the Messages door: WireAnthropic): providers of that wire then attach their
	// events and answers verbatim (Delta.Raw, Answer.Raw).
	PassThrough Wire

	// LateSystem says what a backend that takes system instructions only before the
	// conversation does with a system or developer message that comes after it began.
	LateSystem LateSystem

	// Anthropic is what only Anthropic-wire backends (Anthropic, Claude on Bedrock and on
	// Vertex AI) can carry; nil when the client sent none of it.
	Anthropic *Anthropic
	// Responses is what only OpenAI's own Responses API can carry, from the Responses door;
	// nil for the other doors.
	Responses *Responses

	// Labels for the logs; never sent upstream.
	User     string
	Metadata map[string]string
	// Session identifies a client session (Claude Code's x-claude-code-session-id): the
	// weighted policy keeps one session on one route so prompt caches stay warm.
	Session string
}

// LateSystem is a door's rule for a system message after the conversation began.
type LateSystem uint8

const (
	// LateSystemRefuse makes such routes refuse the request (the Chat Completions door:
	// hoisting would change what the model was told and when).
	LateSystemRefuse LateSystem = iota
	// LateSystemHoist appends it to the up-front instructions (the Messages door: Anthropic's
	// API accepts a system message in place, and instructions are its meaning on any backend).
	LateSystemHoist
)

// Anthropic holds the parts of a Messages request that only Anthropic-wire backends honour.
type Anthropic struct {
	// Version is the client's anthropic-version header.
	Version string
	// Betas are the client's anthropic-beta flags, in order.
	Betas []string
	// Fields are top-level request fields kept verbatim (context_management, output_config,
	// service_tier, container, mcp_servers, ...), in the order the client sent them.
	Fields []RawField
	// UserID is metadata.user_id, which Anthropic uses to detect abuse.
	UserID string
}

// Field returns the raw value of the named field, or nil.
func (a *Anthropic) Field(name string) json.RawMessage {
	if a == nil {
		return nil
	}
	for i := range a.Fields {
		if a.Fields[i].Name == name {
			return a.Fields[i].Value
		}
	}
	return nil
}

// Responses holds what a Responses request carries for a backend that speaks the Responses
// API itself (OpenAI's own, the openai kind), beside the llm fields every route reads.
type Responses struct {
	// Fields are the request's top-level fields kept verbatim, in the order sent, but model,
	// input, stream, store, previous_response_id and max_output_tokens (Request.MaxTokens),
	// which are the gateway's to write.
	Fields []RawField
	// Input is the conversation as Responses input items, verbatim: a continued response's
	// items first (previous_response_id), then the request's own.
	Input json.RawMessage
	// Store is whether the gateway keeps the response; a native upstream is asked to keep it
	// too, so that a continued conversation may refer to its items (reasoning) by id.
	Store bool
	// Effort is reasoning.effort (minimal, low, medium, high, xhigh; "none" is not kept, as
	// every route honours it by not reasoning on purpose). A route that cannot set how hard
	// its model reasons refuses it.
	Effort string
	// Compact marks POST /v1/responses/compact: the native route posts Input and Fields to
	// OpenAI's /responses/compact, and every other route is asked for the summary that
	// Messages (a transcript and the compaction prompt) request.
	Compact bool
	// Only names what of the request only OpenAI's Responses API can honour (a hosted tool,
	// an input item or include value the gateway does not model, a setting no other backend
	// has), each as the refusal a route other than the native one answers with; the first
	// is the one a client sees.
	Only []*Error
}

// Refusal is the first of r.Only, or nil.
func (r *Responses) Refusal() *Error {
	if r == nil || len(r.Only) == 0 {
		return nil
	}
	return r.Only[0]
}

// RawField is a JSON member kept as sent.
type RawField struct {
	Name  string
	Value json.RawMessage
}

// Message is one turn: a role and its parts in order.
type Message struct {
	Role  string
	Parts []Part
	// Name is a participant name (OpenAI's messages[].name), under the extended profile.
	Name string
	// Extra holds members of an Anthropic message the gateway does not model (a per-turn
	// output_config), verbatim; only Anthropic-wire routes carry them.
	Extra []RawField
}

// Text joins the message's text parts.
func (m *Message) Text() string {
	n, only := 0, -1
	for i := range m.Parts {
		if m.Parts[i].Kind == PartText {
			n++
			only = i
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return m.Parts[only].Text
	}
	var b []byte
	for i := range m.Parts {
		if m.Parts[i].Kind == PartText {
			b = append(b, m.Parts[i].Text...)
		}
	}
	return string(b)
}

// HasText reports whether the message has a text part (possibly empty): an OpenAI assistant
// message with "content": "" differs from one with "content": null.
func (m *Message) HasText() bool {
	for i := range m.Parts {
		if m.Parts[i].Kind == PartText {
			return true
		}
	}
	return false
}

// ToolUses counts the message's tool_use parts.
func (m *Message) ToolUses() int {
	n := 0
	for i := range m.Parts {
		if m.Parts[i].Kind == PartToolUse {
			n++
		}
	}
	return n
}

// ToolUsesBefore counts the tool_use parts before Parts[j]: the OpenAI tool_calls index of
// the call at j.
func (m *Message) ToolUsesBefore(j int) int {
	n := 0
	for i := 0; i < j && i < len(m.Parts); i++ {
		if m.Parts[i].Kind == PartToolUse {
			n++
		}
	}
	return n
}

// PartKind is the kind of a content part.
type PartKind uint8

const (
	PartText PartKind = iota
	// PartImage is an image: base64 Data with MediaType, or a URL.
	PartImage
	// PartToolUse is an assistant's call: ID, Name and Input (a JSON object text).
	PartToolUse
	// PartToolResult answers the call ToolUseID with Text or Content, IsError when it failed.
	PartToolResult
	// PartThinking is the model's reasoning, Text with its Signature; it must go back to the
	// backend that made it unmodified.
	PartThinking
	// PartRedactedThinking is encrypted reasoning (Data), passed back unmodified.
	PartRedactedThinking
	// PartRaw is an Anthropic content block the gateway does not model (document,
	// search_result, server_tool_use, web_search_tool_result, container_upload, ...), kept in
	// Raw; only Anthropic-wire routes carry it.
	PartRaw
)

// Part is one content block. Which fields are set depends on Kind.
type Part struct {
	Kind PartKind
	// Text is the text of a text, thinking or string-content tool_result part.
	Text string

	// MediaType, Data and URL describe an image (Data is base64); Data also holds redacted
	// thinking.
	MediaType string
	Data      string
	URL       string

	// ID and Name identify a tool_use; Input is its input as a JSON object text (OpenAI's
	// arguments as the client sent them).
	ID    string
	Name  string
	Input string

	// ToolUseID, IsError and Content describe a tool_result; Content is set when the result
	// was given as blocks (text and images), Text when it was a string.
	ToolUseID string
	IsError   bool
	Content   []Part

	// Signature authenticates a thinking part.
	Signature string

	// CacheControl is Anthropic's cache_control breakpoint, verbatim.
	CacheControl json.RawMessage
	// Raw is the whole block as the client sent it, for Anthropic-wire routes: always for a
	// PartRaw (whose Name is then the block type), and for a modelled kind whose block has
	// members the gateway does not model (citations, caller, a Files API image). Every other
	// route refuses a part with Raw set rather than drop what it holds.
	Raw json.RawMessage
}

// Tool is a function the model may call, or an Anthropic server tool (Raw set).
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the input, kept byte for byte.
	Parameters json.RawMessage
	Strict     *bool
	// CacheControl is Anthropic's cache_control breakpoint, verbatim.
	CacheControl json.RawMessage
	// DeferLoading is Anthropic's defer_loading (tool search loads the tool on demand).
	DeferLoading bool
	// Raw is the whole definition of a tool only Anthropic can run (web_search, bash,
	// text_editor, code_execution, ...) or of a function tool with fields the gateway does
	// not model; Name is still set.
	Raw json.RawMessage
}

// ValidToolName reports whether name is 1 to max characters of a-z, A-Z, 0-9, underscore
// and dash, the pattern every door holds a function tool's name to. The doors differ only in
// max, which is their wire's: 128 on the Messages and Responses doors, 64 on Chat
// Completions (also for a response_format schema's name).
func ValidToolName(name string, max int) bool {
	if len(name) == 0 || len(name) > max {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Tool choice modes.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required" // Anthropic's "any"
	ToolChoiceTool     = "tool"     // the named tool Name
)

// ToolChoice says whether and which tool the model must call.
type ToolChoice struct {
	Mode string
	Name string // for ToolChoiceTool
	// DisableParallel allows at most one call (Anthropic's disable_parallel_tool_use, OpenAI's
	// parallel_tool_calls: false).
	DisableParallel bool
	// ParallelParam is the door's name for DisableParallel in a refusal; "" is Anthropic's.
	ParallelParam string
}

// Param names DisableParallel as the client sent it.
func (tc *ToolChoice) Param() string {
	if tc.ParallelParam != "" {
		return tc.ParallelParam
	}
	return "tool_choice.disable_parallel_tool_use"
}

// Response formats.
const (
	FormatText       = "text"
	FormatJSONObject = "json_object" // any JSON object
	FormatJSONSchema = "json_schema" // JSON that follows Schema
)

// ResponseFormat is a request for structured output.
type ResponseFormat struct {
	Type   string
	Name   string          // json_schema: the schema's name
	Schema json.RawMessage // json_schema: the JSON Schema, byte for byte
	Strict *bool           // json_schema: adhere to the schema exactly
	// Description is the schema's description, when the client gave one.
	Description string
	// Param is the door's name for the setting (response_format, text.format), for
	// refusals that name it; "" reads as response_format.
	Param string
}

// ParamName is the door's name for the setting, for a refusal to name.
func (f *ResponseFormat) ParamName() string {
	if f == nil || f.Param == "" {
		return "response_format"
	}
	return f.Param
}

// JSON reports whether f asks for JSON (json_object or json_schema) rather than text.
func (f *ResponseFormat) JSON() bool {
	return f != nil && f.Type != "" && f.Type != FormatText
}

// Thinking types.
const (
	ThinkingEnabled  = "enabled"
	ThinkingAdaptive = "adaptive" // the model decides whether and how much to think
	ThinkingDisabled = "disabled"
)

// Thinking is the client's request for extended thinking.
type Thinking struct {
	Type         string
	BudgetTokens int
	// Display is how thinking is shown ("summarized", "omitted", "updates", ...).
	Display string
	// Raw is the client's object, verbatim, for Anthropic-wire backends.
	Raw json.RawMessage
}

package anthropic

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// DefaultMaxTokens is sent as max_tokens when the client gave no output maximum and the
// gateway model sets no max_output_tokens. Anthropic requires the field; 4096 is the output
// ceiling of the smallest Claude models still served, so every model accepts it, and it is
// large enough for ordinary answers. Configure max_output_tokens to raise it.
const DefaultMaxTokens = 4096

// RequestOptions are the differences between transports carrying the same Messages body.
type RequestOptions struct {
	// Stream asks for server-sent events.
	Stream bool
	// OmitModel leaves "model" out, for transports that name the model in the URL (Vertex AI,
	// Bedrock).
	OmitModel bool
	// AnthropicVersion, when set, is sent in the body as "anthropic_version" (Vertex AI wants
	// "vertex-2023-10-16", Bedrock "bedrock-2023-05-31"); the direct API takes the version as
	// a header instead.
	AnthropicVersion string
	// BetasInBody sends the client's anthropic-beta flags as "anthropic_beta" in the body, as
	// Bedrock wants them; otherwise the transport sends them as a header.
	BetasInBody bool
	// SystemInMessages keeps a system message where the client put it in the conversation, as
	// the API itself accepts; transports whose API version may not are given it hoisted.
	SystemInMessages bool
	// Count writes a count_tokens body: no output maximum, sampling, metadata or stream.
	Count bool
	// Model is what the route's model takes (ModelOf).
	Model Model
}

// structuredOutputsBeta is the flag under which Anthropic enforces strict tool schemas.
const structuredOutputsBeta = "structured-outputs-2025-11-13"

// Check reports why req cannot be sent to Anthropic, as a 400 naming the param, or nil; m
// is what the route's model takes. It needs no network, so the planner can skip the route
// before any I/O. Anthropic has no seed and no penalties, and carries no participant names.
func Check(req *llm.Request, m Model) *llm.Error {
	if req.Op == llm.OpCompletion {
		return llm.UnsupportedEndpoint(req.Model, "Anthropic")
	}
	for _, check := range [...]func(*llm.Request, string) *llm.Error{providers.CheckSeed, providers.CheckPenalties, providers.CheckNames} {
		if oe := check(req, "Anthropic"); oe != nil {
			return oe
		}
	}
	if oe := checkStructured(req, m); oe != nil {
		return oe
	}
	if m.OneSampler && req.Temperature != nil && req.TopP != nil && !defaultTopP(req) {
		return llm.Unsupported("top_p", "this Claude model takes temperature or top_p, not both: send one")
	}
	if oe := providers.RefuseResponses(req, "Anthropic", false); oe != nil {
		return oe
	}
	if req.Temperature != nil && *req.Temperature > 1 {
		return llm.Unsupported("temperature", "temperature "+strconv.FormatFloat(*req.Temperature, 'g', -1, 64)+
			" is above 1, the most Anthropic accepts (its range is 0 to 1)")
	}
	if _, _, oe := llm.SplitSystem(req, "Anthropic", checkTurn); oe != nil {
		return oe
	}
	strictOK := req.Anthropic != nil && slices.Contains(req.Anthropic.Betas, structuredOutputsBeta)
	for i := range req.Tools {
		t := &req.Tools[i]
		p := "tools[" + strconv.Itoa(i) + "].function"
		if t.Strict != nil && *t.Strict && !strictOK {
			return llm.Unsupported(p+".strict", p+".strict is not supported on Anthropic routes: the schema would not be enforced")
		}
		if t.Raw == nil {
			if typ, ok := schemaType(t.Parameters); ok && typ != "object" {
				return llm.BadRequest(p+".parameters", p+".parameters must describe an object (type \"object\"), as Anthropic requires")
			}
		}
	}
	return nil
}

// checkTurn refuses messages[i] when Anthropic would.
func checkTurn(i int, m *llm.Message) *llm.Error {
	p := "messages[" + strconv.Itoa(i) + "]"
	if m.Role == llm.RoleUser || m.Role == llm.RoleAssistant {
		empty := true
		for j := range m.Parts {
			if pt := &m.Parts[j]; pt.Kind != llm.PartText || pt.Text != "" {
				empty = false
			}
		}
		if empty {
			return llm.BadRequest(p+".content", p+".content must not be empty: Anthropic refuses empty messages")
		}
	}
	for j := range m.Parts {
		pt := &m.Parts[j]
		if pt.Kind == llm.PartToolUse && !jsonObject(pt.Input) {
			tp := p + ".tool_calls[" + strconv.Itoa(m.ToolUsesBefore(j)) + "].function.arguments"
			return llm.BadRequest(tp, tp+" must be a JSON object: Anthropic takes tool input as an object")
		}
	}
	return nil
}

// BuildRequest translates req into a Messages API body for t. It trusts Check.
func BuildRequest(req *llm.Request, t providers.Target, opt RequestOptions) []byte {
	var system []llm.Part
	var turns []llm.Message
	if opt.SystemInMessages && req.LateSystem == llm.LateSystemHoist {
		// The client's own layout: leading system messages join the system prompt, later ones
		// stay in place.
		system = append(system, req.System...)
		n := 0
		for n < len(req.Messages) && (req.Messages[n].Role == llm.RoleSystem || req.Messages[n].Role == llm.RoleDeveloper) {
			system = append(system, req.Messages[n].Parts...)
			n++
		}
		turns = req.Messages[n:]
	} else {
		system, turns, _ = llm.SplitSystem(req, "Anthropic", nil)
	}
	b := make([]byte, 0, 512+64*len(req.Messages))
	b = append(b, '{')
	if opt.AnthropicVersion != "" {
		b = append(b, `"anthropic_version":`...)
		b = appendString(b, opt.AnthropicVersion)
		b = append(b, ',')
	}
	if opt.BetasInBody && req.Anthropic != nil && len(req.Anthropic.Betas) > 0 {
		b = append(b, `"anthropic_beta":[`...)
		for i, f := range req.Anthropic.Betas {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f)
		}
		b = append(b, "],"...)
	}
	if !opt.OmitModel {
		b = append(b, `"model":`...)
		b = appendString(b, t.Model)
		b = append(b, ',')
	}
	if !opt.Count {
		b = append(b, `"max_tokens":`...)
		b = strconv.AppendInt(b, int64(maxTokens(req, t)), 10)
		b = append(b, ',')
	}
	b = appendSystem(b, system)
	b = append(b, `"messages":`...)
	b = appendTurns(b, turns)
	if !opt.Count {
		b = appendSampling(b, req, opt.Model)
	}
	b = appendTools(b, req, respondTool(req, opt.Model))
	if f := req.ResponseFormat; f.JSON() && opt.Model.Structured == Native && f.Type == llm.FormatJSONSchema && !opt.Count {
		b = appendOutputFormat(b, f)
	}
	if th := req.Thinking; th != nil && len(th.Raw) > 0 {
		b = append(b, `,"thinking":`...)
		b = append(b, th.Raw...)
	}
	if a := req.Anthropic; a != nil {
		if a.UserID != "" && !opt.Count {
			b = append(b, `,"metadata":{"user_id":`...)
			b = appendString(b, a.UserID)
			b = append(b, '}')
		}
		for _, f := range a.Fields {
			b = append(b, ',')
			b = appendString(b, f.Name)
			b = append(b, ':')
			b = append(b, f.Value...)
		}
	}
	if opt.Stream && !opt.Count {
		b = append(b, `,"stream":true`...)
	}
	// The chat door's user and metadata are the gateway's log labels; they are never sent.
	return append(b, '}')
}

func appendSampling(b []byte, req *llm.Request, m Model) []byte {
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = strconv.AppendFloat(b, *req.Temperature, 'g', -1, 64)
	}
	if req.TopP != nil && !(m.OneSampler && req.Temperature != nil && defaultTopP(req)) {
		b = append(b, `,"top_p":`...)
		b = strconv.AppendFloat(b, *req.TopP, 'g', -1, 64)
	}
	if req.TopK != nil {
		b = append(b, `,"top_k":`...)
		b = strconv.AppendInt(b, int64(*req.TopK), 10)
	}
	if len(req.Stop) > 0 {
		b = append(b, `,"stop_sequences":[`...)
		for i, s := range req.Stop {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, ']')
	}
	return b
}

// appendTools writes the tools and tool_choice. respond, when set, is the tool that carries
// a JSON answer (ByTool): it follows the client's tools, and the model must call it, or with
// the client's tools on offer (tool_choice auto) call one of them or it.
func appendTools(b []byte, req *llm.Request, respond string) []byte {
	if len(req.Tools) == 0 && respond == "" {
		return b
	}
	b = append(b, `,"tools":[`...)
	for i := range req.Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTool(b, &req.Tools[i])
	}
	if respond != "" {
		if len(req.Tools) > 0 {
			b = append(b, ',')
		}
		b = appendRespondTool(b, req, respond)
	}
	b = append(b, ']')
	tc := req.ToolChoice
	if respond != "" {
		forced := &llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: respond}
		if len(req.Tools) > 0 && (tc == nil || tc.Mode == llm.ToolChoiceAuto) {
			forced = &llm.ToolChoice{Mode: llm.ToolChoiceRequired, DisableParallel: tc != nil && tc.DisableParallel}
		}
		tc = forced
	}
	// Without tools there is nothing to choose from, and Anthropic refuses a tool_choice
	// alone; OpenAI allows "none" there, which means the same as leaving it out.
	if tc != nil && (len(req.Tools) > 0 || respond != "") {
		b = append(b, `,"tool_choice":`...)
		b = appendToolChoice(b, tc)
	}
	return b
}

// defaultTopP reports a top_p of 1 from an OpenAI door: no nucleus cut, the same as sending
// none. LlamaIndex.TS sends it on every request beside its temperature, which a one-sampler
// model refuses, so it is not sent there. A Messages door client's body goes as it came.
func defaultTopP(req *llm.Request) bool {
	return req.TopP != nil && *req.TopP == 1 && req.PassThrough != llm.WireAnthropic
}

func maxTokens(req *llm.Request, t providers.Target) int {
	switch {
	case req.MaxTokens != nil:
		return *req.MaxTokens
	case t.MaxOutputTokens > 0:
		return t.MaxOutputTokens
	}
	return DefaultMaxTokens
}

// appendSystem writes the system prompt and a comma: a string for one plain text, text blocks for
// several (so their boundaries survive) or for any with cache_control. Empty texts say
// nothing and Anthropic refuses empty text blocks, so they are left out.
func appendSystem(b []byte, parts []llm.Part) []byte {
	n, blocks := 0, false
	for i := range parts {
		if parts[i].Text != "" || parts[i].Raw != nil {
			n++
			blocks = blocks || parts[i].CacheControl != nil || parts[i].Raw != nil
		}
	}
	switch {
	case n == 0:
		return b
	case n == 1 && !blocks:
		for i := range parts {
			if parts[i].Text != "" {
				b = append(b, `"system":`...)
				return append(appendString(b, parts[i].Text), ',')
			}
		}
	}
	b = append(b, `"system":[`...)
	first := true
	for i := range parts {
		p := &parts[i]
		if p.Text == "" && p.Raw == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendBlock(b, p)
	}
	return append(b, ']', ',')
}

// appendTurns writes the conversation, merging consecutive messages of one role into one
// turn as Anthropic would: that is what puts every tool result in the one user message that
// must follow the tool_use turn, and they come first in it because decoding already made
// each result directly follow its call. A system message kept in place is its own turn.
func appendTurns(b []byte, msgs []llm.Message) []byte {
	b = append(b, '[')
	role := ""
	open := false
	for i := range msgs {
		m := &msgs[i]
		if m.Role != role || m.Role == llm.RoleSystem || len(m.Extra) > 0 || (i > 0 && len(msgs[i-1].Extra) > 0) {
			if open {
				b = append(b, "]}"...)
				b = append(b, ',')
			}
			role = m.Role
			b = append(b, `{"role":`...)
			b = appendString(b, roleOf(m.Role))
			for _, f := range m.Extra {
				b = append(b, ',')
				b = appendString(b, f.Name)
				b = append(b, ':')
				b = append(b, f.Value...)
			}
			b = append(b, `,"content":[`...)
			open = true
		} else {
			b = append(b, ',')
		}
		b = appendParts(b, m)
	}
	if open {
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

func roleOf(role string) string {
	if role == llm.RoleDeveloper {
		return llm.RoleSystem
	}
	return role
}

// appendParts writes a message's blocks. An assistant turn's empty text (OpenAI's content ""
// beside tool calls) says nothing and is left out, as Anthropic refuses empty text blocks.
func appendParts(b []byte, m *llm.Message) []byte {
	first := true
	for j := range m.Parts {
		p := &m.Parts[j]
		if p.Kind == llm.PartText && p.Text == "" && p.Raw == nil && m.Role == llm.RoleAssistant {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendBlock(b, p)
	}
	return b
}

func appendBlock(b []byte, p *llm.Part) []byte {
	if p.Raw != nil {
		return append(b, p.Raw...)
	}
	switch p.Kind {
	case llm.PartToolUse:
		b = append(b, `{"type":"tool_use","id":`...)
		b = appendString(b, ToolID(p.ID))
		b = append(b, `,"name":`...)
		b = appendString(b, p.Name)
		b = append(b, `,"input":`...)
		b = appendObject(b, p.Input)
	case llm.PartToolResult:
		b = append(b, `{"type":"tool_result","tool_use_id":`...)
		b = appendString(b, ToolID(p.ToolUseID))
		// content is optional; an empty text block would be refused.
		if p.Content != nil {
			b = append(b, `,"content":[`...)
			for i := range p.Content {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendBlock(b, &p.Content[i])
			}
			b = append(b, ']')
		} else if p.Text != "" {
			b = append(b, `,"content":`...)
			b = appendString(b, p.Text)
		}
		if p.IsError {
			b = append(b, `,"is_error":true`...)
		}
	case llm.PartImage:
		b = append(b, `{"type":"image","source":`...)
		if p.URL != "" {
			b = append(b, `{"type":"url","url":`...)
			b = appendString(b, p.URL)
		} else {
			b = append(b, `{"type":"base64","media_type":`...)
			b = appendString(b, p.MediaType)
			b = append(b, `,"data":`...)
			b = appendString(b, p.Data)
		}
		b = append(b, '}')
	case llm.PartThinking:
		b = append(b, `{"type":"thinking","thinking":`...)
		b = appendString(b, p.Text)
		b = append(b, `,"signature":`...)
		b = appendString(b, p.Signature)
	case llm.PartRedactedThinking:
		b = append(b, `{"type":"redacted_thinking","data":`...)
		b = appendString(b, p.Data)
	default:
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, p.Text)
	}
	if p.CacheControl != nil {
		b = append(b, `,"cache_control":`...)
		b = append(b, p.CacheControl...)
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

func appendTool(b []byte, t *llm.Tool) []byte {
	if t.Raw != nil {
		return append(b, t.Raw...)
	}
	b = append(b, `{"name":`...)
	b = appendString(b, t.Name)
	if t.Description != "" {
		b = append(b, `,"description":`...)
		b = appendString(b, t.Description)
	}
	b = append(b, `,"input_schema":`...)
	b = appendSchema(b, t.Parameters)
	if t.Strict != nil {
		b = append(b, `,"strict":`...)
		b = strconv.AppendBool(b, *t.Strict)
	}
	if t.DeferLoading {
		b = append(b, `,"defer_loading":true`...)
	}
	if t.CacheControl != nil {
		b = append(b, `,"cache_control":`...)
		b = append(b, t.CacheControl...)
	}
	return append(b, '}')
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
	if len(ps) == 0 || ps[0] != '{' || !json.Valid(ps) {
		return "", false
	}
	var raw []byte
	_ = jsonx.Members(ps, func(key string, v []byte) error {
		if key == "type" {
			raw = v
		}
		return nil
	})
	if raw == nil {
		return "", false
	}
	var t string
	if json.Unmarshal(raw, &t) != nil {
		return string(raw), true // a list of types is not "object"
	}
	return t, true
}

func appendToolChoice(b []byte, tc *llm.ToolChoice) []byte {
	switch tc.Mode {
	case llm.ToolChoiceRequired:
		b = append(b, `{"type":"any"`...)
	case llm.ToolChoiceNone:
		b = append(b, `{"type":"none"`...)
	case llm.ToolChoiceTool:
		b = append(b, `{"type":"tool","name":`...)
		b = appendString(b, tc.Name)
	default:
		b = append(b, `{"type":"auto"`...)
	}
	if tc.DisableParallel {
		b = append(b, `,"disable_parallel_tool_use":true`...)
	}
	return append(b, '}')
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

func appendString(b []byte, s string) []byte { return jsonx.AppendString(b, s) }

// Betas returns the client's anthropic-beta flags as one header value, or "".
func Betas(req *llm.Request) string {
	if req.Anthropic == nil {
		return ""
	}
	return strings.Join(req.Anthropic.Betas, ",")
}

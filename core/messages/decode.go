package messages

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
)

// Bounds the API leaves open: stop sequences, betas, and content nesting (a tool_result holds
// blocks, which hold nothing). How many messages and tools a request may carry is configurable
// (llm.Limits; Anthropic itself allows 100,000 messages).
const (
	maxStopSequences = 64
	maxBetas         = 32
	maxNesting       = 128
)

// Versions are the anthropic-version values the door accepts: the API's dated versions that
// the Anthropic SDKs send (the v1 SDKs and Claude Code 2023-06-01, the v2 SDKs 2026-10-21).
var Versions = []string{"2023-06-01", "2023-01-01", "2026-10-21"}

// anthropicOnly are top-level fields Anthropic accepts that only Anthropic-wire backends can
// honour; they are kept verbatim and every other route refuses them (see Refusal).
var anthropicOnly = map[string]bool{
	"service_tier": true, "container": true, "context_management": true, "mcp_servers": true,
	"output_config": true, "output_format": true, "inference_geo": true, "speed": true,
	"cache_control": true, "diagnostics": true,
	// beta fields
	"fallbacks": true, "thread": true, "billing_policy": true, "compaction": true, "fallback_credit_token": true,
}

// Decode decodes and validates a POST /v1/messages body with its headers into the gateway's
// request. What Anthropic would refuse is refused the same way (400 invalid_request_error
// with the field's path); what Anthropic accepts is accepted, and a route that cannot honour
// it refuses it later, at planning, with the reason.
func Decode(body []byte, h http.Header, lim llm.Limits) (*llm.Request, *llm.Error) {
	return decode(body, h, lim.WithDefaults(), false)
}

// DecodeCountTokens decodes a POST /v1/messages/count_tokens body: the same request without
// max_tokens, stream and the sampling settings.
func DecodeCountTokens(body []byte, h http.Header, lim llm.Limits) (*llm.Request, *llm.Error) {
	return decode(body, h, lim.WithDefaults(), true)
}

func decode(body []byte, h http.Header, lim llm.Limits, counting bool) (*llm.Request, *llm.Error) {
	req := &llm.Request{LateSystem: llm.LateSystemHoist, MaxTokensParam: "max_tokens"}
	if e := decodeHeaders(h, req); e != nil {
		return nil, e
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, invalid("", "the request body is empty: send a JSON object")
	}
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		msg := "invalid JSON"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, invalid("", "the request body is not valid JSON ("+msg+")")
	}
	if jsonx.KindOf(body) != jsonx.Object {
		return nil, invalid("", "the request body must be a JSON object")
	}
	if jsonx.Depth(body) > maxNesting {
		return nil, invalid("", "the request nests deeper than "+strconv.Itoa(maxNesting)+" levels")
	}
	d := decoder{req: req, lim: lim, counting: counting}
	seen := map[string]bool{}
	err := jsonx.Members(body, func(key string, v []byte) error {
		seen[key] = true
		return d.member(key, v)
	})
	if e := asError(err); e != nil {
		return nil, e
	}
	if req.Model == "" {
		return nil, invalid("model", "model: Field required")
	}
	if !seen["messages"] {
		return nil, invalid("messages", "messages: Field required")
	}
	if !counting && !seen["max_tokens"] {
		return nil, invalid("max_tokens", "max_tokens: Field required")
	}
	if e := validatePairs(req.Messages); e != nil {
		return nil, e
	}
	if e := d.finish(); e != nil {
		return nil, e
	}
	return req, nil
}

func decodeHeaders(h http.Header, req *llm.Request) *llm.Error {
	a := &llm.Anthropic{Version: h.Get("Anthropic-Version")}
	switch {
	case a.Version == "":
		return invalid("anthropic-version", "anthropic-version: header is required")
	case !contains(Versions, a.Version):
		return invalid("anthropic-version", "anthropic-version: invalid version "+strconv.Quote(a.Version)+" (this gateway accepts "+strings.Join(Versions, ", ")+")")
	}
	for _, line := range h.Values("Anthropic-Beta") {
		for _, f := range strings.Split(line, ",") {
			if f = strings.TrimSpace(f); f != "" && !contains(a.Betas, f) {
				a.Betas = append(a.Betas, f)
			}
		}
	}
	if len(a.Betas) > maxBetas {
		return invalid("anthropic-beta", "anthropic-beta: too many beta flags")
	}
	req.Anthropic = a
	req.Session = h.Get("X-Claude-Code-Session-Id")
	if len(req.Session) > 128 {
		req.Session = req.Session[:128]
	}
	return nil
}

type decoder struct {
	req      *llm.Request
	lim      llm.Limits
	counting bool
	choice   *llm.ToolChoice
}

// fieldError carries an *llm.Error through jsonx callbacks.
type fieldError struct{ e *llm.Error }

func (f *fieldError) Error() string { return f.e.Message }

func fail(param, msg string) error { return &fieldError{invalid(param, msg)} }

func asError(err error) *llm.Error {
	if err == nil {
		return nil
	}
	if fe, ok := err.(*fieldError); ok {
		return fe.e
	}
	if de, ok := err.(*jsonx.DuplicateError); ok {
		return invalid(de.Key, de.Key+": the key appears more than once in one object")
	}
	return invalid("", err.Error())
}

func (d *decoder) member(key string, v []byte) error {
	r := d.req
	switch key {
	case "model":
		s, err := str(key, v)
		r.Model = s
		return err
	case "messages":
		return d.messages(v)
	case "system":
		return d.system(v)
	case "tools":
		return d.tools(v)
	case "tool_choice":
		return d.toolChoice(v)
	case "thinking":
		return d.thinking(v)
	}
	if d.counting {
		if anthropicOnly[key] {
			r.Anthropic.Fields = append(r.Anthropic.Fields, llm.RawField{Name: key, Value: json.RawMessage(v)})
			return nil
		}
		return fail(key, key+": Extra inputs are not permitted")
	}
	switch key {
	case "max_tokens":
		n, err := integer(key, v)
		if err == nil && n < 1 {
			err = fail(key, "max_tokens: Input should be greater than or equal to 1")
		}
		r.MaxTokens = &n
		return err
	case "stream":
		b, err := boolean(key, v)
		r.Stream = b
		return err
	case "temperature":
		f, err := number(key, v, 0, 1)
		r.Temperature = f
		return err
	case "top_p":
		f, err := number(key, v, 0, 1)
		r.TopP = f
		return err
	case "top_k":
		n, err := integer(key, v)
		if err == nil && n < 0 {
			err = fail(key, "top_k: Input should be greater than or equal to 0")
		}
		if jsonx.KindOf(v) != jsonx.Null {
			r.TopK = &n
		}
		return err
	case "stop_sequences":
		return d.stopSequences(v)
	case "metadata":
		return d.metadata(v)
	}
	if anthropicOnly[key] {
		r.Anthropic.Fields = append(r.Anthropic.Fields, llm.RawField{Name: key, Value: json.RawMessage(v)})
		return nil
	}
	return fail(key, key+": Extra inputs are not permitted")
}

func (d *decoder) finish() *llm.Error {
	r := d.req
	if d.choice != nil {
		if len(r.Tools) == 0 && d.choice.Mode != llm.ToolChoiceNone {
			return invalid("tool_choice", "tool_choice: may only be specified while providing tools")
		}
		if d.choice.Mode == llm.ToolChoiceTool && !hasTool(r.Tools, d.choice.Name) {
			return invalid("tool_choice.name", "tool_choice.name: "+strconv.Quote(d.choice.Name)+" is not one of the tools")
		}
		r.ToolChoice = d.choice
	}
	if t := r.Thinking; t != nil && t.Type == llm.ThinkingEnabled && r.MaxTokens != nil && t.BudgetTokens >= *r.MaxTokens {
		return invalid("thinking.budget_tokens", "thinking.budget_tokens: must be less than max_tokens")
	}
	return nil
}

func (d *decoder) stopSequences(v []byte) error {
	if jsonx.KindOf(v) == jsonx.Null {
		return nil
	}
	if jsonx.KindOf(v) != jsonx.Array {
		return fail("stop_sequences", "stop_sequences: Input should be a valid list")
	}
	err := jsonx.Elements(v, func(i int, el []byte) error {
		p := "stop_sequences." + strconv.Itoa(i)
		s, err := str(p, el)
		if err == nil && strings.TrimSpace(s) == "" {
			err = fail(p, p+": stop sequences must contain non-whitespace")
		}
		d.req.Stop = append(d.req.Stop, s)
		return err
	})
	if err == nil && len(d.req.Stop) > maxStopSequences {
		err = fail("stop_sequences", "stop_sequences: at most "+strconv.Itoa(maxStopSequences)+" sequences")
	}
	return err
}

func (d *decoder) metadata(v []byte) error {
	if jsonx.KindOf(v) == jsonx.Null {
		return nil
	}
	if jsonx.KindOf(v) != jsonx.Object {
		return fail("metadata", "metadata: Input should be a valid dictionary")
	}
	return jsonx.Members(v, func(key string, el []byte) error {
		if key != "user_id" {
			return fail("metadata."+key, "metadata."+key+": Extra inputs are not permitted")
		}
		if jsonx.KindOf(el) == jsonx.Null {
			return nil
		}
		s, err := str("metadata.user_id", el)
		if err == nil && len(s) > 256 {
			err = fail("metadata.user_id", "metadata.user_id: String should have at most 256 characters")
		}
		d.req.Anthropic.UserID = s
		d.req.User = s
		return err
	})
}

func (d *decoder) system(v []byte) error {
	switch jsonx.KindOf(v) {
	case jsonx.Null:
		return nil
	case jsonx.String:
		s, _ := str("system", v)
		if s != "" {
			d.req.System = []llm.Part{{Kind: llm.PartText, Text: s}}
		}
		return nil
	case jsonx.Array:
		return jsonx.Elements(v, func(i int, el []byte) error {
			p, err := textBlock("system."+strconv.Itoa(i), el)
			d.req.System = append(d.req.System, p)
			return err
		})
	}
	return fail("system", "system: Input should be a valid string or a list of text blocks")
}

// textBlock decodes a block that must be text (system prompts, system-role messages).
func textBlock(path string, v []byte) (llm.Part, error) {
	if jsonx.KindOf(v) != jsonx.Object {
		return llm.Part{}, fail(path, path+": Input should be a valid dictionary")
	}
	typ, err := blockType(path, v)
	if err != nil {
		return llm.Part{}, err
	}
	if typ != "text" {
		return llm.Part{}, fail(path+".type", path+".type: expected \"text\", got "+strconv.Quote(typ))
	}
	return block(path, v, "system")
}

func (d *decoder) messages(v []byte) error {
	if jsonx.KindOf(v) != jsonx.Array {
		return fail("messages", "messages: Input should be a valid list")
	}
	n := jsonx.Count(v)
	if n > d.lim.MaxMessages {
		return fail("messages", "messages: too many messages: "+strconv.Itoa(n)+" (this gateway's limit is "+strconv.Itoa(d.lim.MaxMessages)+")")
	}
	d.req.Messages = make([]llm.Message, 0, n)
	return jsonx.Elements(v, func(i int, el []byte) error {
		m, err := message("messages."+strconv.Itoa(i), el, i == n-1)
		d.req.Messages = append(d.req.Messages, m)
		return err
	})
}

func message(path string, v []byte, last bool) (llm.Message, error) {
	var m llm.Message
	if jsonx.KindOf(v) != jsonx.Object {
		return m, fail(path, path+": Input should be a valid dictionary")
	}
	var content []byte
	err := jsonx.Members(v, func(key string, el []byte) error {
		switch key {
		case "role":
			s, err := str(path+".role", el)
			m.Role = s
			return err
		case "content":
			content = el
			return nil
		}
		// Per-turn settings of newer betas (output_config under per-turn-control): only
		// Anthropic-wire routes can honour them.
		m.Extra = append(m.Extra, llm.RawField{Name: key, Value: json.RawMessage(el)})
		return nil
	})
	if err != nil {
		return m, err
	}
	switch m.Role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleSystem:
	case "":
		return m, fail(path+".role", path+".role: Field required")
	default:
		return m, fail(path+".role", path+".role: Input should be 'user', 'assistant' or 'system'")
	}
	cp := path + ".content"
	switch jsonx.KindOf(content) {
	case jsonx.Invalid:
		return m, fail(cp, cp+": Field required")
	case jsonx.String:
		s, _ := str(cp, content)
		m.Parts = []llm.Part{{Kind: llm.PartText, Text: s}}
		if s == "" && !(last && m.Role == llm.RoleAssistant) {
			return m, fail(cp, path+": all messages must have non-empty content except for the optional final assistant message")
		}
		return m, nil
	case jsonx.Array:
		err := jsonx.Elements(content, func(i int, el []byte) error {
			p, err := block(cp+"."+strconv.Itoa(i), el, m.Role)
			m.Parts = append(m.Parts, p)
			return err
		})
		if err != nil {
			return m, err
		}
		if len(m.Parts) == 0 && !(last && m.Role == llm.RoleAssistant) {
			return m, fail(cp, path+": all messages must have non-empty content except for the optional final assistant message")
		}
		return m, nil
	}
	return m, fail(cp, cp+": Input should be a valid string or a list of content blocks")
}

// blockTypes says which roles may carry each block type the gateway models. Other types
// (document, search_result, server_tool_use, web_search_tool_result, mcp_tool_use, ...) are
// kept verbatim for Anthropic-wire routes, which validate them.
var blockTypes = map[string]string{
	"text": "user assistant system", "image": "user", "tool_result": "user",
	"tool_use": "assistant", "thinking": "assistant", "redacted_thinking": "assistant",
}

func blockType(path string, v []byte) (string, error) {
	typ := ""
	var err error
	found := false
	jerr := jsonx.Members(v, func(key string, el []byte) error {
		if key == "type" {
			found = true
			typ, err = str(path+".type", el)
		}
		return nil
	})
	if jerr != nil {
		return "", jerr
	}
	if err != nil {
		return "", err
	}
	if !found || typ == "" {
		return "", fail(path+".type", path+".type: Field required")
	}
	return typ, nil
}

// block decodes one content block. A modelled block whose members include one the gateway
// does not model (citations on text, caller on tool_use, ...) keeps the whole block in Raw:
// Anthropic-wire routes send it verbatim, and other routes refuse it rather than drop the
// member.
func block(path string, v []byte, role string) (llm.Part, error) {
	var p llm.Part
	if jsonx.KindOf(v) != jsonx.Object {
		return p, fail(path, path+": Input should be a valid dictionary")
	}
	typ, err := blockType(path, v)
	if err != nil {
		return p, err
	}
	roles, modelled := blockTypes[typ]
	if !modelled {
		return llm.Part{Kind: llm.PartRaw, Name: typ, Raw: json.RawMessage(v)}, nil
	}
	if !strings.Contains(roles, role) {
		return p, fail(path+".type", path+": a "+typ+" block is not allowed in a "+role+" message")
	}
	have := map[string]bool{}
	extra := false
	err = jsonx.Members(v, func(key string, el []byte) error {
		have[key] = true
		fp := path + "." + key
		var err error
		switch typ + "." + key {
		case typ + ".type":
		case typ + ".cache_control":
			if jsonx.KindOf(el) != jsonx.Null {
				if jsonx.KindOf(el) != jsonx.Object {
					return fail(fp, fp+": Input should be a valid dictionary")
				}
				p.CacheControl = json.RawMessage(el)
			}
		case "text.text":
			p.Kind = llm.PartText
			p.Text, err = str(fp, el)
		case "thinking.thinking":
			p.Kind = llm.PartThinking
			p.Text, err = str(fp, el)
		case "thinking.signature":
			p.Signature, err = str(fp, el)
		case "redacted_thinking.data":
			p.Kind = llm.PartRedactedThinking
			p.Data, err = str(fp, el)
		case "tool_use.id":
			p.ID, err = str(fp, el)
		case "tool_use.name":
			p.Name, err = str(fp, el)
		case "tool_use.input":
			if jsonx.KindOf(el) != jsonx.Object {
				return fail(fp, fp+": Input should be a valid dictionary")
			}
			p.Input = compact(el)
		case "tool_result.tool_use_id":
			p.ToolUseID, err = str(fp, el)
		case "tool_result.is_error":
			p.IsError, err = boolean(fp, el)
		case "tool_result.content":
			err = toolResultContent(&p, fp, el)
		case "image.source":
			err = imageSource(&p, fp, el)
		default:
			extra = true
		}
		return err
	})
	if err != nil {
		return p, err
	}
	required := map[string][]string{
		"text": {"text"}, "thinking": {"thinking", "signature"}, "redacted_thinking": {"data"},
		"tool_use": {"id", "name", "input"}, "tool_result": {"tool_use_id"}, "image": {"source"},
	}[typ]
	for _, k := range required {
		if !have[k] {
			return p, fail(path+"."+k, path+"."+k+": Field required")
		}
	}
	switch typ {
	case "tool_use":
		p.Kind = llm.PartToolUse
		if !llm.ValidToolName(p.Name, 128) {
			return p, fail(path+".name", path+".name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'")
		}
	case "tool_result":
		p.Kind = llm.PartToolResult
	case "image":
		p.Kind = llm.PartImage
		extra = extra || p.Data == "" && p.URL == "" // a Files API image
	}
	if extra {
		p.Raw = json.RawMessage(v)
	}
	return p, nil
}

func toolResultContent(p *llm.Part, path string, v []byte) error {
	switch jsonx.KindOf(v) {
	case jsonx.String:
		s, _ := str(path, v)
		p.Text = s
		return nil
	case jsonx.Array:
		p.Content = []llm.Part{}
		return jsonx.Elements(v, func(i int, el []byte) error {
			bp := path + "." + strconv.Itoa(i)
			typ, err := blockType(bp, el)
			if err != nil {
				return err
			}
			var c llm.Part
			switch typ {
			case "text", "image":
				c, err = block(bp, el, llm.RoleUser)
			default:
				// search_result, document: Anthropic-only content
				c = llm.Part{Kind: llm.PartRaw, Name: typ, Raw: json.RawMessage(el)}
			}
			p.Content = append(p.Content, c)
			return err
		})
	}
	return fail(path, path+": Input should be a valid string or a list of content blocks")
}

func imageSource(p *llm.Part, path string, v []byte) error {
	if jsonx.KindOf(v) != jsonx.Object {
		return fail(path, path+": Input should be a valid dictionary")
	}
	typ := ""
	err := jsonx.Members(v, func(key string, el []byte) error {
		var err error
		switch key {
		case "type":
			typ, err = str(path+".type", el)
		case "media_type":
			p.MediaType, err = str(path+".media_type", el)
		case "data":
			p.Data, err = str(path+".data", el)
		case "url":
			p.URL, err = str(path+".url", el)
		case "file_id":
			p.Name, err = str(path+".file_id", el)
		default:
			err = fail(path+"."+key, path+"."+key+": Extra inputs are not permitted")
		}
		return err
	})
	if err != nil {
		return err
	}
	switch typ {
	case "base64":
		switch p.MediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return fail(path+".media_type", path+".media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
		}
		if p.Data == "" {
			return fail(path+".data", path+".data: Field required")
		}
	case "url":
		if !strings.HasPrefix(p.URL, "https://") && !strings.HasPrefix(p.URL, "http://") {
			return fail(path+".url", path+".url: an http(s) URL is required")
		}
	case "file":
		// A Files API reference: only Anthropic itself can resolve it; block keeps the whole
		// block raw for Anthropic-wire routes.
		if p.Name == "" {
			return fail(path+".file_id", path+".file_id: Field required")
		}
	default:
		return fail(path+".type", path+".type: Input should be 'base64', 'url' or 'file'")
	}
	return nil
}

func (d *decoder) tools(v []byte) error {
	if jsonx.KindOf(v) == jsonx.Null {
		return nil
	}
	if jsonx.KindOf(v) != jsonx.Array {
		return fail("tools", "tools: Input should be a valid list")
	}
	if n := jsonx.Count(v); n > d.lim.MaxTools {
		return fail("tools", "tools: too many tools: "+strconv.Itoa(n)+" (this gateway's limit is "+strconv.Itoa(d.lim.MaxTools)+")")
	}
	return jsonx.Elements(v, func(i int, el []byte) error {
		t, err := tool("tools."+strconv.Itoa(i), el)
		if err == nil && t.Name != "" && hasTool(d.req.Tools, t.Name) {
			err = fail("tools."+strconv.Itoa(i)+".name", "tools: tool names must be unique ("+strconv.Quote(t.Name)+")")
		}
		d.req.Tools = append(d.req.Tools, t)
		return err
	})
}

// tool decodes one tool. A custom (function) tool is modelled; a server tool (a "type" such
// as web_search_20250305 or bash_20250124) and a custom tool with members the gateway does
// not model keep Raw for Anthropic-wire routes.
func tool(path string, v []byte) (llm.Tool, error) {
	var t llm.Tool
	if jsonx.KindOf(v) != jsonx.Object {
		return t, fail(path, path+": Input should be a valid dictionary")
	}
	typ := ""
	hasSchema, extra := false, false
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := path + "." + key
		var err error
		switch key {
		case "type":
			typ, err = str(fp, el)
		case "name":
			t.Name, err = str(fp, el)
		case "description":
			t.Description, err = str(fp, el)
		case "input_schema":
			hasSchema = true
			t.Parameters = json.RawMessage(el)
		case "cache_control":
			if jsonx.KindOf(el) != jsonx.Null {
				t.CacheControl = json.RawMessage(el)
			}
		case "strict":
			var b bool
			b, err = boolean(fp, el)
			t.Strict = &b
		case "defer_loading":
			t.DeferLoading, err = boolean(fp, el)
		default:
			extra = true
		}
		return err
	})
	if err != nil {
		return t, err
	}
	if typ != "" && typ != "custom" {
		// A server tool Anthropic runs itself.
		if t.Name == "" {
			return t, fail(path+".name", path+".name: Field required")
		}
		t.Raw = json.RawMessage(v)
		return t, nil
	}
	if !llm.ValidToolName(t.Name, 128) {
		return t, fail(path+".name", path+".name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'")
	}
	if !hasSchema {
		return t, fail(path+".input_schema", path+".input_schema: Field required")
	}
	if jsonx.KindOf(t.Parameters) != jsonx.Object {
		return t, fail(path+".input_schema", path+".input_schema: Input should be a valid dictionary")
	}
	if extra {
		t.Raw = json.RawMessage(v)
	}
	return t, nil
}

func (d *decoder) toolChoice(v []byte) error {
	if jsonx.KindOf(v) == jsonx.Null {
		return nil
	}
	if jsonx.KindOf(v) != jsonx.Object {
		return fail("tool_choice", "tool_choice: Input should be a valid dictionary")
	}
	c := &llm.ToolChoice{}
	typ := ""
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := "tool_choice." + key
		var err error
		switch key {
		case "type":
			typ, err = str(fp, el)
		case "name":
			c.Name, err = str(fp, el)
		case "disable_parallel_tool_use":
			c.DisableParallel, err = boolean(fp, el)
		default:
			err = fail(fp, fp+": Extra inputs are not permitted")
		}
		return err
	})
	if err != nil {
		return err
	}
	switch typ {
	case "auto":
		c.Mode = llm.ToolChoiceAuto
	case "any":
		c.Mode = llm.ToolChoiceRequired
	case "none":
		c.Mode = llm.ToolChoiceNone
	case "tool":
		c.Mode = llm.ToolChoiceTool
		if c.Name == "" {
			return fail("tool_choice.name", "tool_choice.name: Field required")
		}
	case "":
		return fail("tool_choice.type", "tool_choice.type: Field required")
	default:
		return fail("tool_choice.type", "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
	}
	if c.Mode != llm.ToolChoiceTool && c.Name != "" {
		return fail("tool_choice.name", "tool_choice.name: Extra inputs are not permitted")
	}
	d.choice = c
	return nil
}

func (d *decoder) thinking(v []byte) error {
	if jsonx.KindOf(v) == jsonx.Null {
		return nil
	}
	if jsonx.KindOf(v) != jsonx.Object {
		return fail("thinking", "thinking: Input should be a valid dictionary")
	}
	t := &llm.Thinking{Raw: json.RawMessage(v)}
	hasBudget := false
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := "thinking." + key
		var err error
		switch key {
		case "type":
			t.Type, err = str(fp, el)
		case "budget_tokens":
			hasBudget = true
			t.BudgetTokens, err = integer(fp, el)
		case "display":
			t.Display, err = str(fp, el)
		default:
			err = fail(fp, fp+": Extra inputs are not permitted")
		}
		return err
	})
	if err != nil {
		return err
	}
	switch t.Type {
	case llm.ThinkingEnabled:
		if !hasBudget {
			return fail("thinking.budget_tokens", "thinking.budget_tokens: Field required")
		}
		if t.BudgetTokens < 1024 {
			return fail("thinking.budget_tokens", "thinking.budget_tokens: Input should be greater than or equal to 1024")
		}
	case llm.ThinkingAdaptive, llm.ThinkingDisabled:
		if hasBudget {
			return fail("thinking.budget_tokens", "thinking.budget_tokens: Extra inputs are not permitted")
		}
	case "":
		return fail("thinking.type", "thinking.type: Field required")
	default:
		return fail("thinking.type", "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'")
	}
	d.req.Thinking = t
	return nil
}

// validatePairs applies Anthropic's tool rules: each tool_use of an assistant message is
// answered by a tool_result in the user message right after it, and a tool_result answers a
// tool_use of the assistant message right before it. Backends that take results as separate
// messages (OpenAI-wire, Gemini) rely on it.
func validatePairs(msgs []llm.Message) *llm.Error {
	var pending []string
	pendingFrom := 0
	for i := range msgs {
		m := &msgs[i]
		if m.Role == llm.RoleSystem {
			continue
		}
		path := "messages." + strconv.Itoa(i)
		if m.Role == llm.RoleUser {
			for j := range m.Parts {
				if m.Parts[j].Kind != llm.PartToolResult {
					continue
				}
				id := m.Parts[j].ToolUseID
				k := indexOf(pending, id)
				if k < 0 {
					return invalid(path+".content."+strconv.Itoa(j), path+".content."+strconv.Itoa(j)+": unexpected `tool_use_id` found in `tool_result` blocks: "+id+
						". Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")
				}
				pending = append(pending[:k], pending[k+1:]...)
			}
		}
		if len(pending) > 0 {
			return invalid("messages."+strconv.Itoa(pendingFrom), "messages."+strconv.Itoa(pendingFrom)+": `tool_use` ids were found without `tool_result` blocks immediately after: "+
				strings.Join(pending, ", ")+". Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
		}
		if m.Role == llm.RoleAssistant {
			for j := range m.Parts {
				if m.Parts[j].Kind == llm.PartToolUse {
					if indexOf(pending, m.Parts[j].ID) >= 0 {
						return invalid(path, path+": duplicate tool_use id "+m.Parts[j].ID)
					}
					pending = append(pending, m.Parts[j].ID)
				}
			}
			pendingFrom = i
		}
	}
	// A final assistant message may end in tool_use (the client has not run them yet) only if
	// nothing follows; the model would be asked to continue a turn awaiting results.
	if len(pending) > 0 {
		return invalid("messages."+strconv.Itoa(pendingFrom), "messages."+strconv.Itoa(pendingFrom)+": `tool_use` ids were found without `tool_result` blocks immediately after: "+
			strings.Join(pending, ", ")+". Each `tool_use` block must have a corresponding `tool_result` block in the next message.")
	}
	return nil
}

func indexOf(s []string, v string) int {
	for i := range s {
		if s[i] == v {
			return i
		}
	}
	return -1
}

func contains(s []string, v string) bool { return indexOf(s, v) >= 0 }

func hasTool(tools []llm.Tool, name string) bool {
	for i := range tools {
		if tools[i].Name == name {
			return true
		}
	}
	return false
}

func str(path string, v []byte) (string, error) {
	if jsonx.KindOf(v) != jsonx.String {
		return "", fail(path, path+": Input should be a valid string")
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fail(path, path+": Input should be a valid string")
	}
	return s, nil
}

func integer(path string, v []byte) (int, error) {
	if jsonx.KindOf(v) != jsonx.Number {
		return 0, fail(path, path+": Input should be a valid integer")
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 32)
	if err != nil {
		return 0, fail(path, path+": Input should be a valid integer")
	}
	return int(n), nil
}

func number(path string, v []byte, lo, hi float64) (*float64, error) {
	if jsonx.KindOf(v) == jsonx.Null {
		return nil, nil
	}
	if jsonx.KindOf(v) != jsonx.Number {
		return nil, fail(path, path+": Input should be a valid number")
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fail(path, path+": Input should be a valid number")
	}
	if f < lo {
		return &f, fail(path, path+": Input should be greater than or equal to "+strconv.FormatFloat(lo, 'g', -1, 64))
	}
	if f > hi {
		return &f, fail(path, path+": Input should be less than or equal to "+strconv.FormatFloat(hi, 'g', -1, 64))
	}
	return &f, nil
}

func boolean(path string, v []byte) (bool, error) {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fail(path, path+": Input should be a valid boolean")
}

// compact renders a JSON value without insignificant whitespace, so tool input reads the
// same whoever spaced it.
func compact(v []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}

func invalid(param, msg string) *llm.Error { return llm.BadRequest(param, msg) }

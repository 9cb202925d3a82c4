package responses

import (
	"encoding/json"
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// hostedTools names the tool types OpenAI runs itself, for the refusal's wording; any other
// non-function type is refused the same way, as only OpenAI can know it.
var hostedTools = map[string]string{
	"web_search": "web search", "web_search_preview": "web search", "web_search_2025_08_26": "web search",
	"web_search_preview_2025_03_11": "web search", "file_search": "file search", "code_interpreter": "code interpreter",
	"computer_use_preview": "computer use", "computer": "computer use", "image_generation": "image generation",
	"mcp": "remote MCP", "local_shell": "local shell", "shell": "shell", "apply_patch": "apply_patch",
	"custom": "custom (free-form)", "tool_search": "tool search",
}

// tools decodes function tools into llm tools, and the functions of namespace tools under
// flattened names (namespace); every other tool is kept only for the native route (its raw
// definition is among the raw fields) and refused by the others.
func (d *decoder) tools(v []byte) error {
	if isNull(v) {
		return nil
	}
	if jsonx.KindOf(v) == jsonx.Array {
		if n := jsonx.Count(v); n > d.r.lim.MaxTools {
			return fail(bad("tools", "array_above_max_length", "Invalid 'tools': too many tools: "+strconv.Itoa(n)+" (this gateway's limit is "+strconv.Itoa(d.r.lim.MaxTools)+")."))
		}
	}
	// The response object repeats the tools in its own shape: a function tool with every
	// member the Responses API's FunctionTool has (null where the client sent none), any
	// other tool as sent.
	echo := append(make([]byte, 0, len(v)+64), '[')
	err := array("tools", v, func(i int, el []byte) error {
		p := at("tools", i)
		if i > 0 {
			echo = append(echo, ',')
		}
		typ, err := typeOf(p, el)
		if err != nil {
			return err
		}
		if typ == "namespace" {
			echo = append(echo, el...)
			return d.namespace(p, el)
		}
		if typ != "function" {
			echo = append(echo, el...)
			what, known := hostedTools[typ]
			if !known {
				what = typ
			}
			d.only(p, "the "+what+" tool runs at OpenAI")
			return nil
		}
		t, err := d.function(p, el)
		if err == nil && hasTool(d.r.LLM.Tools, t.Name) {
			if _, flat := d.r.namespaced[t.Name]; flat {
				// OpenAI keeps the two apart; only the flattened name collides.
				d.only(p+".name", "the function "+strconv.Quote(t.Name)+" has the name a namespace's function is given on routes other than OpenAI's")
				echo = appendFunctionEcho(echo, &t)
				return nil
			}
			err = fail(bad(p+".name", "invalid_value", "Invalid 'tools': duplicate function name '"+t.Name+"'."))
		}
		d.r.LLM.Tools = append(d.r.LLM.Tools, t)
		echo = appendFunctionEcho(echo, &t)
		return err
	})
	d.r.echo["tools"] = append(echo, ']')
	return err
}

// NamespaceSeparator joins a namespace and one of its functions into the one name a route
// other than OpenAI's is offered: Codex's MCP namespace mcp__gh and its function echo become
// mcp__gh__echo, the name Codex itself gave MCP tools before it grouped them.
const NamespaceSeparator = "__"

// maxFlatName bounds a flattened name: function names are at most 64 characters on the chat
// wire, Bedrock Converse and Gemini, the strictest of the translated routes.
const maxFlatName = 64

// namespacedName is a function of a namespace as the client named it.
type namespacedName struct{ namespace, name string }

// Flatten is the name a namespace's function is offered under on a route other than
// OpenAI's.
func Flatten(namespace, name string) string { return namespace + NamespaceSeparator + name }

// namespace decodes a namespace tool (Codex groups each MCP server's tools in one). OpenAI's
// Responses API calls a function in it by {namespace, name}; every other backend knows only
// flat function names, so each function is offered there as Flatten(namespace, name) and a
// call of that name is given back as {namespace, name} (unflatten). The native route is sent
// the tool as the client wrote it.
func (d *decoder) namespace(p string, v []byte) error {
	var ns, nsTools []byte
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		switch key {
		case "type":
		case "name":
			ns = el
		case "description":
			_, err := optStr(fp, el)
			return err
		case "tools":
			nsTools = el
		default:
			// Not a member this door knows OpenAI's namespace to have: OpenAI's to read.
			d.only(fp, fp+" is a member of a namespace tool only OpenAI's Responses API reads")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ns == nil {
		return missing(p + ".name")
	}
	name, err := str(p+".name", ns)
	if err != nil {
		return err
	}
	if nsTools == nil {
		return missing(p + ".tools")
	}
	return array(p+".tools", nsTools, func(j int, el []byte) error {
		fp := at(p+".tools", j)
		typ, err := typeOf(fp, el)
		if err != nil {
			return err
		}
		if typ != "function" {
			d.only(fp, "the namespace "+strconv.Quote(name)+" holds a "+typ+" tool, which only OpenAI's Responses API runs")
			return nil
		}
		t, err := d.function(fp, el)
		if err != nil {
			return err
		}
		flat := Flatten(name, t.Name)
		switch {
		case !llm.ValidToolName(flat, maxFlatName):
			d.only(fp+".name", "the namespace "+strconv.Quote(name)+"'s function "+strconv.Quote(t.Name)+" is offered to routes other than OpenAI's as "+
				strconv.Quote(flat)+", "+strconv.Itoa(len(flat))+" characters, which is longer than the "+strconv.Itoa(maxFlatName)+
				" they take: shorten the namespace or the function's name")
			return nil
		case hasTool(d.r.LLM.Tools, flat):
			d.only(fp+".name", "the namespace "+strconv.Quote(name)+"'s function "+strconv.Quote(t.Name)+" is offered to routes other than OpenAI's as "+
				strconv.Quote(flat)+", a name another tool has")
			return nil
		}
		if d.r.namespaced == nil {
			d.r.namespaced = map[string]namespacedName{}
		}
		d.r.namespaced[flat] = namespacedName{namespace: name, name: t.Name}
		t.Name = flat
		d.r.LLM.Tools = append(d.r.LLM.Tools, t)
		return nil
	})
}

// unflatten is the {namespace, name} a model's call of name stands for: a namespace's
// function this request offered flattened, or name itself with no namespace.
func (r *Request) unflatten(name string) (namespace, fn string) {
	if r != nil {
		if n, ok := r.namespaced[name]; ok {
			return n.namespace, n.name
		}
	}
	return "", name
}

// appendFunctionEcho writes a function tool as a response object lists it. strict is null
// when the client did not set it: a translated route then does not enforce the schema
// (OpenAI's own default, on, is OpenAI's to report, and its answer passes through).
func appendFunctionEcho(b []byte, t *llm.Tool) []byte {
	b = append(b, `{"type":"function","name":`...)
	b = openai.AppendString(b, t.Name)
	b = append(b, `,"description":`...)
	b = appendStringOrNull(b, t.Description)
	b = append(b, `,"parameters":`...)
	if t.Parameters != nil {
		b = append(b, t.Parameters...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"strict":`...)
	b = appendBoolOrNull(b, t.Strict)
	if t.DeferLoading {
		b = append(b, `,"defer_loading":true`...)
	}
	return append(b, '}')
}

func appendStringOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return openai.AppendString(b, s)
}

func appendBoolOrNull(b []byte, v *bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendBool(b, *v)
}

// typeOf returns an object's "type" member, which must be there.
func typeOf(param string, v []byte) (string, error) {
	if jsonx.KindOf(v) != jsonx.Object {
		return "", invalidType(param, "an object", v)
	}
	typ, found := "", false
	var err error
	_ = jsonx.Members(v, func(key string, el []byte) error {
		if key == "type" {
			found = true
			typ, err = str(param+".type", el)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if !found {
		return "", missing(param + ".type")
	}
	return typ, nil
}

var functionKeys = []string{"type", "name", "description", "parameters", "strict", "defer_loading"}

// function decodes a function tool. Members only OpenAI's Responses API acts on (async,
// allowed_callers, output_schema) make the tool native-only.
func (d *decoder) function(p string, v []byte) (llm.Tool, error) {
	var t llm.Tool
	named := false
	err := jsonx.Members(v, func(key string, el []byte) error {
		fp := p + "." + key
		var err error
		switch key {
		case "type":
		case "name":
			named = true
			t.Name, err = str(fp, el)
		case "description":
			t.Description, err = optStr(fp, el)
		case "parameters":
			if !isNull(el) {
				if jsonx.KindOf(el) != jsonx.Object {
					return invalidType(fp, "an object", el)
				}
				t.Parameters = json.RawMessage(el)
			}
		case "strict":
			if !isNull(el) {
				var b bool
				b, err = boolean(fp, el)
				t.Strict = &b
			}
		case "defer_loading":
			// Tool search loads such a tool on demand; every other backend is sent it as an
			// ordinary tool, which it can always call.
			if !isNull(el) {
				t.DeferLoading, err = boolean(fp, el)
			}
		case "async", "allowed_callers", "output_schema":
			if !isNull(el) {
				d.only(fp, fp+" is a setting of OpenAI's own tool runtime")
			}
		default:
			err = unknownParam(fp, key, functionKeys...)
		}
		return err
	})
	if err != nil {
		return t, err
	}
	if !named {
		return t, missing(p + ".name")
	}
	if !llm.ValidToolName(t.Name, 128) {
		return t, invalid(p+".name", "Invalid '"+p+".name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' of at most 128 characters.")
	}
	return t, nil
}

// toolChoice is tool_choice as decoded: a mode, or a named function.
type toolChoice struct {
	mode     string
	function string
}

// toolChoice accepts "auto" | "none" | "required" | {"type":"function","name":...}; choices
// of hosted tools, allowed_tools and the like are the native route's.
func (d *decoder) toolChoice(v []byte) error {
	if isNull(v) {
		return nil
	}
	if jsonx.KindOf(v) == jsonx.String {
		s, err := enum("tool_choice", v, "none", "auto", "required")
		switch s {
		case "none":
			d.choice = &toolChoice{mode: llm.ToolChoiceNone}
		case "auto":
			d.choice = &toolChoice{mode: llm.ToolChoiceAuto}
		case "required":
			d.choice = &toolChoice{mode: llm.ToolChoiceRequired}
		}
		return err
	}
	typ, err := typeOf("tool_choice", v)
	if err != nil {
		return err
	}
	if typ != "function" {
		d.only("tool_choice", "tool_choice of type "+typ+" picks a tool OpenAI runs or filters")
		d.choice = &toolChoice{}
		return nil
	}
	c := &toolChoice{mode: llm.ToolChoiceTool}
	err = jsonx.Members(v, func(key string, el []byte) error {
		switch key {
		case "type":
			return nil
		case "name":
			s, err := str("tool_choice.name", el)
			c.function = s
			return err
		}
		return unknownParam("tool_choice."+key, key, "type", "name")
	})
	if err != nil {
		return err
	}
	if c.function == "" {
		return missing("tool_choice.name")
	}
	d.choice = c
	return nil
}

// reasoning reads {effort, summary} (generate_summary is summary's deprecated name). The
// response object repeats both, null where not set.
func (d *decoder) reasoning(v []byte) error {
	if isNull(v) {
		return nil
	}
	effort := ""
	err := object("reasoning", v, func(key string, el []byte) error {
		p := "reasoning." + key
		switch key {
		case "effort":
			s, err := enumOrNull(p, el, "none", "minimal", "low", "medium", "high", "xhigh")
			effort = s
			if s != "none" {
				d.r.LLM.Responses.Effort = s
			}
			return err
		case "summary", "generate_summary":
			s, err := enumOrNull(p, el, "auto", "concise", "detailed")
			if s != "" {
				d.r.Summary = s
			}
			return err
		}
		return unknownParam(p, key, "effort", "summary", "generate_summary")
	})
	b := append(make([]byte, 0, 48), `{"effort":`...)
	b = appendStringOrNull(b, effort)
	b = append(b, `,"summary":`...)
	b = appendStringOrNull(b, d.r.Summary)
	d.r.echo["reasoning"] = append(b, '}')
	return err
}

// text reads {format, verbosity}. The response object repeats them with the format in full
// (text when none was given) and the verbosity when one was.
func (d *decoder) text(v []byte) error {
	if isNull(v) {
		return nil
	}
	verbosity := ""
	err := object("text", v, func(key string, el []byte) error {
		p := "text." + key
		switch key {
		case "format":
			return d.format(el)
		case "verbosity":
			s, err := enumOrNull(p, el, "low", "medium", "high")
			verbosity = s
			if s == "low" || s == "high" {
				d.only(p, "text.verbosity "+s+" is a setting of OpenAI's models")
			}
			return err
		}
		return unknownParam(p, key, "format", "verbosity")
	})
	b := appendFormatEcho(append(make([]byte, 0, 64), `{"format":`...), d.r.LLM.ResponseFormat)
	if verbosity != "" {
		b = append(b, `,"verbosity":`...)
		b = openai.AppendString(b, verbosity)
	}
	d.r.echo["text"] = append(b, '}')
	return err
}

// appendFormatEcho writes text.format as a response object lists it: a json_schema format
// with its description (null when none) and strict (false when not set, OpenAI's default).
func appendFormatEcho(b []byte, rf *llm.ResponseFormat) []byte {
	switch {
	case rf == nil:
		return append(b, `{"type":"text"}`...)
	case rf.Type != llm.FormatJSONSchema:
		b = append(b, `{"type":`...)
		b = openai.AppendString(b, rf.Type)
		return append(b, '}')
	}
	b = append(b, `{"type":"json_schema","name":`...)
	b = openai.AppendString(b, rf.Name)
	b = append(b, `,"description":`...)
	b = appendStringOrNull(b, rf.Description)
	b = append(b, `,"schema":`...)
	b = append(b, rf.Schema...)
	b = append(b, `,"strict":`...)
	b = strconv.AppendBool(b, rf.Strict != nil && *rf.Strict)
	return append(b, '}')
}

var formatKeys = []string{"type", "name", "schema", "strict", "description"}

// format reads text.format into llm.ResponseFormat: text is the default (nil), json_object
// and json_schema ask for structured output, which routes that cannot hold to it refuse.
func (d *decoder) format(v []byte) error {
	if isNull(v) {
		return nil
	}
	typ, err := typeOf("text.format", v)
	if err != nil {
		return err
	}
	rf := &llm.ResponseFormat{Type: typ, Param: "text.format"}
	hasSchema := false
	err = jsonx.Members(v, func(key string, el []byte) error {
		p := "text.format." + key
		var err error
		switch {
		case key == "type":
		case typ != llm.FormatJSONSchema:
			err = unknownParam(p, key, "type")
		case key == "name":
			rf.Name, err = str(p, el)
		case key == "schema":
			if jsonx.KindOf(el) != jsonx.Object {
				return invalidType(p, "an object", el)
			}
			hasSchema = true
			rf.Schema = json.RawMessage(el)
		case key == "strict":
			if !isNull(el) {
				var b bool
				b, err = boolean(p, el)
				rf.Strict = &b
			}
		case key == "description":
			rf.Description, err = optStr(p, el)
		default:
			err = unknownParam(p, key, formatKeys...)
		}
		return err
	})
	if err != nil {
		return err
	}
	switch typ {
	case llm.FormatText:
		return nil
	case llm.FormatJSONObject:
	case llm.FormatJSONSchema:
		if rf.Name == "" {
			return missing("text.format.name")
		}
		if !hasSchema {
			return missing("text.format.schema")
		}
	default:
		return invalidValue("text.format.type", typ, "text", "json_schema", "json_object")
	}
	d.r.LLM.ResponseFormat = rf
	return nil
}

// includable are OpenAI's include values; only reasoning.encrypted_content has a meaning on
// other backends (the signature of Anthropic's thinking).
var includable = []string{
	"reasoning.encrypted_content", "file_search_call.results", "web_search_call.results",
	"web_search_call.action.sources", "message.input_image.image_url", "computer_call_output.output.image_url",
	"code_interpreter_call.outputs", "message.output_text.logprobs",
}

func (d *decoder) include(v []byte) error {
	if isNull(v) {
		return nil
	}
	return array("include", v, func(i int, el []byte) error {
		p := at("include", i)
		s, err := enum(p, el, includable...)
		switch {
		case err != nil:
		case s == "reasoning.encrypted_content":
			d.r.IncludeEncrypted = true
		default:
			d.only(p, "include "+s+" asks for output only OpenAI's Responses API returns")
		}
		return err
	})
}

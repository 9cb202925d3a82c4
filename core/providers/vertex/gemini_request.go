package vertex

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// checkGemini reports why req cannot be sent to Gemini, as a 400 naming the param, or nil.
// It needs no network, so the planner can skip the route before any I/O.
func checkGemini(req *openai.ChatRequest) *openai.Error {
	_, _, oe := checkSplit(req)
	return oe
}

// checkSplit is checkGemini that also splits the messages into the systemInstruction (Gemini
// has one, before the conversation) and the contents.
func checkSplit(req *openai.ChatRequest) (system, conversation []openai.Message, oe *openai.Error) {
	system, conversation, oe = openai.SplitSystem(req.Messages, "Gemini", checkContent)
	if oe != nil {
		return nil, nil, oe
	}
	for i := range req.Tools {
		f := &req.Tools[i].Function
		p := "tools[" + strconv.Itoa(i) + "].function"
		if f.Strict != nil && *f.Strict {
			return nil, nil, openai.Unsupported(p+".strict", p+".strict is not supported on Vertex AI routes: the schema would not be enforced")
		}
		if c := f.Name[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return nil, nil, openai.BadRequest(p+".name", p+".name must start with a letter or an underscore on Gemini routes")
		}
		if _, err := schemaValue(f.Parameters); err != nil {
			return nil, nil, openai.BadRequest(p+".parameters", p+".parameters "+err.Error())
		}
	}
	return system, conversation, nil
}

// checkContent refuses messages[i] when Gemini would.
func checkContent(i int, m *openai.Message) *openai.Error {
	p := "messages[" + strconv.Itoa(i) + "]"
	switch m.Role {
	case openai.RoleUser:
		if m.Text() == "" {
			return openai.BadRequest(p+".content", p+".content must not be empty: Gemini refuses empty text")
		}
	case openai.RoleAssistant:
		if m.Text() == "" && len(m.ToolCalls) == 0 {
			return openai.BadRequest(p+".content", p+".content must not be empty: Gemini refuses empty text")
		}
		for j := range m.ToolCalls {
			if _, err := argsStruct(m.ToolCalls[j].Function.Arguments); err != nil {
				tp := p + ".tool_calls[" + strconv.Itoa(j) + "].function.arguments"
				return openai.BadRequest(tp, tp+" must be a JSON object: Gemini takes function call arguments as an object")
			}
		}
	}
	return nil
}

// buildGemini translates req into a GenerateContentRequest for model (a resource name). It
// refuses what checkGemini refuses.
func buildGemini(req *openai.ChatRequest, model string, t providers.Target) (*aiplatformpb.GenerateContentRequest, *openai.Error) {
	system, msgs, oe := checkSplit(req)
	if oe != nil {
		return nil, oe
	}
	out := &aiplatformpb.GenerateContentRequest{
		Model:             model,
		SystemInstruction: systemInstruction(system),
		Contents:          contents(msgs, needsSignature(t.Model)),
		GenerationConfig:  generationConfig(req, t),
	}
	if len(req.Tools) > 0 {
		decls := make([]*aiplatformpb.FunctionDeclaration, len(req.Tools))
		for i := range req.Tools {
			f := &req.Tools[i].Function
			schema, _ := schemaValue(f.Parameters) // checked
			decls[i] = &aiplatformpb.FunctionDeclaration{Name: f.Name, Description: f.Description, ParametersJsonSchema: schema}
		}
		out.Tools = []*aiplatformpb.Tool{{FunctionDeclarations: decls}}
		// Without tools there is nothing to choose from; OpenAI allows "none" there, which
		// means the same as leaving the choice out.
		if tc := req.ToolChoice; tc != nil {
			out.ToolConfig = &aiplatformpb.ToolConfig{FunctionCallingConfig: callingConfig(tc)}
		}
	}
	// user and metadata are the gateway's log labels; they are never sent upstream.
	return out, nil
}

// systemInstruction holds the leading system and developer messages, one part each so their
// boundaries survive. Empty ones say nothing and Gemini refuses empty text, so they are left
// out.
func systemInstruction(msgs []openai.Message) *aiplatformpb.Content {
	var parts []*aiplatformpb.Part
	for i := range msgs {
		if s := msgs[i].Text(); s != "" {
			parts = append(parts, textPart(s))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	// Vertex AI ignores the role of a system instruction.
	return &aiplatformpb.Content{Parts: parts}
}

// contents turns the conversation into Gemini turns. Tool messages become functionResponse
// parts of a user turn; consecutive messages of one role share a turn, since Gemini wants
// user and model turns to alternate. That also puts a follow-up user message in the same
// turn as the results before it.
func contents(msgs []openai.Message, signed bool) []*aiplatformpb.Content {
	out := make([]*aiplatformpb.Content, 0, len(msgs))
	turn := func(role string) *aiplatformpb.Content {
		if n := len(out); n > 0 && out[n-1].Role == role {
			return out[n-1]
		}
		out = append(out, &aiplatformpb.Content{Role: role})
		return out[len(out)-1]
	}
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch m.Role {
		case openai.RoleUser:
			c := turn("user")
			c.Parts = append(c.Parts, textPart(m.Text()))
		case openai.RoleAssistant:
			c := turn("model")
			if s := m.Text(); s != "" {
				c.Parts = append(c.Parts, textPart(s))
			}
			for j := range m.ToolCalls {
				fc := &m.ToolCalls[j].Function
				args, _ := argsStruct(fc.Arguments) // checked
				part := &aiplatformpb.Part{Data: &aiplatformpb.Part_FunctionCall{FunctionCall: &aiplatformpb.FunctionCall{Name: fc.Name, Args: args}}}
				if signed && j == 0 {
					part.ThoughtSignature = skipSignature
				}
				c.Parts = append(c.Parts, part)
			}
			// Decoding made the tool messages that answer these calls follow directly.
			k := i + 1
			for k < len(msgs) && msgs[k].Role == openai.RoleTool {
				k++
			}
			if k > i+1 {
				u := &aiplatformpb.Content{Role: "user", Parts: functionResponses(m.ToolCalls, msgs[i+1:k])}
				out = append(out, u)
				i = k - 1
			}
		}
	}
	return out
}

// functionResponses answers calls with results. v1 has no call ids: Gemini pairs a response
// with its call by name and position, so each result is named after the call its
// tool_call_id designates (an id this package minted and the client sent back) and placed
// where that call stands.
func functionResponses(calls []openai.ToolCall, results []openai.Message) []*aiplatformpb.Part {
	slots := make([]*aiplatformpb.Part, len(calls))
	var extra []*aiplatformpb.Part
	for r := range results {
		m := &results[r]
		idx := -1
		for j := range calls {
			if calls[j].ID == m.ToolCallID {
				idx = j
				break
			}
		}
		name := ""
		if idx >= 0 {
			name = calls[idx].Function.Name
		}
		part := &aiplatformpb.Part{Data: &aiplatformpb.Part_FunctionResponse{FunctionResponse: &aiplatformpb.FunctionResponse{
			Name: name, Response: responseObject(m.Text())}}}
		if idx >= 0 && slots[idx] == nil {
			slots[idx] = part
		} else {
			extra = append(extra, part) // unreachable after decoding, which pairs every result
		}
	}
	parts := make([]*aiplatformpb.Part, 0, len(results))
	for _, p := range slots {
		if p != nil {
			parts = append(parts, p)
		}
	}
	return append(parts, extra...)
}

// responseObject is a tool result as functionResponse.response, which must be an object: a
// JSON object result goes as it is, anything else as {"content": "<the text>"}, so a result
// that merely looks like a number or a list stays the text the tool returned.
func responseObject(text string) *structpb.Struct {
	if s := bytes.TrimSpace([]byte(text)); len(s) > 0 && s[0] == '{' {
		if v, err := decodeJSON(s); err == nil {
			if st := v.GetStructValue(); st != nil {
				return st
			}
		}
	}
	return &structpb.Struct{Fields: map[string]*structpb.Value{"content": structpb.NewStringValue(text)}}
}

// argsStruct reads tool-call arguments: a JSON object, or nothing (what some models emit for
// a call without parameters), which means no arguments.
func argsStruct(args string) (*structpb.Struct, error) {
	s := bytes.TrimSpace([]byte(args))
	if len(s) == 0 {
		return &structpb.Struct{Fields: map[string]*structpb.Value{}}, nil
	}
	v, err := decodeJSON(s)
	if err != nil {
		return nil, err
	}
	st := v.GetStructValue()
	if st == nil {
		return nil, errNotObject
	}
	return st, nil
}

// schemaValue reads a tool's parameters for parametersJsonSchema. No schema, null and {}
// mean a function without parameters (nil). Vertex AI wants the schema to describe an
// object: one that names no type gets "type":"object" (its instances, the arguments, are
// objects anyway); one that names another type is refused.
func schemaValue(params json.RawMessage) (*structpb.Value, error) {
	ps := bytes.TrimSpace(params)
	if len(ps) == 0 || string(ps) == "null" {
		return nil, nil
	}
	v, err := decodeJSON(ps)
	if err != nil {
		return nil, err
	}
	st := v.GetStructValue()
	if st == nil {
		return nil, errNotObject
	}
	if len(st.Fields) == 0 {
		return nil, nil
	}
	t, named := st.Fields["type"]
	switch {
	case !named:
		st.Fields["type"] = structpb.NewStringValue("object")
	case t.GetStringValue() != "object":
		return nil, errSchemaNotObject
	}
	return v, nil
}

type schemaError string

func (e schemaError) Error() string { return string(e) }

const (
	errNotObject       = schemaError("must be a JSON object")
	errSchemaNotObject = schemaError(`must describe an object ("type": "object"), as Gemini requires`)
)

// decodeJSON reads one JSON value into protobuf's dynamic form. Numbers keep their text
// until structpb turns them into doubles, as the wire form is.
func decodeJSON(b []byte) (*structpb.Value, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, schemaError("must be a single JSON value")
	}
	return structpb.NewValue(v)
}

func textPart(s string) *aiplatformpb.Part {
	return &aiplatformpb.Part{Data: &aiplatformpb.Part_Text{Text: s}}
}

func generationConfig(req *openai.ChatRequest, t providers.Target) *aiplatformpb.GenerationConfig {
	n := outputMax(req, t)
	if n == 0 && req.Temperature == nil {
		return nil
	}
	g := &aiplatformpb.GenerationConfig{}
	if n > 0 {
		g.MaxOutputTokens = ptr(int32(min(n, math.MaxInt32)))
	}
	if t := req.Temperature; t != nil {
		g.Temperature = ptr(float32(*t)) // decoding kept it within Gemini's 0..2
	}
	return g
}

// outputMax is the output maximum to send: the client's, else the gateway model's ceiling
// (so an answer cannot outgrow what the model is configured for), else none (0): Gemini and
// the partner models need none.
func outputMax(req *openai.ChatRequest, t providers.Target) int {
	if n := req.MaxCompletionTokens; n != nil {
		return *n
	}
	return t.MaxOutputTokens
}

// callingConfig maps tool_choice: auto, required and none are AUTO, ANY and NONE; a named
// function is ANY restricted to that one.
func callingConfig(tc *openai.ToolChoice) *aiplatformpb.FunctionCallingConfig {
	switch tc.Mode {
	case openai.ToolChoiceRequired:
		return &aiplatformpb.FunctionCallingConfig{Mode: aiplatformpb.FunctionCallingConfig_ANY}
	case openai.ToolChoiceNone:
		return &aiplatformpb.FunctionCallingConfig{Mode: aiplatformpb.FunctionCallingConfig_NONE}
	case openai.ToolChoiceFunction:
		return &aiplatformpb.FunctionCallingConfig{Mode: aiplatformpb.FunctionCallingConfig_ANY, AllowedFunctionNames: []string{tc.Function}}
	}
	return &aiplatformpb.FunctionCallingConfig{Mode: aiplatformpb.FunctionCallingConfig_AUTO}
}

// skipSignature is Google's documented stand-in for a thought signature the history no
// longer has. Gemini 3 refuses (400) a past function call without a signature on the first
// call of a step, and signatures cannot survive the OpenAI wire. The documented value is
// the REST (base64) spelling, so the bytes are its decoding.
var skipSignature = mustDecode("skip_thought_signature_validator")

func mustDecode(s string) []byte {
	b, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// needsSignature reports whether past function calls need skipSignature: not for the
// Gemini 1.x and 2.x models, which predate signature validation and are left exactly as
// before; for every other (newer or unknown) model.
func needsSignature(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

func ptr[T any](v T) *T { return &v }

package vertex

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
)

// buildGemini translates req into a GenerateContentRequest for model (a resource name). It
// trusts checkGemini. A legacy completion's prompt is one user turn, as MLflow's gateway
// serves it.
func buildGemini(req *llm.Request, model string, t providers.Target) *aiplatformpb.GenerateContentRequest {
	if req.Op == llm.OpCompletion {
		req = promptRequest(req)
	}
	system, msgs, _ := llm.SplitSystem(req, "Gemini", nil) // checked
	out := &aiplatformpb.GenerateContentRequest{
		Model:             model,
		SystemInstruction: systemInstruction(system),
		Contents:          contents(msgs, needsSignature(t.Model)),
		GenerationConfig:  generationConfig(req, t),
	}
	if len(req.Tools) > 0 {
		decls := make([]*aiplatformpb.FunctionDeclaration, len(req.Tools))
		for i := range req.Tools {
			f := &req.Tools[i]
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
	return out
}

// promptRequest is a legacy completion as a one-turn conversation; the gateway reads only
// text from the answer, and no tools are offered.
func promptRequest(req *llm.Request) *llm.Request {
	return &llm.Request{
		Model:       req.Model,
		Messages:    []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: req.Prompt}}}},
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		TopP:        req.TopP,
		Stop:        req.Stop,
		Seed:        req.Seed,
		Stream:      req.Stream,

		PresencePenalty:  req.PresencePenalty,
		FrequencyPenalty: req.FrequencyPenalty,
	}
}

// systemInstruction holds the system parts, one Gemini part each so their boundaries
// survive. Empty ones say nothing and Gemini refuses empty text, so they are left out;
// cache_control breakpoints are hints Gemini's implicit caching makes moot.
func systemInstruction(parts []llm.Part) *aiplatformpb.Content {
	var out []*aiplatformpb.Part
	for i := range parts {
		if s := parts[i].Text; s != "" {
			out = append(out, textPart(s))
		}
	}
	if len(out) == 0 {
		return nil
	}
	// Vertex AI ignores the role of a system instruction.
	return &aiplatformpb.Content{Parts: out}
}

// contents turns the conversation into Gemini turns. Consecutive messages of one role share
// a turn, since Gemini wants user and model turns to alternate: that also puts a follow-up
// user message in the same turn as the tool results before it. Tool results become
// functionResponse parts at the head of their user turn, in the order of the calls they
// answer; earlier turns' thinking is left out (Anthropic itself drops it from earlier turns'
// context, and Gemini's thought signatures cannot cross another wire).
func contents(msgs []llm.Message, signed bool) []*aiplatformpb.Content {
	out := make([]*aiplatformpb.Content, 0, len(msgs))
	var calls []*llm.Part // the tool_use parts of the last model turn
	for i := 0; i < len(msgs); {
		k := i + 1
		for k < len(msgs) && msgs[k].Role == msgs[i].Role {
			k++
		}
		if msgs[i].Role == llm.RoleAssistant {
			c := &aiplatformpb.Content{Role: "model"}
			c.Parts, calls = modelParts(msgs[i:k], signed)
			out = append(out, c)
		} else {
			out = append(out, &aiplatformpb.Content{Role: "user", Parts: userParts(msgs[i:k], calls)})
			calls = nil
		}
		i = k
	}
	return out
}

// modelParts are the parts of one model turn and the calls it makes. For models after
// Gemini 2 the turn's first call carries Google's documented stand-in signature.
func modelParts(msgs []llm.Message, signed bool) (parts []*aiplatformpb.Part, calls []*llm.Part) {
	for i := range msgs {
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			switch p.Kind {
			case llm.PartText:
				if p.Text != "" {
					parts = append(parts, textPart(p.Text))
				}
			case llm.PartToolUse:
				args, _ := argsStruct(p.Input) // checked
				part := &aiplatformpb.Part{Data: &aiplatformpb.Part_FunctionCall{FunctionCall: &aiplatformpb.FunctionCall{Name: p.Name, Args: args}}}
				if signed && len(calls) == 0 {
					part.ThoughtSignature = skipSignature
				}
				parts = append(parts, part)
				calls = append(calls, p)
			}
		}
	}
	return parts, calls
}

// userParts are the parts of one user turn. v1 has no call ids: Gemini pairs a response
// with its call by name and position, so each result is named after the call its
// tool_use_id designates (an id the client got from the gateway) and placed where that call
// stands, before the turn's other parts.
func userParts(msgs []llm.Message, calls []*llm.Part) []*aiplatformpb.Part {
	slots := make([]*aiplatformpb.Part, len(calls))
	var extra, rest []*aiplatformpb.Part
	for i := range msgs {
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			switch p.Kind {
			case llm.PartText:
				if p.Text != "" {
					rest = append(rest, textPart(p.Text))
				}
			case llm.PartImage:
				rest = append(rest, imagePart(p))
			case llm.PartToolResult:
				idx := -1
				for c := range calls {
					if calls[c].ID == p.ToolUseID {
						idx = c
						break
					}
				}
				name := ""
				if idx >= 0 {
					name = calls[idx].Name
				}
				part := &aiplatformpb.Part{Data: &aiplatformpb.Part_FunctionResponse{FunctionResponse: &aiplatformpb.FunctionResponse{
					Name: name, Response: responseObject(resultText(p), p.IsError)}}}
				if idx >= 0 && slots[idx] == nil {
					slots[idx] = part
				} else {
					extra = append(extra, part) // unreachable after decoding, which pairs every result
				}
			}
		}
	}
	parts := make([]*aiplatformpb.Part, 0, len(calls)+len(extra)+len(rest))
	for _, p := range slots {
		if p != nil {
			parts = append(parts, p)
		}
	}
	parts = append(parts, extra...)
	return append(parts, rest...)
}

// resultText is a tool result's text: its string, or its text blocks joined (checkGemini
// refused any other block).
func resultText(p *llm.Part) string {
	if p.Content == nil {
		return p.Text
	}
	m := llm.Message{Parts: p.Content}
	return m.Text()
}

// imagePart is an image as inline data, or a Cloud Storage URI as file data.
func imagePart(p *llm.Part) *aiplatformpb.Part {
	if p.URL != "" {
		return &aiplatformpb.Part{Data: &aiplatformpb.Part_FileData{FileData: &aiplatformpb.FileData{MimeType: imageType(p), FileUri: p.URL}}}
	}
	data, _ := base64.StdEncoding.DecodeString(p.Data) // checked
	return &aiplatformpb.Part{Data: &aiplatformpb.Part_InlineData{InlineData: &aiplatformpb.Blob{MimeType: p.MediaType, Data: data}}}
}

// responseObject is a tool result as functionResponse.response, which must be an object: a
// JSON object result goes as it is, anything else as {"content": "<the text>"}, so a result
// that merely looks like a number or a list stays the text the tool returned. A failed
// result is {"error": "<the text>"}, the key FunctionResponse documents for error details.
func responseObject(text string, failed bool) *structpb.Struct {
	if failed {
		return &structpb.Struct{Fields: map[string]*structpb.Value{"error": structpb.NewStringValue(text)}}
	}
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

// generationConfig holds the output maximum, the sampling settings, the stop sequences and
// the thinking settings; nil when the request sets none of them.
func generationConfig(req *llm.Request, t providers.Target) *aiplatformpb.GenerationConfig {
	g := &aiplatformpb.GenerationConfig{}
	if n := outputMax(req, t); n > 0 {
		g.MaxOutputTokens = ptr(int32(min(n, math.MaxInt32)))
	}
	if t := req.Temperature; t != nil {
		g.Temperature = ptr(float32(*t)) // decoding kept it within Gemini's 0..2
	}
	if p := req.TopP; p != nil {
		g.TopP = ptr(float32(*p))
	}
	if k := req.TopK; k != nil {
		g.TopK = ptr(float32(*k))
	}
	g.StopSequences = req.Stop
	if s := req.Seed; s != nil {
		g.Seed = ptr(int32(*s)) // checkSeed kept it within int32
	}
	if p := req.PresencePenalty; p != nil {
		g.PresencePenalty = ptr(float32(*p))
	}
	if p := req.FrequencyPenalty; p != nil {
		g.FrequencyPenalty = ptr(float32(*p))
	}
	if f := req.ResponseFormat; f.JSON() {
		// Gemini's controlled generation holds the answer to the schema, strict or not.
		g.ResponseMimeType = "application/json"
		if f.Type == llm.FormatJSONSchema {
			g.ResponseJsonSchema, _ = decodeJSON(f.Schema) // checked
		}
	}
	if thinks(t.Model) {
		g.ThinkingConfig = thinkingConfig(req)
	}
	if g.MaxOutputTokens == nil && g.Temperature == nil && g.TopP == nil && g.TopK == nil && len(g.StopSequences) == 0 &&
		g.ThinkingConfig == nil && g.Seed == nil && g.PresencePenalty == nil && g.FrequencyPenalty == nil && g.ResponseMimeType == "" {
		return nil
	}
	return g
}

// jsonSchemaOutput reports whether a model takes responseJsonSchema: Gemini 2.5 and later
// (and newer or unknown models), not 1.x and 2.0.
func jsonSchemaOutput(model string) bool {
	m := modelName(model)
	return !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2.0")
}

// effortBudgets are the thinking budgets Google's own OpenAI-compatible endpoint gives
// reasoning_effort low, medium and high.
var effortBudgets = map[string]int32{"low": 1024, "medium": 8192, "high": 24576}

// thinkingConfig maps the client's thinking: enabled with a budget is that thinkingBudget;
// adaptive (or none) leaves the budget to the model, unless an effort (output_config.effort)
// names one through effortBudgets; disabled, Anthropic's default, is Gemini's default too.
// Thoughts are asked for (includeThoughts) whenever the client asked for thinking and did
// not ask to have it omitted, so a Messages client sees them as thinking blocks. A model
// that cannot think gets none of it (see thinks): adaptive thinking and an effort are then
// honoured by the model deciding not to think, and checkGemini refused a budget.
func thinkingConfig(req *llm.Request) *aiplatformpb.GenerationConfig_ThinkingConfig {
	th := req.Thinking
	if th != nil && th.Type == llm.ThinkingDisabled {
		return nil
	}
	c := &aiplatformpb.GenerationConfig_ThinkingConfig{}
	if th != nil && th.Type == llm.ThinkingEnabled {
		c.ThinkingBudget = ptr(int32(min(th.BudgetTokens, math.MaxInt32)))
	} else if b, ok := effortBudgets[openaicompat.Effort(req)]; ok {
		c.ThinkingBudget = ptr(b)
	}
	if showThoughts(req) {
		c.IncludeThoughts = ptr(true)
	}
	if c.ThinkingBudget == nil && c.IncludeThoughts == nil {
		return nil
	}
	return c
}

// showThoughts reports whether the client asked to see the model's thinking.
func showThoughts(req *llm.Request) bool {
	th := req.Thinking
	return th != nil && th.Type != llm.ThinkingDisabled && th.Display != "omitted"
}

// outputMax is the output maximum to send: the client's, else the gateway model's ceiling
// (so an answer cannot outgrow what the model is configured for), else none (0): Gemini and
// the partner models need none.
func outputMax(req *llm.Request, t providers.Target) int {
	if n := req.MaxTokens; n != nil {
		return *n
	}
	return t.MaxOutputTokens
}

// callingConfig maps tool_choice: auto, required and none are AUTO, ANY and NONE; a named
// function is ANY restricted to that one.
func callingConfig(tc *llm.ToolChoice) *aiplatformpb.FunctionCallingConfig {
	switch tc.Mode {
	case llm.ToolChoiceRequired:
		return &aiplatformpb.FunctionCallingConfig{Mode: aiplatformpb.FunctionCallingConfig_ANY}
	case llm.ToolChoiceNone:
		return &aiplatformpb.FunctionCallingConfig{Mode: aiplatformpb.FunctionCallingConfig_NONE}
	case llm.ToolChoiceTool:
		return &aiplatformpb.FunctionCallingConfig{Mode: aiplatformpb.FunctionCallingConfig_ANY, AllowedFunctionNames: []string{tc.Name}}
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
	m := modelName(model)
	return !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

// thinks reports whether a model can think: not the Gemini 1.x and 2.0 models (but 2.0's
// thinking experiments), which refuse a thinkingConfig; every other (newer or unknown)
// model.
func thinks(model string) bool {
	m := modelName(model)
	if strings.HasPrefix(m, "gemini-2.0") {
		return strings.Contains(m, "thinking")
	}
	return !strings.HasPrefix(m, "gemini-1")
}

// modelName is the model id of a route's model, lower-cased, without a resource path or a
// publisher prefix.
func modelName(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}

func ptr[T any](v T) *T { return &v }

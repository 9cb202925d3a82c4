package vertexfake

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"

	"github.com/fngate/fngate/internal/anthropicfake"
)

var functionName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.\-]{0,63}$`)

// modelOf returns the last segment of a resource name.
func modelOf(resource string) string {
	return resource[strings.LastIndexByte(resource, '/')+1:]
}

// resource checks a resource name against the fake's project and location.
func (s *Server) resource(name, publisher string) string {
	prefix := "projects/" + s.Project + "/locations/" + s.Location + "/publishers/" + publisher + "/models/"
	if !strings.HasPrefix(name, prefix) || len(name) == len(prefix) || strings.Contains(name[len(prefix):], "/") {
		return fmt.Sprintf("resource name %q is not %s{model}", name, prefix)
	}
	return ""
}

// ValidateGenerate checks a Gemini request as Vertex AI does, returning the complaint or "".
// The server applies it to every GenerateContent and StreamGenerateContent call; tests of a
// translation can apply it directly.
func (s *Server) ValidateGenerate(req *aiplatformpb.GenerateContentRequest) string {
	if msg := s.resource(req.GetModel(), "google"); msg != "" {
		return msg
	}
	if si := req.GetSystemInstruction(); si != nil {
		for _, p := range si.GetParts() {
			if p.GetText() == "" {
				return "system_instruction: only non-empty text parts are allowed"
			}
		}
	}
	contents := req.GetContents()
	if len(contents) == 0 {
		return "contents is not specified"
	}
	declared := map[string]bool{}
	for ti, t := range req.GetTools() {
		for di, d := range t.GetFunctionDeclarations() {
			p := fmt.Sprintf("tools[%d].function_declarations[%d]", ti, di)
			if !functionName.MatchString(d.GetName()) {
				return p + ".name: invalid function name " + d.GetName()
			}
			if d.GetParameters() != nil && d.GetParametersJsonSchema() != nil {
				return p + ": parameters and parameters_json_schema are mutually exclusive"
			}
			if js := d.GetParametersJsonSchema(); js != nil {
				if js.GetStructValue().GetFields()["type"].GetStringValue() != "object" {
					return p + `.parameters_json_schema: the schema must describe an object ("type": "object")`
				}
			}
			declared[d.GetName()] = true
		}
	}
	if fc := req.GetToolConfig().GetFunctionCallingConfig(); fc != nil {
		if len(fc.GetAllowedFunctionNames()) > 0 && fc.GetMode() != aiplatformpb.FunctionCallingConfig_ANY {
			return "tool_config: allowed_function_names is only allowed with mode ANY"
		}
		for _, n := range fc.GetAllowedFunctionNames() {
			if !declared[n] {
				return "tool_config: allowed function " + n + " is not declared"
			}
		}
	}
	if g := req.GetGenerationConfig(); g != nil {
		if t := g.Temperature; t != nil && (*t < 0 || *t > 2) {
			return "generation_config.temperature must be between 0 and 2"
		}
		if n := g.MaxOutputTokens; n != nil && *n < 1 {
			return "generation_config.max_output_tokens must be positive"
		}
		if p := g.TopP; p != nil && (*p < 0 || *p > 1) {
			return "generation_config.top_p must be between 0 and 1"
		}
		if len(g.GetStopSequences()) > 5 {
			return "generation_config.stop_sequences: at most 5 stop sequences are allowed"
		}
		if tc := g.GetThinkingConfig(); tc != nil && tc.ThinkingBudget != nil && *tc.ThinkingBudget < -1 {
			return "generation_config.thinking_config.thinking_budget must be -1 (dynamic), 0 or positive"
		}
		if m := modelOf(req.GetModel()); g.GetThinkingConfig() != nil &&
			(strings.HasPrefix(m, "gemini-1") || strings.HasPrefix(m, "gemini-2.0") && !strings.Contains(m, "thinking")) {
			return "Unable to submit request because thinking_config is not supported by this model."
		}
	}
	var calls []string // the function calls of the previous model turn
	for i, c := range contents {
		p := fmt.Sprintf("contents[%d]", i)
		if c.GetRole() != "user" && c.GetRole() != "model" {
			return p + `.role must be "user" or "model"`
		}
		if i > 0 && contents[i-1].GetRole() == c.GetRole() {
			return "Please ensure that multiturn requests alternate between user and model."
		}
		if len(c.GetParts()) == 0 {
			return p + ".parts must not be empty"
		}
		var responses, made []string
		for j, part := range c.GetParts() {
			pp := fmt.Sprintf("%s.parts[%d]", p, j)
			switch d := part.GetData().(type) {
			case *aiplatformpb.Part_Text:
				if d.Text == "" {
					return "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again. (" + pp + ")"
				}
			case *aiplatformpb.Part_FunctionCall:
				if c.GetRole() != "model" {
					return pp + ": function calls are only allowed in model turns"
				}
				made = append(made, d.FunctionCall.GetName())
			case *aiplatformpb.Part_FunctionResponse:
				if c.GetRole() != "user" {
					return pp + ": function responses are only allowed in user turns"
				}
				if d.FunctionResponse.GetResponse() == nil {
					return pp + ".function_response.response is required"
				}
				responses = append(responses, d.FunctionResponse.GetName())
			case *aiplatformpb.Part_InlineData:
				if d.InlineData.GetMimeType() == "" || len(d.InlineData.GetData()) == 0 {
					return pp + ".inline_data: mime_type and data are required"
				}
			case *aiplatformpb.Part_FileData:
				if d.FileData.GetMimeType() == "" || !strings.HasPrefix(d.FileData.GetFileUri(), "gs://") {
					return pp + ".file_data: a mime_type and a gs:// file_uri are required"
				}
			case nil:
				return pp + " has no data"
			}
		}
		if len(responses) > 0 {
			// Gemini pairs responses with the calls of the turn before by position and name.
			if len(responses) != len(calls) {
				return fmt.Sprintf("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn. (%s: %d responses, %d calls)", p, len(responses), len(calls))
			}
			for k := range calls {
				if responses[k] != calls[k] {
					return fmt.Sprintf("%s: function response %d is for %q, the call at that position is %q", p, k, responses[k], calls[k])
				}
			}
		}
		calls = made
	}
	return ""
}

// vertexFields are the top-level members Claude on Vertex AI takes beyond those
// anthropicfake's Vertex dialect knows, with the JSON kind each must be: the beta flags
// (Vertex AI reads them from the body, as a list of strings: LiteLLM's Vertex AI
// transformation sends them there) and the beta features Claude Code sends.
var vertexFields = map[string]string{"anthropic_beta": "array", "context_management": "object", "output_config": "object"}

// claudeBody checks the members of a Claude body that only Vertex AI takes and returns the
// body without them, for anthropicfake's validation.
func claudeBody(body []byte) (map[string]json.RawMessage, string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, anthropicfake.ErrorBody("invalid_request_error", "The request body is not valid JSON")
	}
	for name, kind := range vertexFields {
		raw, ok := m[name]
		if !ok {
			continue
		}
		if k := kindOf(raw); k != kind {
			return nil, anthropicfake.ErrorBody("invalid_request_error", name+": Input should be a valid "+kind)
		}
		if name == "anthropic_beta" {
			var flags []string
			if json.Unmarshal(raw, &flags) != nil {
				return nil, anthropicfake.ErrorBody("invalid_request_error", "anthropic_beta: Input should be a list of strings")
			}
		}
		delete(m, name)
	}
	return m, ""
}

func kindOf(raw json.RawMessage) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '[':
			return "array"
		case '{':
			return "object"
		}
		return "value"
	}
	return ""
}

// validateClaude checks a Claude call: the resource name, the HttpBody's content type, the
// body by anthropicfake's rules for Vertex AI (anthropic_version, no model) once the members
// only Vertex AI takes are checked, and that the body's stream flag matches the method. A
// call of the count-tokens endpoint is checked by validateCount.
func (s *Server) validateClaude(r *Request, stream bool) string {
	if msg := s.resource(r.Resource, "anthropic"); msg != "" {
		return msg
	}
	if r.ContentType != "application/json" {
		return "http_body.content_type must be application/json, got " + r.ContentType
	}
	if modelOf(r.Resource) == countModel {
		if stream {
			return "count-tokens is served by rawPredict only"
		}
		return validateCount(r.Body)
	}
	m, msg := claudeBody(r.Body)
	if msg != "" {
		return msg
	}
	if _, ok := m["model"]; ok {
		// The model is the resource name; anthropicfake's Vertex dialect tolerates the field.
		return anthropicfake.ErrorBody("invalid_request_error", "model: Extra inputs are not permitted")
	}
	rest, _ := json.Marshal(m)
	if e := anthropicfake.ValidateBody(rest, anthropicfake.Vertex); e != nil {
		return e.Body()
	}
	var flag bool
	_ = json.Unmarshal(m["stream"], &flag)
	if flag != stream {
		return fmt.Sprintf("%s: the body's stream is %v", r.Method, flag)
	}
	return ""
}

// countModel is the model segment of the count-tokens endpoint's resource name.
const countModel = "count-tokens"

// validateCount checks a count-tokens body: a Messages body that names the model it counts
// for, with anthropic_version and without the output maximum, sampling or stream, which
// count-tokens does not take.
func validateCount(body []byte) string {
	m, msg := claudeBody(body)
	if msg != "" {
		return msg
	}
	var model string
	if json.Unmarshal(m["model"], &model) != nil || model == "" {
		return anthropicfake.ErrorBody("invalid_request_error", "model: Field required")
	}
	for _, k := range []string{"max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier"} {
		if _, ok := m[k]; ok {
			return anthropicfake.ErrorBody("invalid_request_error", k+": Extra inputs are not permitted")
		}
	}
	delete(m, "model")
	m["max_tokens"] = json.RawMessage("1") // for the Messages rules; count-tokens takes none
	rest, _ := json.Marshal(m)
	if e := anthropicfake.ValidateBody(rest, anthropicfake.Vertex); e != nil {
		return e.Body()
	}
	return ""
}

package vertexfake

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"

	"github.com/fngate/fngate/core/providers/anthropic/anthropicfake"
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

// validateClaude checks a Claude call: the resource name, the HttpBody's content type, the
// body by anthropicfake's rules for Vertex AI (anthropic_version, no model), and that the
// body's stream flag matches the method.
func (s *Server) validateClaude(r *Request, stream bool) string {
	if msg := s.resource(r.Resource, "anthropic"); msg != "" {
		return msg
	}
	if r.ContentType != "application/json" {
		return "http_body.content_type must be application/json, got " + r.ContentType
	}
	if e := anthropicfake.ValidateBody(r.Body, anthropicfake.Vertex); e != nil {
		return e.Body()
	}
	var flag struct {
		Stream bool            `json:"stream"`
		Model  json.RawMessage `json:"model"`
	}
	_ = json.Unmarshal(r.Body, &flag)
	if flag.Model != nil {
		// The model is the resource name; anthropicfake's Vertex dialect tolerates the field.
		return anthropicfake.ErrorBody("invalid_request_error", "model: Extra inputs are not permitted")
	}
	if flag.Stream != stream {
		return fmt.Sprintf("%s: the body's stream is %v", r.Method, flag.Stream)
	}
	return ""
}

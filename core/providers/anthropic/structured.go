package anthropic

import (
	"regexp"
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Structured is how a route gives a JSON response_format (the extended profile's
// structured output), so the client sees what OpenAI would return: the JSON as the
// message's content, finish reason stop, no tool calls.
type Structured uint8

const (
	// ByTool is the answer tool (providers.AnswerTool): tool_choice tool, or any beside the
	// client's own tools, and the call's input returned as the content. Every Claude model on
	// every transport can. The schema guides the model but does not bind it, so a strict
	// json_schema is refused there.
	ByTool Structured = iota
	// Native is output_config.format (json_schema): constrained decoding that holds the text
	// to the schema, on the models that have it.
	Native
)

// nativeModel matches the Claude ids whose family and version come after "claude-"
// (claude-sonnet-4-5, us.anthropic.claude-haiku-4-5-20251001-v1:0, claude-opus-4-1@...).
var nativeModel = regexp.MustCompile(`claude-(opus|sonnet|haiku)-(\d+)(?:-(\d)(?:[^0-9]|$))?`)

// StructuredFor is how model, on Anthropic's API or Bedrock's InvokeModel, gives structured
// output: natively on the models Anthropic documents with structured outputs (Opus 4.1,
// every 4.5 model and those after), by a forced tool on the others and on ids that do not
// name their model (an inference profile ARN).
func StructuredFor(model string) Structured {
	m := nativeModel.FindStringSubmatch(model)
	if m == nil {
		return ByTool
	}
	major, _ := strconv.Atoi(m[2])
	minor, _ := strconv.Atoi(m[3])
	if major > 4 || major == 4 && (minor >= 5 || minor == 1 && m[1] == "opus") {
		return Native
	}
	return ByTool
}

// respondTool is the answer tool of req under s (providers.AnswerTool), or "" when the
// route answers natively.
func respondTool(req *llm.Request, s Structured) string {
	if f := req.ResponseFormat; s == Native && f.JSON() && f.Type == llm.FormatJSONSchema {
		return ""
	}
	return providers.AnswerTool(req)
}

// checkStructured refuses what s cannot give as asked.
func checkStructured(req *llm.Request, s Structured) *llm.Error {
	f := req.ResponseFormat
	if !f.JSON() {
		return nil
	}
	if req.Anthropic.Field("output_config") != nil {
		return llm.Unsupported("response_format", "response_format cannot be combined with output_config: give the format in one place")
	}
	if respondTool(req, s) == "" {
		return nil
	}
	if f.Strict != nil && *f.Strict {
		return llm.Unsupported("response_format.json_schema.strict", "this Claude route has no native structured output, and the forced tool that carries the answer does not enforce the schema: remove strict or pick a model with structured outputs (Claude 4.5 and later on Anthropic or Bedrock)")
	}
	if th := req.Thinking; th != nil && th.Type != llm.ThinkingDisabled {
		return llm.Unsupported("response_format", "this Claude route gives a JSON response_format through a forced tool, which Anthropic does not allow with thinking")
	}
	if f.Type == llm.FormatJSONSchema {
		if typ, ok := schemaType(f.Schema); ok && typ != "object" {
			return llm.Unsupported("response_format.json_schema.schema", "this Claude route takes a response schema that describes an object (type \"object\")")
		}
	}
	return nil
}

// appendRespondTool writes the tool that carries the answer under ByTool.
func appendRespondTool(b []byte, req *llm.Request, name string) []byte {
	f := req.ResponseFormat
	b = append(b, `{"name":`...)
	b = jsonx.AppendString(b, name)
	b = append(b, `,"description":`...)
	b = jsonx.AppendString(b, providers.AnswerToolDescription(f))
	b = append(b, `,"input_schema":`...)
	if f.Type == llm.FormatJSONSchema {
		b = appendSchema(b, f.Schema)
	} else {
		b = append(b, `{"type":"object"}`...)
	}
	return append(b, '}')
}

// appendOutputFormat writes output_config.format under Native.
func appendOutputFormat(b []byte, f *llm.ResponseFormat) []byte {
	b = append(b, `,"output_config":{"format":{"type":"json_schema","schema":`...)
	b = append(b, f.Schema...)
	return append(b, "}}"...)
}

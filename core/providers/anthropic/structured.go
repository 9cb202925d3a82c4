package anthropic

import (
	"regexp"
	"strconv"
	"sync"

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

// Model is what the translation needs to know of a route's Claude model.
type Model struct {
	// Structured is how the route gives a JSON response_format.
	Structured Structured
	// OneSampler: the model takes temperature or top_p, not both ("temperature and top_p
	// cannot both be specified for this model"): Opus 4.1, the 4.5 models and later.
	OneSampler bool
}

// claudeID matches the Claude ids whose family and version come after "claude-"
// (claude-sonnet-4-5, us.anthropic.claude-haiku-4-5-20251001-v1:0, claude-opus-4-1@...).
// Compiled when a route first asks (the gateway builds its routes at load): compiled at init
// it cost every cold start 0.05 ms (GODEBUG=inittrace=1), with no Anthropic route too.
var claudeID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`claude-(opus|sonnet|haiku)-(\d+)(?:-(\d)(?:[^0-9]|$))?`)
})

// ModelOf is what id's model is, on Anthropic's API or Bedrock's InvokeModel: the models
// Anthropic documents with structured outputs (Opus 4.1, every 4.5 model and those after)
// answer natively and take one sampler; older models and ids that do not name their model
// (an inference profile ARN) take the answer tool and both samplers.
func ModelOf(id string) Model {
	m := claudeID().FindStringSubmatch(id)
	if m == nil {
		return Model{}
	}
	major, _ := strconv.Atoi(m[2])
	minor, _ := strconv.Atoi(m[3])
	if major > 4 || major == 4 && (minor >= 5 || minor == 1 && m[1] == "opus") {
		return Model{Structured: Native, OneSampler: true}
	}
	return Model{}
}

// respondTool is the answer tool of req on m (providers.AnswerTool), or "" when the route
// answers natively.
func respondTool(req *llm.Request, m Model) string {
	if f := req.ResponseFormat; m.Structured == Native && f.JSON() && f.Type == llm.FormatJSONSchema {
		return ""
	}
	return providers.AnswerTool(req)
}

// checkStructured refuses what m cannot give as asked.
func checkStructured(req *llm.Request, m Model) *llm.Error {
	f := req.ResponseFormat
	if !f.JSON() {
		return nil
	}
	if req.Anthropic.Field("output_config") != nil {
		return llm.Unsupported(req.ResponseFormat.ParamName(), "response_format cannot be combined with output_config: give the format in one place")
	}
	if respondTool(req, m) == "" {
		return nil
	}
	if f.Strict != nil && *f.Strict {
		return llm.Unsupported("response_format.json_schema.strict", "this Claude route has no native structured output, and the forced tool that carries the answer does not enforce the schema: remove strict or pick a model with structured outputs (Claude 4.5 and later on Anthropic or Bedrock)")
	}
	if th := req.Thinking; th != nil && th.Type != llm.ThinkingDisabled {
		return llm.Unsupported(req.ResponseFormat.ParamName(), "this Claude route gives a JSON response_format through a forced tool, which Anthropic does not allow with thinking")
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

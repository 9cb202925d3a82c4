package bedrock

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// How Converse gives a JSON response_format, so the client sees what OpenAI would return
// (the JSON as the content, finish reason stop, no tool calls):
//
//   - natively, outputConfig.textFormat with the json_schema, on the Claude models that
//     have structured outputs (anthropic.ModelOf);
//   - else by a forced tool whose input schema is the response's (toolChoice tool, or any
//     beside the client's own tools), on the models whose toolChoice can force a tool
//     (Claude, Amazon Nova, Mistral): its input comes back as the content. It guides the
//     model but does not bind it, so a strict json_schema is refused there;
//   - else refused.
//
// json_object always takes the forced tool, with an open object schema.

type converseFormat uint8

const (
	formatNone converseFormat = iota
	formatNative
	formatTool
	formatRefused
)

// formatOf is how Converse gives req's response_format on model.
func formatOf(req *llm.Request, model string) converseFormat {
	f := req.ResponseFormat
	switch {
	case !f.JSON():
		return formatNone
	case f.Type == llm.FormatJSONSchema && claude(model) && anthropic.ModelOf(model).Structured == anthropic.Native:
		return formatNative
	case claude(model) || nova(model) || strings.Contains(strings.ToLower(model), "mistral"):
		return formatTool
	}
	return formatRefused
}

// checkFormat refuses what Converse cannot give as asked.
func checkFormat(req *llm.Request, model string) *llm.Error {
	switch formatOf(req, model) {
	case formatRefused:
		return llm.Unsupported(req.ResponseFormat.ParamName(), "Amazon Bedrock's Converse cannot hold this model to a JSON response_format (structured output and forced tools are for Claude, Nova and Mistral models)")
	case formatTool:
		if providers.AnswerTool(req) == "" {
			return nil
		}
		if s := req.ResponseFormat.Strict; s != nil && *s {
			return llm.Unsupported("response_format.json_schema.strict", "this Amazon Bedrock model has no native structured output, and the forced tool that carries the answer does not enforce the schema: remove strict or pick a Claude 4.5 model")
		}
	}
	return nil
}

// respondTool is the forced tool's name for req on model, or "".
func respondTool(req *llm.Request, model string) string {
	if formatOf(req, model) != formatTool {
		return ""
	}
	return providers.AnswerTool(req)
}

// outputConfig is the native structured output of req on model, or nil.
func outputConfig(req *llm.Request, model string) *types.OutputConfig {
	if formatOf(req, model) != formatNative {
		return nil
	}
	f := req.ResponseFormat
	def := types.JsonSchemaDefinition{Schema: aws.String(string(f.Schema)), Name: aws.String(f.Name)}
	if f.Description != "" {
		def.Description = aws.String(f.Description)
	}
	return &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema,
		Structure: &types.OutputFormatStructureMemberJsonSchema{Value: def}}}
}

// addRespondTool adds the forced tool to tc (nil when the client sent no tools) and makes
// the model call it, or one of the client's tools when they are on offer with auto.
func addRespondTool(tc *types.ToolConfiguration, req *llm.Request, name string) (*types.ToolConfiguration, error) {
	f := req.ResponseFormat
	schema := document.NewLazyDocument(map[string]any{"type": "object"})
	if f.Type == llm.FormatJSONSchema {
		s, err := objectDocument(string(f.Schema))
		if err != nil {
			return nil, &providers.Error{Class: providers.BadRequest, Status: 400, Provider: displayName, Param: "response_format.json_schema.schema",
				Message: "the response schema is not a JSON object: " + err.Error()}
		}
		schema = s
	}
	desc := providers.AnswerToolDescription(f)
	client := len(req.Tools) > 0
	if tc == nil {
		tc = &types.ToolConfiguration{}
	}
	tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String(name),
		Description: aws.String(desc), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}})
	if client {
		tc.ToolChoice = &types.ToolChoiceMemberAny{Value: types.AnyToolChoice{}}
	} else {
		tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(name)}}
	}
	return tc, nil
}

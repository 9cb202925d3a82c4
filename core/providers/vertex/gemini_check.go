package vertex

import (
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/openaicompat"
)

// maxStopSequences is the most stop sequences GenerationConfig takes.
const maxStopSequences = 5

// maxFunctionName is the longest function name Vertex AI accepts.
const maxFunctionName = 64

// geminiImageTypes are the image types Gemini reads (Vertex AI's image understanding page).
var geminiImageTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/webp": true, "image/heic": true, "image/heif": true,
}

// checkGemini reports why req cannot be sent to Gemini, as a 400 naming the param, or nil.
// It needs no network, so the planner can skip the route before any I/O. buildGemini trusts
// it.
//
// Refused: what no OpenAI-wire or Gemini route can carry (Anthropic's raw blocks and
// top-level fields, server tools, images inside tool results: openaicompat.CheckParts), a
// system message after the conversation began on the chat door, empty turns, tool input
// that is not an object, strict tools, function names Vertex AI refuses, schemas that do not
// describe an object, a one-call limit (disable_parallel_tool_use: Gemini may return several
// calls), more than 5 stop sequences, a thinking budget for a model that cannot think,
// images by http(s) URL and image types Gemini does not read. Accepted as documented approximations: cache_control (Gemini caches implicitly),
// defer_loading tools (sent as ordinary tools), earlier turns' thinking (not sent), adaptive
// thinking and effort (see thinkingConfig), and anthropic-beta flags, which only unlock
// request features that are checked here each on their own.
func checkGemini(req *llm.Request, model string) *llm.Error {
	if oe := openaicompat.CheckParts(req, "Gemini"); oe != nil {
		return oe
	}
	if oe := providers.CheckNames(req, "Gemini"); oe != nil {
		return oe
	}
	if oe := checkSeed(req); oe != nil {
		return oe
	}
	if f := req.ResponseFormat; f.JSON() && f.Type == llm.FormatJSONSchema {
		if !jsonSchemaOutput(model) {
			return llm.Unsupported(req.ResponseFormat.ParamName(), modelName(model)+" takes no JSON Schema for its answer (responseJsonSchema is Gemini 2.5's and later's): use json_object or a newer model")
		}
		if _, err := decodeJSON(f.Schema); err != nil {
			return llm.BadRequest("response_format.json_schema.schema", "response_format.json_schema.schema "+err.Error())
		}
	}
	if _, _, oe := llm.SplitSystem(req, "Gemini", checkTurn); oe != nil {
		return oe
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		p := "tools[" + strconv.Itoa(i) + "].function"
		if t.Strict != nil && *t.Strict {
			return llm.Unsupported(p+".strict", p+".strict is not supported on Vertex AI routes: the schema would not be enforced")
		}
		if c := t.Name[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return llm.BadRequest(p+".name", p+".name must start with a letter or an underscore on Gemini routes")
		}
		if len(t.Name) > maxFunctionName {
			return llm.BadRequest(p+".name", p+".name must be at most 64 characters on Gemini routes")
		}
		if _, err := schemaValue(t.Parameters); err != nil {
			return llm.BadRequest(p+".parameters", p+".parameters "+err.Error())
		}
	}
	if tc := req.ToolChoice; tc != nil && tc.DisableParallel && len(req.Tools) > 0 {
		return llm.Unsupported(tc.Param(), "Gemini cannot be held to one tool call per turn")
	}
	if len(req.Stop) > maxStopSequences {
		return llm.Unsupported("stop_sequences", "Gemini takes at most 5 stop sequences")
	}
	if th := req.Thinking; th != nil && th.Type == llm.ThinkingEnabled && !thinks(model) {
		return llm.Unsupported("thinking", modelName(model)+" does not think: use thinking {\"type\":\"adaptive\"} or a model that thinks")
	}
	return nil
}

// checkSeed refuses a seed Gemini cannot take: its seed is a 32-bit integer.
func checkSeed(req *llm.Request) *llm.Error {
	if s := req.Seed; s != nil && (*s < math.MinInt32 || *s > math.MaxInt32) {
		return llm.Unsupported("seed", "Gemini takes a seed between -2147483648 and 2147483647")
	}
	return nil
}

// checkTurn refuses messages[i] when Gemini would. A turn must send Gemini something: its
// empty texts and earlier thinking are left out, so a turn of nothing else is empty.
func checkTurn(i int, m *llm.Message) *llm.Error {
	p := "messages[" + strconv.Itoa(i) + "]"
	sent := 0
	for j := range m.Parts {
		pt := &m.Parts[j]
		switch pt.Kind {
		case llm.PartText:
			if pt.Text != "" {
				sent++
			}
		case llm.PartToolUse:
			if _, err := argsStruct(pt.Input); err != nil {
				tp := p + ".tool_calls[" + strconv.Itoa(m.ToolUsesBefore(j)) + "].function.arguments"
				return llm.BadRequest(tp, tp+" must be a JSON object: Gemini takes function call arguments as an object")
			}
			sent++
		case llm.PartImage:
			if oe := checkImage(pt, p+".content["+strconv.Itoa(j)+"]"); oe != nil {
				return oe
			}
			sent++
		case llm.PartToolResult:
			sent++
		}
	}
	if sent == 0 {
		return llm.BadRequest(p+".content", p+".content must not be empty: Gemini refuses empty text")
	}
	return nil
}

// checkImage refuses an image Gemini cannot be given: one by http(s) URL (Vertex AI reads
// only Cloud Storage URIs), a type it does not read, or data that is not base64.
func checkImage(p *llm.Part, path string) *llm.Error {
	if p.URL != "" {
		if !strings.HasPrefix(p.URL, "gs://") {
			return llm.Unsupported(path, path+": Gemini on Vertex AI takes images inline (base64) or from Cloud Storage (gs://), not by http(s) URL")
		}
		if !geminiImageTypes[imageType(p)] {
			return llm.Unsupported(path, path+": the image's type is not one Gemini reads (PNG, JPEG, WebP, HEIC, HEIF)")
		}
		return nil
	}
	if !geminiImageTypes[p.MediaType] {
		return llm.Unsupported(path, path+": Gemini does not read "+p.MediaType+" images (PNG, JPEG, WebP, HEIC, HEIF)")
	}
	if !providers.ValidBase64(p.Data) { // checked, not decoded: imagePart decodes it once
		return llm.BadRequest(path, path+": the image data is not valid base64")
	}
	return nil
}

// imageType is an image's media type: the one given, else for a Cloud Storage URI the one
// its extension names.
func imageType(p *llm.Part) string {
	if p.MediaType != "" || p.URL == "" {
		return p.MediaType
	}
	switch strings.ToLower(path.Ext(p.URL)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	case ".heic":
		return "image/heic"
	case ".heif":
		return "image/heif"
	}
	return ""
}

package bedrock

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydoc "github.com/aws/smithy-go/document"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/anthropic"
)

const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// turnRoleOf maps a message role to the Bedrock turn it belongs to.
func turnRoleOf(role string) string {
	if role == llm.RoleAssistant {
		return roleAssistant
	}
	return roleUser
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// objectOrEmpty reports whether tool call arguments can become a toolUse input: a JSON object,
// or nothing at all (a call without arguments).
func objectOrEmpty(args string) bool {
	a := strings.TrimSpace(args)
	return a == "" || a[0] == '{' && json.Valid([]byte(a))
}

// converse is a request as Converse takes it, built once: the plain call sends its
// ConverseInput, the streaming call the same members (streamInput), CountTokens some of them.
type converse struct {
	bedrockruntime.ConverseInput
	// answerTool is the forced tool that carries a JSON answer, or "" (converse_structured.go).
	answerTool string
}

// streamInput is the input of ConverseStream. Its type is not ConverseInput's only because
// of the guardrail configuration, which the gateway does not set.
func (c *converse) streamInput() *bedrockruntime.ConverseStreamInput {
	in := &c.ConverseInput
	return &bedrockruntime.ConverseStreamInput{ModelId: in.ModelId, Messages: in.Messages, System: in.System,
		InferenceConfig: in.InferenceConfig, ToolConfig: in.ToolConfig,
		AdditionalModelRequestFields: in.AdditionalModelRequestFields, OutputConfig: in.OutputConfig}
}

// buildConverse translates a request that passed checkConverse, for model.
//
// The system prompt is the request's up-front instructions, then its leading system
// messages (and, from the Messages door, later ones, hoisted), one block each. Consecutive
// messages of one role merge into one turn, as Bedrock demands strictly alternating roles;
// blank text is left out, as Bedrock refuses it. Thinking from earlier turns is not sent, as
// Anthropic itself drops earlier turns' thinking from the context. A cache_control breakpoint
// becomes a cachePoint after its block (system, message or tool) on the models that take
// one (converseExtras); elsewhere the hint is left out. top_k goes in
// additionalModelRequestFields, where Bedrock passes model-specific parameters on.
func buildConverse(req *llm.Request, t providers.Target) (*converse, error) {
	c := &converse{ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(t.Model)}}
	extras := converseExtras(t.Model)
	system, turns, _ := llm.SplitSystem(req, displayName, nil)
	for i := range system {
		p := &system[i]
		if !blank(p.Text) {
			c.System = append(c.System, &types.SystemContentBlockMemberText{Value: p.Text})
		}
		if cp := cachePoint(p.CacheControl, extras); cp != nil {
			c.System = append(c.System, &types.SystemContentBlockMemberCachePoint{Value: *cp})
		}
	}
	var usedTools []string // tool names the history calls, for a toolConfig Bedrock demands
	for i := range turns {
		m := &turns[i]
		role := types.ConversationRole(turnRoleOf(m.Role))
		for j := range m.Parts {
			p := &m.Parts[j]
			var b types.ContentBlock
			switch p.Kind {
			case llm.PartText:
				if !blank(p.Text) {
					b = &types.ContentBlockMemberText{Value: p.Text}
				}
			case llm.PartImage:
				b = &types.ContentBlockMemberImage{Value: imageBlock(p)}
			case llm.PartToolUse:
				input, _ := objectDocument(p.Input) // checkTurns made sure it is an object
				b = &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(toolUseID(p.ID)), Name: aws.String(p.Name), Input: input}}
				usedTools = appendUnique(usedTools, p.Name)
			case llm.PartToolResult:
				b = &types.ContentBlockMemberToolResult{Value: toolResult(p, extras)}
			}
			if b != nil {
				c.add(role, b)
			}
			if cp := cachePoint(p.CacheControl, extras); cp != nil && b != nil {
				c.add(role, &types.ContentBlockMemberCachePoint{Value: *cp})
			}
		}
	}
	maxTokens := req.MaxTokens
	if maxTokens == nil && t.MaxOutputTokens > 0 {
		// The model's ceiling holds even when the client sets no maximum.
		maxTokens = &t.MaxOutputTokens
	}
	if maxTokens != nil || req.Temperature != nil || req.TopP != nil || len(req.Stop) > 0 {
		c.InferenceConfig = &types.InferenceConfiguration{StopSequences: req.Stop}
		if maxTokens != nil {
			c.InferenceConfig.MaxTokens = aws.Int32(int32(min(*maxTokens, 1<<31-1)))
		}
		if req.Temperature != nil {
			c.InferenceConfig.Temperature = aws.Float32(float32(*req.Temperature))
		}
		if req.TopP != nil && !(oneSampler(req, t.Model) && defaultTopP(req)) {
			c.InferenceConfig.TopP = aws.Float32(float32(*req.TopP))
		}
	}
	if req.TopK != nil {
		c.AdditionalModelRequestFields = topK(*req.TopK, t.Model)
	}
	tools, err := toolConfig(req, usedTools, extras)
	if err != nil {
		return nil, err
	}
	c.OutputConfig = outputConfig(req, t.Model)
	if c.answerTool = respondTool(req, t.Model); c.answerTool != "" {
		if tools, err = addRespondTool(tools, req, c.answerTool); err != nil {
			return nil, err
		}
	}
	c.ToolConfig = tools
	return c, nil
}

// oneSampler reports a request with both samplers for a Claude model that takes one.
func oneSampler(req *llm.Request, model string) bool {
	return req.Temperature != nil && req.TopP != nil && claude(model) && anthropic.ModelOf(model).OneSampler
}

// defaultTopP reports a top_p of 1, no nucleus cut: the same as none, so a one-sampler
// model is not sent it (LlamaIndex.TS sends it beside its temperature on every request).
func defaultTopP(req *llm.Request) bool { return req.TopP != nil && *req.TopP == 1 }

// topK is the additionalModelRequestFields that carry top_k: Amazon Nova takes it as
// inferenceConfig.topK, Anthropic, Mistral and Cohere models as top_k.
func topK(k int, model string) document.Interface {
	if nova(model) {
		return document.NewLazyDocument(map[string]any{"inferenceConfig": map[string]any{"topK": k}})
	}
	return document.NewLazyDocument(map[string]any{"top_k": k})
}

// cachePoint is the cachePoint that stands for an Anthropic cache_control breakpoint, or nil
// when there is none or the model takes none. A ttl ("5m", "1h") goes with it.
func cachePoint(cacheControl json.RawMessage, extras bool) *types.CachePointBlock {
	if cacheControl == nil || !extras {
		return nil
	}
	var cc struct {
		TTL string `json:"ttl"`
	}
	_ = json.Unmarshal(cacheControl, &cc)
	return &types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: types.CacheTTL(cc.TTL)}
}

// imageFormat maps an image's media type to Bedrock's format.
func imageFormat(mediaType string) (types.ImageFormat, bool) {
	switch mediaType {
	case "image/png":
		return types.ImageFormatPng, true
	case "image/jpeg":
		return types.ImageFormatJpeg, true
	case "image/gif":
		return types.ImageFormatGif, true
	case "image/webp":
		return types.ImageFormatWebp, true
	}
	return "", false
}

// imageBlock is an image part as Converse takes it: the bytes, which the SDK encodes in
// base64 again. checkPart made sure of the format and the data, which is decoded here only.
func imageBlock(p *llm.Part) types.ImageBlock {
	format, _ := imageFormat(p.MediaType)
	data, _ := base64.StdEncoding.DecodeString(p.Data)
	return types.ImageBlock{Format: format, Source: &types.ImageSourceMemberBytes{Value: data}}
}

// toolResult translates a tool result: its text (as json when it is a JSON object, see
// toolResultContent) or its blocks, text and images. A failed result has status "error" on
// the models that take a status, and says "Error: " in its text on the others.
func toolResult(p *llm.Part, extras bool) types.ToolResultBlock {
	tr := types.ToolResultBlock{ToolUseId: aws.String(toolUseID(p.ToolUseID))}
	flagged := p.IsError && !extras
	if p.Content == nil {
		text := p.Text
		if flagged {
			text = "Error: " + text
		}
		tr.Content = []types.ToolResultContentBlock{toolResultContent(text)}
	} else {
		if flagged {
			tr.Content = append(tr.Content, &types.ToolResultContentBlockMemberText{Value: "Error:"})
		}
		for i := range p.Content {
			c := &p.Content[i]
			switch c.Kind {
			case llm.PartText:
				if !blank(c.Text) {
					tr.Content = append(tr.Content, &types.ToolResultContentBlockMemberText{Value: c.Text})
				}
			case llm.PartImage:
				tr.Content = append(tr.Content, &types.ToolResultContentBlockMemberImage{Value: imageBlock(c)})
			}
		}
	}
	if p.IsError && extras {
		tr.Status = types.ToolResultStatusError
	}
	return tr
}

// add appends a block to the last message when it has the same role: Bedrock demands strictly
// alternating roles, so consecutive user, tool and assistant messages merge.
func (c *converse) add(role types.ConversationRole, b types.ContentBlock) {
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == role {
		c.Messages[n-1].Content = append(c.Messages[n-1].Content, b)
		return
	}
	c.Messages = append(c.Messages, types.Message{Role: role, Content: []types.ContentBlock{b}})
}

func appendUnique(names []string, name string) []string {
	for _, n := range names {
		if n == name {
			return names
		}
	}
	return append(names, name)
}

// toolConfig renders tools and tool_choice. Bedrock refuses a history holding toolUse or
// toolResult blocks without a toolConfig, so when the client sent no tools the ones the history
// calls are declared with an open schema; no toolChoice is set then.
func toolConfig(req *llm.Request, used []string, extras bool) (*types.ToolConfiguration, error) {
	if len(req.Tools) == 0 {
		if len(used) == 0 {
			return nil, nil
		}
		tc := &types.ToolConfiguration{}
		for _, name := range used {
			tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name:        aws.String(name),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
			}})
		}
		return tc, nil
	}
	tc := &types.ToolConfiguration{Tools: make([]types.Tool, 0, len(req.Tools))}
	for i := range req.Tools {
		t := &req.Tools[i]
		schema, err := schemaDocument(t.Parameters)
		if err != nil {
			return nil, &providers.Error{Class: providers.BadRequest, Status: 400, Provider: displayName,
				Param: "tools[" + strconv.Itoa(i) + "].function.parameters", Message: "the parameters schema is not a JSON object: " + err.Error()}
		}
		spec := types.ToolSpecification{Name: aws.String(t.Name), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}
		if !blank(t.Description) {
			// Bedrock refuses a blank description; leaving it out loses nothing.
			spec.Description = aws.String(t.Description)
		}
		tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
		if cp := cachePoint(t.CacheControl, extras); cp != nil {
			tc.Tools = append(tc.Tools, &types.ToolMemberCachePoint{Value: *cp})
		}
	}
	if ch := req.ToolChoice; ch != nil {
		switch ch.Mode {
		case llm.ToolChoiceAuto:
			tc.ToolChoice = &types.ToolChoiceMemberAuto{Value: types.AutoToolChoice{}}
		case llm.ToolChoiceRequired:
			tc.ToolChoice = &types.ToolChoiceMemberAny{Value: types.AnyToolChoice{}}
		case llm.ToolChoiceTool:
			tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(ch.Name)}}
		}
	}
	return tc, nil
}

// toolResultContent sends a result that is a JSON object as json (models read it as
// structured data) and anything else as text.
func toolResultContent(s string) types.ToolResultContentBlock {
	if t := strings.TrimSpace(s); len(t) > 0 && t[0] == '{' {
		if doc, err := objectDocument(t); err == nil {
			return &types.ToolResultContentBlockMemberJson{Value: doc}
		}
	}
	return &types.ToolResultContentBlockMemberText{Value: s}
}

// schemaDocument turns a tool's parameters into the inputSchema document; a tool without
// parameters takes no arguments.
func schemaDocument(raw json.RawMessage) (document.Interface, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return document.NewLazyDocument(map[string]any{"type": "object", "properties": map[string]any{}}), nil
	}
	return objectDocument(string(raw))
}

// objectDocument decodes a JSON object into a document the SDK can serialize. Numbers stay
// exact: the SDK's document encoder writes json.Number as a string, but document.Number
// verbatim.
func objectDocument(s string) (document.Interface, error) {
	if blank(s) {
		return document.NewLazyDocument(map[string]any{}), nil
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errTrailingData
	}
	if v == nil {
		return nil, errNotObject
	}
	return document.NewLazyDocument(exactNumbers(v)), nil
}

type docError string

func (e docError) Error() string { return string(e) }

const (
	errTrailingData = docError("unexpected data after the JSON object")
	errNotObject    = docError("not a JSON object")
)

func exactNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		return smithydoc.Number(t)
	case map[string]any:
		for k, e := range t {
			t[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = exactNumbers(e)
		}
	}
	return v
}

// toolUseID makes a tool call id acceptable to Bedrock ([a-zA-Z0-9_-], 1 to 64 characters).
// Ids from other providers (OpenAI's call_..., anything a client made up) may not be. The same
// id always maps to the same value, so a toolUse and its toolResult still match, and a hash of
// the original keeps two ids that clean up alike apart.
func toolUseID(id string) string {
	if validToolUseID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	suffix := "_" + hex.EncodeToString(sum[:5])
	b := make([]byte, 0, 64)
	for _, r := range id {
		if len(b) == 64-len(suffix) {
			break
		}
		if r < utf8.RuneSelf && idChar(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return string(b) + suffix
}

func validToolUseID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			return false
		}
	}
	return true
}

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

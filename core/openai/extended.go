package openai

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/llm"
)

// The extended profile's chat request: ChatRequest and the fields mainstream SDKs send
// (max_tokens, top_p, stop, seed, the penalties, response_format, parallel_tool_calls,
// messages[].name and content-part arrays). Each is validated here as OpenAI validates it
// and carried into llm.Request; a route that cannot honour one refuses the request with the
// reason. Whatever the strict profile refuses that is not listed here is refused here too,
// with the same words.
type extendedChat struct {
	Model               string            `json:"model"`
	Messages            []extendedMessage `json:"messages"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	MaxTokens           *int              `json:"max_tokens"`
	Temperature         *float64          `json:"temperature"`
	TopP                *float64          `json:"top_p"`
	Stop                json.RawMessage   `json:"stop"`
	Seed                *int64            `json:"seed"`
	PresencePenalty     *float64          `json:"presence_penalty"`
	FrequencyPenalty    *float64          `json:"frequency_penalty"`
	ResponseFormat      *responseFormat   `json:"response_format"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	Stream              bool              `json:"stream"`
	StreamOptions       *StreamOptions    `json:"stream_options"`
	Tools               []Tool            `json:"tools"`
	ToolChoice          *ToolChoice       `json:"tool_choice"`
	N                   *int              `json:"n"`
	User                string            `json:"user"`
	Metadata            map[string]string `json:"metadata"`
}

// extendedMessage is Message with a participant name and content that may be an array of
// parts (decoded once the message's place is known, for the param of a refusal).
type extendedMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       *string         `json:"name"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`

	Refusal      json.RawMessage `json:"refusal,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Audio        json.RawMessage `json:"audio,omitempty"`
	FunctionCall json.RawMessage `json:"function_call,omitempty"`
}

// contentPart is one element of a content-part array. Which member is set depends on type.
type contentPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text"`
	ImageURL   *imageURL       `json:"image_url"`
	InputAudio json.RawMessage `json:"input_audio"`
	File       json.RawMessage `json:"file"`
	Refusal    *string         `json:"refusal"`
}

type imageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail"`
}

// responseFormat is OpenAI's response_format.
type responseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *jsonSchemaFormat `json:"json_schema"`
}

type jsonSchemaFormat struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict"`
}

// maxStop is the most stop sequences OpenAI takes.
const maxStop = 4

// request validates r and converts it. The checks of the strict profile run on the same
// messages (with each content-part array standing as its text), then the extended fields'.
func (r *extendedChat) request(lim llm.Limits) (*llm.Request, *llm.Error) {
	base := &ChatRequest{Model: r.Model, MaxCompletionTokens: r.MaxCompletionTokens, Temperature: r.Temperature,
		Stream: r.Stream, StreamOptions: r.StreamOptions, Tools: r.Tools, ToolChoice: r.ToolChoice, N: r.N,
		User: r.User, Metadata: r.Metadata, Messages: make([]Message, len(r.Messages))}
	parts := make([][]llm.Part, len(r.Messages)) // decoded content-part arrays
	for i := range r.Messages {
		m := &r.Messages[i]
		p := "messages[" + strconv.Itoa(i) + "]"
		text, ps, e := m.content(p)
		if e != nil {
			return nil, e
		}
		parts[i] = ps
		base.Messages[i] = Message{Role: m.Role, Content: text, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID,
			Refusal: m.Refusal, Annotations: m.Annotations, Audio: m.Audio, FunctionCall: m.FunctionCall}
		if m.Name != nil && *m.Name != "" && !validParticipant(*m.Name) {
			return nil, llm.BadRequest(p+".name", p+".name must be a non-empty name without whitespace or any of <|\\/>")
		}
	}
	if r.MaxTokens != nil && r.MaxCompletionTokens != nil {
		return nil, llm.BadRequest("max_tokens", "max_tokens and max_completion_tokens both set the output maximum: send only one (max_completion_tokens is the current name)")
	}
	if e := base.validate(lim); e != nil {
		return nil, e
	}
	if e := r.validate(); e != nil {
		return nil, e
	}
	stop, e := decodeStop(r.Stop)
	if e != nil {
		return nil, e
	}
	req := base.Request()
	if r.MaxTokens != nil {
		req.MaxTokens, req.MaxTokensParam = r.MaxTokens, "max_tokens"
	}
	req.TopP, req.Stop, req.Seed = r.TopP, stop, r.Seed
	req.PresencePenalty, req.FrequencyPenalty = r.PresencePenalty, r.FrequencyPenalty
	req.ResponseFormat = r.ResponseFormat.llm()
	if r.ParallelToolCalls != nil && !*r.ParallelToolCalls && len(r.Tools) > 0 {
		// Without tools there is no call to hold to one: the setting means nothing there.
		if req.ToolChoice == nil {
			req.ToolChoice = &llm.ToolChoice{Mode: llm.ToolChoiceAuto}
		}
		req.ToolChoice.DisableParallel, req.ToolChoice.ParallelParam = true, "parallel_tool_calls"
	}
	for i := range r.Messages {
		m, out := &r.Messages[i], &req.Messages[i]
		if parts[i] != nil && m.Role != RoleTool {
			// Request wrote the joined text as one part ahead of the tool calls.
			out.Parts = append(parts[i], out.Parts[1:]...)
		}
		// A tool message's name is the function's, which its tool_call_id already names.
		if m.Name != nil && m.Role != RoleTool {
			out.Name = *m.Name
		}
	}
	return req, nil
}

func (r *extendedChat) validate() *llm.Error {
	if r.MaxTokens != nil && *r.MaxTokens < 1 {
		return llm.BadRequest("max_tokens", "max_tokens must be at least 1")
	}
	if r.TopP != nil && (math.IsNaN(*r.TopP) || *r.TopP < 0 || *r.TopP > 1) {
		return llm.BadRequest("top_p", "top_p must be between 0 and 1")
	}
	if e := penalty("presence_penalty", r.PresencePenalty); e != nil {
		return e
	}
	if e := penalty("frequency_penalty", r.FrequencyPenalty); e != nil {
		return e
	}
	return r.ResponseFormat.validate()
}

func penalty(name string, v *float64) *llm.Error {
	if v != nil && (math.IsNaN(*v) || *v < -2 || *v > 2) {
		return llm.BadRequest(name, name+" must be between -2 and 2")
	}
	return nil
}

// content decodes a message's content: nil when absent or null, a string, or an array of
// parts. text is what the strict checks see (the parts' text, joined); parts is set only for
// an array.
func (m *extendedMessage) content(p string) (text *string, parts []llm.Part, e *llm.Error) {
	raw := m.Content
	switch {
	case isNull(raw):
		return nil, nil, nil
	case raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s) // a JSON string: the body decoded
		return &s, nil, nil
	case raw[0] != '[':
		return nil, nil, llm.BadRequest(p+".content", p+".content: expected a string or an array of content parts, got "+jsonKind(kindOf(raw)))
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems)
	if len(elems) == 0 {
		return nil, nil, llm.BadRequest(p+".content", p+".content must hold at least one content part")
	}
	var joined strings.Builder
	parts = make([]llm.Part, 0, len(elems))
	for j, el := range elems {
		pp := p + ".content[" + strconv.Itoa(j) + "]"
		var cp contentPart
		if e := decodeAt(el, &cp, pp); e != nil {
			return nil, nil, e
		}
		part, e := cp.part(pp, m.Role)
		if e != nil {
			return nil, nil, e
		}
		if part.Kind == llm.PartText {
			joined.WriteString(part.Text)
		}
		parts = append(parts, part)
	}
	s := joined.String()
	return &s, parts, nil
}

// kindOf is a raw value's generic form, for jsonKind.
func kindOf(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	if _, ok := v.(float64); ok {
		return json.Number("0")
	}
	return v
}

// part converts one content part of a message of role. Text goes everywhere; images only in
// user messages, as data URLs (png, jpeg, gif, webp: what every route that takes images
// reads) or https URLs; audio and files are refused, since no route of this gateway carries
// them.
func (c *contentPart) part(p, role string) (llm.Part, *llm.Error) {
	only := func(member string) *llm.Error {
		set := map[string]bool{"text": c.Text != nil, "image_url": c.ImageURL != nil, "input_audio": c.InputAudio != nil,
			"file": c.File != nil, "refusal": c.Refusal != nil}
		for _, k := range [...]string{"text", "image_url", "input_audio", "file", "refusal"} {
			if set[k] && k != member {
				return llm.BadRequest(p+"."+k, p+"."+k+" is not allowed in a part of type "+quote(c.Type))
			}
		}
		if !set[member] {
			return llm.BadRequest(p+"."+member, p+"."+member+" is required in a part of type "+quote(c.Type))
		}
		return nil
	}
	switch c.Type {
	case "text":
		if e := only("text"); e != nil {
			return llm.Part{}, e
		}
		return llm.Part{Kind: llm.PartText, Text: *c.Text}, nil
	case "image_url":
		if e := only("image_url"); e != nil {
			return llm.Part{}, e
		}
		if role != RoleUser {
			return llm.Part{}, llm.BadRequest(p+".type", p+": image parts are only allowed in user messages")
		}
		return c.ImageURL.part(p + ".image_url")
	case "input_audio", "file":
		return llm.Part{}, llm.Unsupported(p+".type", p+": "+c.Type+" parts are not supported: no route of this gateway carries audio or files; send text or images")
	case "refusal":
		return llm.Part{}, llm.Unsupported(p+".type", p+": refusal parts are not supported: send the assistant's text")
	case "":
		return llm.Part{}, llm.BadRequest(p+".type", p+".type is required")
	}
	return llm.Part{}, llm.BadRequest(p+".type", p+".type must be text, image_url, input_audio or file, got "+quote(c.Type))
}

// imageTypes are the image types every route that takes images reads.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

func (u *imageURL) part(p string) (llm.Part, *llm.Error) {
	switch u.Detail {
	case "", "auto":
	default:
		return llm.Part{}, llm.Unsupported(p+".detail", p+".detail "+quote(u.Detail)+" is not supported: only OpenAI reads it; leave it out or send \"auto\"")
	}
	if rest, ok := strings.CutPrefix(u.URL, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mediaType, base64, _ := strings.Cut(meta, ";")
		switch {
		case !ok || base64 != "base64":
			return llm.Part{}, llm.BadRequest(p+".url", p+".url: a data URL must be base64 (data:image/png;base64,...)")
		case !imageTypes[mediaType]:
			return llm.Part{}, llm.Unsupported(p+".url", p+".url: images must be PNG, JPEG, GIF or WebP, got "+quote(mediaType))
		case data == "":
			return llm.Part{}, llm.BadRequest(p+".url", p+".url: the data URL holds no data")
		}
		return llm.Part{Kind: llm.PartImage, MediaType: mediaType, Data: data}, nil
	}
	if !strings.HasPrefix(u.URL, "https://") || len(u.URL) == len("https://") {
		return llm.Part{}, llm.BadRequest(p+".url", p+".url must be an https URL or a base64 data URL")
	}
	return llm.Part{Kind: llm.PartImage, URL: u.URL}, nil
}

// validParticipant is OpenAI's rule for messages[].name.
func validParticipant(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r\n\f\v<|\\/>")
}

// decodeStop reads stop: a string, or an array of up to 4 strings; none may be empty.
func decodeStop(raw json.RawMessage) ([]string, *llm.Error) {
	if isNull(raw) {
		return nil, nil
	}
	var list []string
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		list = []string{s}
	} else if json.Unmarshal(raw, &list) != nil {
		return nil, llm.BadRequest("stop", "stop must be a string or an array of strings")
	}
	if len(list) > maxStop {
		return nil, llm.BadRequest("stop", "stop holds at most 4 sequences, got "+strconv.Itoa(len(list)))
	}
	for i, s := range list {
		if s == "" {
			return nil, llm.BadRequest("stop", "stop["+strconv.Itoa(i)+"] is empty: a stop sequence must hold some text")
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	return list, nil
}

func (f *responseFormat) validate() *llm.Error {
	if f == nil {
		return nil
	}
	switch f.Type {
	case llm.FormatText, llm.FormatJSONObject:
		if f.JSONSchema != nil {
			return llm.BadRequest("response_format.json_schema", "response_format.json_schema is only allowed with type \"json_schema\"")
		}
		return nil
	case llm.FormatJSONSchema:
	case "":
		return llm.BadRequest("response_format.type", "response_format.type is required")
	default:
		return llm.BadRequest("response_format.type", "response_format.type must be text, json_object or json_schema, got "+quote(f.Type))
	}
	s := f.JSONSchema
	switch {
	case s == nil:
		return llm.BadRequest("response_format.json_schema", "response_format.json_schema is required with type \"json_schema\"")
	case !llm.ValidToolName(s.Name, 64):
		return llm.BadRequest("response_format.json_schema.name", "response_format.json_schema.name must be 1 to 64 characters of a-z, A-Z, 0-9, underscore or dash")
	case isNull(s.Schema) || s.Schema[0] != '{':
		return llm.BadRequest("response_format.json_schema.schema", "response_format.json_schema.schema must be a JSON Schema object")
	}
	return nil
}

// llm converts a validated response_format; text is the default and converts to nil.
func (f *responseFormat) llm() *llm.ResponseFormat {
	if f == nil || f.Type == llm.FormatText {
		return nil
	}
	out := &llm.ResponseFormat{Type: f.Type}
	if s := f.JSONSchema; s != nil {
		out.Name, out.Description, out.Schema, out.Strict = s.Name, s.Description, s.Schema, s.Strict
	}
	return out
}

// extendedCompletion is CompletionRequest with the legacy API's sampling fields.
type extendedCompletion struct {
	Model            string          `json:"model"`
	Prompt           *string         `json:"prompt"`
	MaxTokens        *int            `json:"max_tokens"`
	Temperature      *float64        `json:"temperature"`
	TopP             *float64        `json:"top_p"`
	Stop             json.RawMessage `json:"stop"`
	Seed             *int64          `json:"seed"`
	PresencePenalty  *float64        `json:"presence_penalty"`
	FrequencyPenalty *float64        `json:"frequency_penalty"`
	Stream           bool            `json:"stream"`
	StreamOptions    *StreamOptions  `json:"stream_options"`
	N                *int            `json:"n"`
	User             string          `json:"user"`
}

func (r *extendedCompletion) request() (*llm.Request, *llm.Error) {
	base := &CompletionRequest{Model: r.Model, Prompt: r.Prompt, MaxTokens: r.MaxTokens, Temperature: r.Temperature,
		Stream: r.Stream, StreamOptions: r.StreamOptions, N: r.N, User: r.User}
	if e := base.validate(); e != nil {
		return nil, e
	}
	ext := extendedChat{TopP: r.TopP, PresencePenalty: r.PresencePenalty, FrequencyPenalty: r.FrequencyPenalty}
	if e := ext.validate(); e != nil {
		return nil, e
	}
	stop, e := decodeStop(r.Stop)
	if e != nil {
		return nil, e
	}
	req := base.Request()
	req.TopP, req.Stop, req.Seed = r.TopP, stop, r.Seed
	req.PresencePenalty, req.FrequencyPenalty = r.PresencePenalty, r.FrequencyPenalty
	return req, nil
}

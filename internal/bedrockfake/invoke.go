package bedrockfake

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fngate/fngate/internal/anthropicfake"
)

// Version is the anthropic_version InvokeModel requires of a Claude body.
const Version = "bedrock-2023-05-31"

// Signature signs the reasoning blocks of scripted Converse answers.
const Signature = "ZmFrZSBiZWRyb2NrIHNpZ25hdHVyZQ=="

// Model is the model an InvokeModel answer names, as Bedrock names the Claude model behind the
// id the request used.
const Model = "claude-fake-on-bedrock"

// anthropicAnswer renders a scripted answer as the Claude message InvokeModel returns: the
// same blocks, stop reason and usage (inputTokens is Anthropic's input_tokens, cache writes
// its cache_creation_input_tokens).
func anthropicAnswer(a *Answer) *anthropicfake.Answer {
	out := &anthropicfake.Answer{ID: "msg_bdrk_01FakeBedrockMessage", Model: Model, StopReason: stopReason(a)}
	for _, b := range a.Blocks {
		switch {
		case b.ToolUse != nil:
			out.Blocks = append(out.Blocks, anthropicfake.ToolUse(b.ToolUse.ID, b.ToolUse.Name, b.ToolUse.Input))
		case b.Thinking != "":
			out.Blocks = append(out.Blocks, anthropicfake.Thinking(b.Thinking))
		default:
			out.Blocks = append(out.Blocks, anthropicfake.Text(b.Text))
		}
	}
	if u := a.Usage; u != nil {
		n := func(p *int) int {
			if p == nil {
				return 0
			}
			return *p
		}
		out.Usage = anthropicfake.Usage{Input: n(u.InputTokens), Output: n(u.OutputTokens),
			CacheCreation: n(u.CacheWriteInputTokens), CacheRead: n(u.CacheReadInputTokens)}
	}
	return out
}

// chunkFrames are the InvokeModelWithResponseStream frames of an answer: one chunk event per
// Anthropic event, whose payload is {"bytes": "<base64 of the event's JSON>", "p": padding}
// (Bedrock pads chunks so their size does not tell the tokens). Bedrock adds
// amazon-bedrock-invocationMetrics to message_stop.
func chunkFrames(a *Answer) []Frame {
	if a.Frames != nil {
		return a.Frames
	}
	events := a.Events
	if events == nil {
		events = anthropicAnswer(a).Events("")
	}
	fs := make([]Frame, 0, len(events))
	for i, e := range events {
		data := []byte(e.Data)
		if e.Name == "message_stop" {
			data = invocationMetrics(data, anthropicAnswer(a).Usage)
		}
		fs = append(fs, Chunk(data, strings.Repeat("x", i%7)))
	}
	return fs
}

// Chunk is the chunk frame carrying one Anthropic event, with pad as its "p" member.
func Chunk(event []byte, pad string) Frame {
	payload := map[string]string{"bytes": base64.StdEncoding.EncodeToString(event)}
	if pad != "" {
		payload["p"] = pad
	}
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return Frame{Event: "chunk", Payload: b}
}

func invocationMetrics(stop []byte, u anthropicfake.Usage) []byte {
	rest, ok := bytes.CutSuffix(bytes.TrimSpace(stop), []byte("}"))
	if !ok {
		return stop
	}
	return fmt.Appendf(rest, `,"amazon-bedrock-invocationMetrics":{"inputTokenCount":%d,"outputTokenCount":%d,"invocationLatency":420,"firstByteLatency":42}}`,
		u.Input, u.Output)
}

// invokeFields are the members Bedrock's Anthropic body takes. Bedrock refuses any other
// ("model", "stream", "service_tier", ...) as an extraneous key.
var invokeFields = map[string]bool{
	"anthropic_version": true, "anthropic_beta": true, "max_tokens": true, "system": true, "messages": true,
	"temperature": true, "top_p": true, "top_k": true, "stop_sequences": true, "tools": true, "tool_choice": true,
	"thinking": true, "metadata": true, "context_management": true, "output_config": true,
}

// standIn replaces, in the copy anthropicfake checks, a block this fake has checked itself.
var standIn = json.RawMessage(`{"type":"text","text":"(checked by bedrockfake)"}`)

// ValidateInvoke checks an InvokeModel body as Bedrock checks a Claude body and returns the
// ValidationException message, or "". betas, when not nil, are the anthropic_beta flags
// accepted.
//
// Bedrock's own rules come first: a JSON object of known members only, anthropic_version
// bedrock-2023-05-31, anthropic_beta a list of strings, metadata holding only user_id. What
// follows is Anthropic's Messages validation: the fake checks what anthropicfake does not
// model (images, documents, thinking blocks, server tools, defer_loading, context_management,
// output_config), then hands anthropicfake a copy with those parts stood in for, so roles,
// tool pairing and placement, required fields and ranges are checked by anthropicfake's rules.
func ValidateInvoke(body []byte, betas []string) string {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil || req == nil {
		return "Malformed input request: the body is not a JSON object, please reformat your input and try again."
	}
	keys := make([]string, 0, len(req))
	for k := range req {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !invokeFields[k] {
			return "Malformed input request: #: extraneous key [" + k + "] is not permitted, please reformat your input and try again."
		}
	}
	raw, ok := req["anthropic_version"]
	if !ok {
		return "Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again."
	}
	var version string
	if json.Unmarshal(raw, &version) != nil || version != Version {
		return "Invalid API version: anthropic_version must be " + Version
	}
	if raw, ok := req["anthropic_beta"]; ok {
		var flags []string
		if json.Unmarshal(raw, &flags) != nil {
			return "Malformed input request: #/anthropic_beta: expected type: JSONArray of strings, please reformat your input and try again."
		}
		for _, f := range flags {
			if betas != nil && !slices.Contains(betas, f) {
				return "invalid beta flag"
			}
		}
	}
	if raw, ok := req["metadata"]; ok {
		var md map[string]json.RawMessage
		if json.Unmarshal(raw, &md) != nil {
			return "metadata: Input should be a valid dictionary"
		}
		for k := range md {
			if k != "user_id" {
				return "metadata." + k + ": Extra inputs are not permitted"
			}
		}
	}
	for _, k := range []string{"context_management", "output_config"} {
		if raw, ok := req[k]; ok && !isObject(raw) {
			return k + ": Input should be a valid dictionary"
		}
	}
	cp := map[string]json.RawMessage{"model": json.RawMessage(`"bedrock"`)}
	for k, v := range req {
		switch k {
		case "anthropic_version", "anthropic_beta", "context_management", "output_config":
		case "tools":
			tools, msg := standInTools(v)
			if msg != "" {
				return msg
			}
			if tools != nil {
				cp[k] = tools
			}
		case "messages":
			msgs, msg := standInBlocks(v)
			if msg != "" {
				return msg
			}
			cp[k] = msgs
		default:
			cp[k] = v
		}
	}
	if cp["tools"] == nil {
		// Only server tools: anthropicfake would refuse a tool_choice without tools.
		delete(cp, "tools")
		delete(cp, "tool_choice")
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return "Malformed input request: " + err.Error()
	}
	if e := anthropicfake.ValidateBody(b, anthropicfake.Bedrock); e != nil {
		return e.Message
	}
	return ""
}

// standInTools checks server tools (a type other than custom) and defer_loading, which
// anthropicfake does not model, and returns the tools without them.
func standInTools(raw json.RawMessage) (json.RawMessage, string) {
	var tools []map[string]json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return raw, "" // anthropicfake refuses it
	}
	out := make([]map[string]json.RawMessage, 0, len(tools))
	for i, t := range tools {
		var typ, name string
		_ = json.Unmarshal(t["type"], &typ)
		if typ != "" && typ != "custom" {
			if json.Unmarshal(t["name"], &name) != nil || name == "" {
				return nil, fmt.Sprintf("tools.%d.name: Field required", i)
			}
			continue
		}
		if d, ok := t["defer_loading"]; ok {
			var b bool
			if json.Unmarshal(d, &b) != nil {
				return nil, fmt.Sprintf("tools.%d.custom.defer_loading: Input should be a valid boolean", i)
			}
			delete(t, "defer_loading")
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, "" // only server tools: nothing left for anthropicfake
	}
	b, _ := json.Marshal(out)
	return b, ""
}

// standInBlocks checks the content blocks anthropicfake does not model and returns the
// messages with each of them stood in for by a text block.
func standInBlocks(raw json.RawMessage) (json.RawMessage, string) {
	var msgs []map[string]json.RawMessage
	if json.Unmarshal(raw, &msgs) != nil {
		return raw, ""
	}
	for i, m := range msgs {
		var blocks []json.RawMessage
		if json.Unmarshal(m["content"], &blocks) != nil {
			continue // a string, or what anthropicfake refuses
		}
		var role string
		_ = json.Unmarshal(m["role"], &role)
		for j, b := range blocks {
			at := fmt.Sprintf("messages.%d.content.%d", i, j)
			var blk struct {
				Type      string          `json:"type"`
				Source    json.RawMessage `json:"source"`
				Thinking  *string         `json:"thinking"`
				Signature *string         `json:"signature"`
				Data      *string         `json:"data"`
			}
			if json.Unmarshal(b, &blk) != nil {
				continue
			}
			switch blk.Type {
			case "text", "tool_use", "tool_result":
				continue
			case "image", "document":
				if role != "user" {
					return nil, at + ": " + blk.Type + " blocks are only allowed in user messages"
				}
				if msg := checkSource(at+".source", blk.Type, blk.Source); msg != "" {
					return nil, msg
				}
			case "thinking":
				if role != "assistant" || blk.Thinking == nil || blk.Signature == nil {
					return nil, at + ".thinking: a thinking block needs thinking and signature, in an assistant message"
				}
			case "redacted_thinking":
				if role != "assistant" || blk.Data == nil {
					return nil, at + ".data: Field required"
				}
			}
			// Other types (server tool calls and results, search results) are Claude's to
			// judge; the fake takes them.
			blocks[j] = standIn
		}
		m["content"], _ = json.Marshal(blocks)
	}
	b, _ := json.Marshal(msgs)
	return b, ""
}

// checkSource checks an image's or a document's source as Bedrock does: base64 data with a
// media type it reads, or (documents) plain text. URLs and Files API ids are Anthropic's API
// only: Bedrock cannot fetch or resolve them.
func checkSource(at, typ string, raw json.RawMessage) string {
	var src struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	if json.Unmarshal(raw, &src) != nil {
		return at + ": Field required"
	}
	switch {
	case src.Type == "base64" && typ == "image":
		switch src.MediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return at + ".media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
		}
		if _, err := base64.StdEncoding.DecodeString(src.Data); err != nil || src.Data == "" {
			return at + ".data: invalid base64 data"
		}
	case src.Type == "base64" && typ == "document":
		if src.MediaType != "application/pdf" {
			return at + ".media_type: Input should be 'application/pdf'"
		}
	case src.Type == "text" && typ == "document":
	default:
		return at + ".type: source type " + src.Type + " is not supported on Amazon Bedrock"
	}
	return ""
}

// ValidateCount checks a CountTokens body, {"input": {"invokeModel": {"body": <base64>}}} or
// {"input": {"converse": {...}}}, the inner request as the operation it stands for.
func ValidateCount(body []byte, betas []string) string {
	var req struct {
		Input map[string]json.RawMessage `json:"input"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil || len(req.Input) != 1 {
		return "Malformed input request: input needs exactly one of invokeModel and converse"
	}
	if raw, ok := req.Input["invokeModel"]; ok {
		var im struct {
			Body []byte `json:"body"` // base64 in JSON, as []byte decodes
		}
		if json.Unmarshal(raw, &im) != nil || len(im.Body) == 0 {
			return "input.invokeModel.body: Member must not be null"
		}
		return ValidateInvoke(im.Body, betas)
	}
	if raw, ok := req.Input["converse"]; ok {
		var cv map[string]json.RawMessage
		if json.Unmarshal(raw, &cv) != nil {
			return "input.converse: Malformed input request"
		}
		for k := range cv {
			switch k {
			case "messages", "system", "toolConfig", "additionalModelRequestFields":
			default:
				return "input.converse: extraneous key [" + k + "] is not permitted"
			}
		}
		return Validate(raw)
	}
	return "Malformed input request: input needs exactly one of invokeModel and converse"
}

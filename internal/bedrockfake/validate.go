package bedrockfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

type converseRequest struct {
	Messages        []wireMessage    `json:"messages"`
	System          []map[string]any `json:"system"`
	InferenceConfig *struct {
		MaxTokens     *int     `json:"maxTokens"`
		Temperature   *float64 `json:"temperature"`
		TopP          *float64 `json:"topP"`
		StopSequences []string `json:"stopSequences"`
	} `json:"inferenceConfig"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec *struct {
				Name        string  `json:"name"`
				Description *string `json:"description"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
			CachePoint json.RawMessage `json:"cachePoint"`
		} `json:"tools"`
		ToolChoice map[string]json.RawMessage `json:"toolChoice"`
	} `json:"toolConfig"`
	AdditionalModelRequestFields      json.RawMessage `json:"additionalModelRequestFields"`
	AdditionalModelResponseFieldPaths []string        `json:"additionalModelResponseFieldPaths"`
	GuardrailConfig                   json.RawMessage `json:"guardrailConfig"`
	PerformanceConfig                 json.RawMessage `json:"performanceConfig"`
	PromptVariables                   json.RawMessage `json:"promptVariables"`
	RequestMetadata                   json.RawMessage `json:"requestMetadata"`
	ServiceTier                       json.RawMessage `json:"serviceTier"`
	OutputConfig                      json.RawMessage `json:"outputConfig"`
}

type wireMessage struct {
	Role    string                       `json:"role"`
	Content []map[string]json.RawMessage `json:"content"`
}

type toolUseBlock struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	ToolUseID string                       `json:"toolUseId"`
	Content   []map[string]json.RawMessage `json:"content"`
	Status    string                       `json:"status"`
}

// Validate checks a Converse request body as Bedrock does and returns the
// ValidationException message, or "" when the request is acceptable.
func Validate(body []byte) string {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	var req converseRequest
	if err := d.Decode(&req); err != nil {
		return "Malformed input request: " + err.Error()
	}
	cachePoints := 0
	for i, b := range req.System {
		if t, ok := b["text"].(string); ok && strings.TrimSpace(t) == "" {
			return fmt.Sprintf("The text field in the SystemContentBlock object at system.%d is blank. Add text to the text field, and try again.", i)
		}
		if cp, ok := b["cachePoint"]; ok {
			if i == 0 {
				return "system.0.cachePoint: a cache point must follow the content it caches"
			}
			raw, _ := json.Marshal(cp)
			if msg := checkCachePoint("system."+fmt.Sprint(i), raw); msg != "" {
				return msg
			}
			cachePoints++
		}
	}
	if len(req.Messages) == 0 {
		return "A conversation must start with a user message. Try again with a conversation that starts with a user message."
	}
	toolBlocks := false
	var pending map[string]bool // toolUse ids of the previous assistant turn, awaiting results
	for i, m := range req.Messages {
		switch {
		case i == 0 && m.Role != "user":
			return "A conversation must start with a user message. Try again with a conversation that starts with a user message."
		case m.Role != "user" && m.Role != "assistant":
			return fmt.Sprintf("messages.%d.role: %q is not a valid role", i, m.Role)
		case i > 0 && m.Role == req.Messages[i-1].Role:
			return "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."
		case len(m.Content) == 0:
			return fmt.Sprintf("messages.%d.content: the content field is empty", i)
		}
		calls := map[string]bool{}
		for j, b := range m.Content {
			at := fmt.Sprintf("messages.%d.content.%d", i, j)
			if len(b) != 1 {
				return at + ": a content block must have exactly one member"
			}
			switch {
			case b["text"] != nil:
				var t string
				if json.Unmarshal(b["text"], &t) != nil || strings.TrimSpace(t) == "" {
					return "The text field in the ContentBlock object at " + at + " is blank. Add text to the text field, and try again."
				}
			case b["toolUse"] != nil:
				toolBlocks = true
				if m.Role != "assistant" {
					return at + ": toolUse blocks are only allowed in assistant messages"
				}
				var tu toolUseBlock
				if json.Unmarshal(b["toolUse"], &tu) != nil || !toolIDPattern.MatchString(tu.ToolUseID) {
					return at + ".toolUse.toolUseId: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ and length 1 to 64"
				}
				if !toolNamePattern.MatchString(tu.Name) {
					return at + ".toolUse.name: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
				}
				if !isObject(tu.Input) {
					return at + ".toolUse.input: the input must be a JSON object"
				}
				if calls[tu.ToolUseID] {
					return at + ": duplicate toolUseId " + tu.ToolUseID
				}
				calls[tu.ToolUseID] = true
			case b["image"] != nil:
				if m.Role != "user" {
					return at + ": image blocks are only allowed in user messages"
				}
				if msg := checkImage(at+".image", b["image"]); msg != "" {
					return msg
				}
			case b["cachePoint"] != nil:
				if j == 0 {
					return at + ".cachePoint: a cache point must follow the content it caches"
				}
				if msg := checkCachePoint(at, b["cachePoint"]); msg != "" {
					return msg
				}
				cachePoints++
			case b["toolResult"] != nil:
				toolBlocks = true
				if m.Role != "user" {
					return at + ": toolResult blocks are only allowed in user messages"
				}
				var tr toolResultBlock
				if json.Unmarshal(b["toolResult"], &tr) != nil || !toolIDPattern.MatchString(tr.ToolUseID) {
					return at + ".toolResult.toolUseId: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ and length 1 to 64"
				}
				if !pending[tr.ToolUseID] {
					return at + ": the toolResult block answers toolUseId " + tr.ToolUseID + ", which the previous assistant message did not use"
				}
				delete(pending, tr.ToolUseID)
				if tr.Status != "" && tr.Status != "success" && tr.Status != "error" {
					return at + ".toolResult.status: Member must satisfy enum value set: [success, error]"
				}
				if len(tr.Content) == 0 {
					return at + ".toolResult.content: the content field is empty"
				}
				for k, c := range tr.Content {
					cat := fmt.Sprintf("%s.toolResult.content.%d", at, k)
					if len(c) != 1 {
						return cat + ": a content block must have exactly one member"
					}
					if raw, ok := c["text"]; ok {
						var t string
						if json.Unmarshal(raw, &t) != nil || strings.TrimSpace(t) == "" {
							return "The text field in the ToolResultContentBlock object at " + cat + " is blank. Add text to the text field, and try again."
						}
					} else if img, ok := c["image"]; ok {
						if msg := checkImage(cat+".image", img); msg != "" {
							return msg
						}
					} else if _, ok := c["json"]; !ok {
						return cat + ": only text, json and image tool results are supported by this fake"
					}
				}
			default:
				return at + ": only text, image, cachePoint, toolUse and toolResult blocks are supported by this fake"
			}
		}
		if m.Role == "user" && len(pending) > 0 {
			return fmt.Sprintf("messages.%d: the toolUse blocks of the previous assistant message need a toolResult block each in this message", i)
		}
		if m.Role == "assistant" {
			if len(pending) > 0 {
				return fmt.Sprintf("messages.%d: the toolUse blocks of the previous assistant message got no toolResult", i-1)
			}
			pending = calls
		}
	}
	if tc := req.ToolConfig; tc != nil {
		if len(tc.Tools) == 0 {
			return "toolConfig.tools: Member must have length greater than or equal to 1"
		}
		names := map[string]bool{}
		for i, t := range tc.Tools {
			at := fmt.Sprintf("toolConfig.tools.%d", i)
			s := t.ToolSpec
			if t.CachePoint != nil {
				if i == 0 {
					return at + ".cachePoint: a cache point must follow the content it caches"
				}
				if msg := checkCachePoint(at, t.CachePoint); msg != "" {
					return msg
				}
				cachePoints++
			}
			if s == nil {
				continue
			}
			if !toolNamePattern.MatchString(s.Name) {
				return at + ".toolSpec.name: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
			}
			if names[s.Name] {
				return at + ".toolSpec.name: duplicate tool name " + s.Name
			}
			names[s.Name] = true
			if s.Description != nil && strings.TrimSpace(*s.Description) == "" {
				return at + ".toolSpec.description: Member must have length greater than or equal to 1"
			}
			if !isObject(s.InputSchema.JSON) {
				return at + ".toolSpec.inputSchema.json: the input schema must be a JSON object"
			}
		}
		if tc.ToolChoice != nil {
			if len(tc.ToolChoice) != 1 {
				return "toolConfig.toolChoice: exactly one of auto, any and tool is required"
			}
			for k, v := range tc.ToolChoice {
				switch k {
				case "auto", "any":
				case "tool":
					var named struct {
						Name string `json:"name"`
					}
					if json.Unmarshal(v, &named) != nil || !names[named.Name] {
						return "toolConfig.toolChoice.tool.name: the tool is not in toolConfig.tools"
					}
				default:
					return "toolConfig.toolChoice: unknown member " + k
				}
			}
		}
	} else if toolBlocks {
		return "The toolConfig field must be defined when using toolUse and toolResult content blocks."
	}
	if cachePoints > 4 {
		return "A maximum of 4 cache points is allowed in a request."
	}
	if f := req.AdditionalModelRequestFields; f != nil && !isObject(f) {
		return "additionalModelRequestFields: the value must be a JSON object"
	}
	if ic := req.InferenceConfig; ic != nil {
		if ic.MaxTokens != nil && *ic.MaxTokens < 1 {
			return "inferenceConfig.maxTokens: Member must have value greater than or equal to 1"
		}
		if ic.Temperature != nil && (*ic.Temperature < 0 || *ic.Temperature > 1) {
			return "inferenceConfig.temperature: Member must have value between 0 and 1"
		}
		if ic.TopP != nil && (*ic.TopP < 0 || *ic.TopP > 1) {
			return "inferenceConfig.topP: Member must have value between 0 and 1"
		}
		for i, s := range ic.StopSequences {
			if s == "" {
				return fmt.Sprintf("inferenceConfig.stopSequences.%d: Member must have length greater than or equal to 1", i)
			}
		}
	}
	return ""
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	return json.Valid(t)
}

// checkImage checks an image block: {"format": png|jpeg|gif|webp, "source": {"bytes": <base64>}}.
func checkImage(at string, raw json.RawMessage) string {
	var img struct {
		Format string `json:"format"`
		Source struct {
			Bytes []byte `json:"bytes"` // base64 in JSON
		} `json:"source"`
	}
	if err := json.Unmarshal(raw, &img); err != nil {
		return at + ": " + err.Error()
	}
	switch img.Format {
	case "png", "jpeg", "gif", "webp":
	default:
		return at + ".format: Member must satisfy enum value set: [png, jpeg, gif, webp]"
	}
	if len(img.Source.Bytes) == 0 {
		return at + ".source.bytes: Member must not be null"
	}
	return ""
}

// checkCachePoint checks a cache point: {"type": "default"}, with an optional ttl.
func checkCachePoint(at string, raw json.RawMessage) string {
	var cp struct {
		Type string `json:"type"`
		TTL  string `json:"ttl"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if d.Decode(&cp) != nil || cp.Type != "default" {
		return at + ".cachePoint.type: Member must satisfy enum value set: [default]"
	}
	if cp.TTL != "" && cp.TTL != "5m" && cp.TTL != "1h" {
		return at + ".cachePoint.ttl: Member must satisfy enum value set: [5m, 1h]"
	}
	return ""
}

package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// wireUsage is Anthropic's usage object. Counts it leaves out (or sends as null) stay nil.
type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// merge overlays the counts u reports onto w: message_delta's cumulative counts replace what
// message_start said.
func (w *wireUsage) merge(u *wireUsage) {
	if u == nil {
		return
	}
	if u.InputTokens != nil {
		w.InputTokens = u.InputTokens
	}
	if u.OutputTokens != nil {
		w.OutputTokens = u.OutputTokens
	}
	if u.CacheCreationInputTokens != nil {
		w.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != nil {
		w.CacheReadInputTokens = u.CacheReadInputTokens
	}
}

// openai converts to OpenAI's usage. Anthropic's input_tokens excludes cached input, while
// OpenAI's prompt_tokens includes it with the cached share in cached_tokens; so the prompt is
// input + cache writes + cache reads. Counts Anthropic did not report stay out.
func (w *wireUsage) openai() openai.Usage {
	var u openai.Usage
	if w.InputTokens != nil {
		p := *w.InputTokens
		if w.CacheCreationInputTokens != nil {
			p += *w.CacheCreationInputTokens
		}
		if w.CacheReadInputTokens != nil {
			p += *w.CacheReadInputTokens
		}
		u.PromptTokens = openai.Int(p)
	}
	if w.CacheReadInputTokens != nil {
		u.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: openai.Int(*w.CacheReadInputTokens)}
	}
	if w.OutputTokens != nil {
		u.CompletionTokens = openai.Int(*w.OutputTokens)
	}
	return u
}

type wireBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type wireMessage struct {
	Type       string     `json:"type"`
	Content    blockList  `json:"content"`
	StopReason *string    `json:"stop_reason"`
	Usage      *wireUsage `json:"usage"`
}

// maxBlocks bounds the content blocks of one answer. A block costs some 90 bytes decoded
// against 3 bytes of input ("{},"), so a 32 MB answer padded with empty blocks would hold
// 900 MB; real answers have a few blocks, a few hundred with web search citations.
const maxBlocks = 4096

var errTooManyBlocks = errors.New("more than " + strconv.Itoa(maxBlocks) + " content blocks")

// blockList is a content array decoded one block at a time, to refuse a padded one before it
// takes the memory.
type blockList []wireBlock

func (l *blockList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*l = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errors.New("content is not an array")
	}
	*l = (*l)[:0]
	for dec.More() {
		if len(*l) == maxBlocks {
			return errTooManyBlocks
		}
		var bl wireBlock
		if err := dec.Decode(&bl); err != nil {
			return err
		}
		*l = append(*l, bl)
	}
	return nil
}

// ParseResponse translates a non-streaming Messages response. Text blocks join into the
// content, tool_use blocks become tool calls with their ids unchanged and their input as the
// arguments; thinking and server-tool blocks are not returned. A body that is an error
// object, or not a message, is an unavailable *providers.Error (the caller's provider name is
// filled in by providers.AsError).
func ParseResponse(body []byte) (*openai.Completion, error) {
	var m wireMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Message: "unreadable response: " + err.Error(), Err: err}
	}
	if m.Type == "error" {
		e := eventError(body, "")
		if e.Class == providers.StreamBroken {
			e.Class = providers.Unavailable
		}
		return nil, e
	}
	if m.Type != "message" {
		return nil, &providers.Error{Class: providers.Unavailable, Message: "the response is not a message (type " + quoteOrNone(m.Type) + ")"}
	}
	c := &openai.Completion{FinishReason: FinishReason(deref(m.StopReason))}
	var text strings.Builder
	hasText := false
	for i := range m.Content {
		bl := &m.Content[i]
		switch bl.Type {
		case "text":
			text.WriteString(bl.Text)
			hasText = true
		case "tool_use":
			c.ToolCalls = append(c.ToolCalls, openai.ToolCall{ID: bl.ID, Type: "function",
				Function: openai.FunctionCall{Name: bl.Name, Arguments: arguments(bl.Input)}})
		}
	}
	if hasText || len(c.ToolCalls) == 0 {
		s := text.String()
		c.Content = &s
	}
	if m.Usage != nil {
		c.Usage = m.Usage.openai()
	}
	return c, nil
}

// arguments renders tool_use input as the arguments text, compacted so the JSON is the same
// however the upstream spaced it.
func arguments(input json.RawMessage) string {
	in := bytes.TrimSpace(input)
	if len(in) == 0 || string(in) == "null" {
		return "{}"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, in) != nil {
		return string(in)
	}
	return buf.String()
}

// FinishReason maps a stop_reason to OpenAI's finish_reason. pause_turn (a server-tool loop
// paused) ends the turn like end_turn; reasons added later read as a plain stop.
func FinishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return openai.FinishLength
	case "tool_use":
		return openai.FinishToolCalls
	case "refusal":
		return openai.FinishContentFilter
	}
	return openai.FinishStop
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func quoteOrNone(s string) string {
	if s == "" {
		return "missing"
	}
	return `"` + s + `"`
}

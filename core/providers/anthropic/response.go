package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/fngate/fngate/core/llm"
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

// llm converts to the gateway's usage. Anthropic's input_tokens excludes cached input, while
// the gateway's input count (OpenAI's prompt_tokens) includes it, with the cached shares
// apart; so the input is input + cache writes + cache reads. Counts Anthropic did not report
// stay out.
func (w *wireUsage) llm() llm.Usage {
	var u llm.Usage
	if w.InputTokens != nil {
		p := *w.InputTokens
		if w.CacheCreationInputTokens != nil {
			p += *w.CacheCreationInputTokens
		}
		if w.CacheReadInputTokens != nil {
			p += *w.CacheReadInputTokens
		}
		u.InputTokens = llm.Int(p)
	}
	u.CacheReadTokens = w.CacheReadInputTokens
	u.CacheWriteTokens = w.CacheCreationInputTokens
	u.OutputTokens = w.OutputTokens
	return u
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

type wireMessage struct {
	Type         string     `json:"type"`
	Model        string     `json:"model"`
	Content      blockList  `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        *wireUsage `json:"usage"`
}

// maxBlocks bounds the content blocks of one answer. A block costs some 90 bytes decoded
// against 3 bytes of input ("{},"), so a 32 MB answer padded with empty blocks would hold
// 900 MB; real answers have a few blocks, a few hundred with web search citations.
const maxBlocks = 4096

var errTooManyBlocks = errors.New("more than " + strconv.Itoa(maxBlocks) + " content blocks")

// blockList is a content array decoded one block at a time, to refuse a padded one before it
// takes the memory. Each block is kept raw: the ones the gateway does not model go on as
// they came.
type blockList []json.RawMessage

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
		var bl json.RawMessage
		if err := dec.Decode(&bl); err != nil {
			return err
		}
		*l = append(*l, bl)
	}
	return nil
}

// ParseResponse translates a non-streaming Messages response. Text, tool_use, thinking and
// redacted thinking blocks become parts (tool_use ids unchanged, input compacted as the
// arguments); other blocks (server tools' calls and results) are kept raw. The body itself is
// kept too, for a Messages door client, which gets it as Anthropic sent it. A body that is an
// error object, or not a message, is an unavailable *providers.Error (the caller's provider
// name is filled in by providers.AsError).
func ParseResponse(body []byte) (*llm.Answer, error) {
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
	a := &llm.Answer{Stop: StopReason(deref(m.StopReason)), StopSequence: deref(m.StopSequence), Model: m.Model, Raw: body, RawWire: llm.WireAnthropic}
	hasText, tools := false, 0
	for _, raw := range m.Content {
		var bl wireBlock
		if err := json.Unmarshal(raw, &bl); err != nil {
			return nil, &providers.Error{Class: providers.Unavailable, Message: "unreadable content block: " + err.Error(), Err: err}
		}
		switch bl.Type {
		case "text":
			a.Parts = append(a.Parts, llm.Part{Kind: llm.PartText, Text: bl.Text})
			hasText = true
		case "tool_use":
			a.Parts = append(a.Parts, llm.Part{Kind: llm.PartToolUse, ID: bl.ID, Name: bl.Name, Input: arguments(bl.Input)})
			tools++
		case "thinking":
			a.Parts = append(a.Parts, llm.Part{Kind: llm.PartThinking, Text: bl.Thinking, Signature: bl.Signature})
		case "redacted_thinking":
			a.Parts = append(a.Parts, llm.Part{Kind: llm.PartRedactedThinking, Data: bl.Data})
		default:
			a.Parts = append(a.Parts, llm.Part{Kind: llm.PartRaw, Name: bl.Type, Raw: raw})
		}
	}
	if !hasText && tools == 0 {
		// An answer with nothing to say still says it: OpenAI's content "" rather than null.
		a.Parts = append(a.Parts, llm.Part{Kind: llm.PartText})
	}
	if m.Usage != nil {
		a.Usage = m.Usage.llm()
	}
	return a, nil
}

// ParseResponseFor is ParseResponse for req on a route whose model is m: a JSON answer
// carried by the answer tool comes back as the content (see Structured).
func ParseResponseFor(body []byte, req *llm.Request, m Model) (*llm.Answer, error) {
	a, err := ParseResponse(body)
	if err != nil {
		return nil, err
	}
	return providers.AnswerAsContent(a, respondTool(req, m)), nil
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

// StopReason maps a stop_reason to the gateway's. Reasons added later read as a plain end.
func StopReason(stop string) llm.StopReason {
	switch stop {
	case "max_tokens":
		return llm.StopMaxTokens
	case "model_context_window_exceeded":
		return llm.StopContextWindow
	case "tool_use":
		return llm.StopToolUse
	case "stop_sequence":
		return llm.StopSequence
	case "refusal":
		return llm.StopContentFilter
	case "pause_turn":
		return llm.StopPauseTurn
	}
	return llm.StopEnd
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

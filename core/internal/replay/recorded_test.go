package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// What a recording says, read with encoding/json straight from the provider's documented
// fields, sharing no code with the gateway's translators: the expected text of each replay
// is derived here from the recording itself.

type sseEvent struct {
	event string
	data  []byte
}

// sseEvents splits a recorded event stream (WHATWG rules, as far as recordings need them:
// comments, event and data fields, multi-line data).
func sseEvents(b []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	var data [][]byte
	flush := func() {
		if data != nil {
			cur.data = bytes.Join(data, []byte("\n"))
			out = append(out, cur)
		}
		cur, data = sseEvent{}, nil
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			flush()
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			cur.event = string(value)
		case "data":
			data = append(data, value)
		}
	}
	flush()
	return out
}

// recordedText is the answer text a recording carries: every text fragment in order, never
// reasoning, thinking or thought text (the gateway does not return those).
func recordedText(t *testing.T, rec *recording) string {
	t.Helper()
	var b strings.Builder
	each := func(raws [][]byte, read func([]byte)) {
		for _, raw := range raws {
			read(raw)
		}
	}
	switch rec.Format {
	case "http-error":
	case "openai-json":
		var v struct {
			Choices []struct {
				Message struct{ Content string }
			}
		}
		decode(t, rec, rec.body, &v)
		b.WriteString(v.Choices[0].Message.Content)
	case "openai-sse", "openai-chunks":
		each(openAIEvents(rec), func(raw []byte) {
			var v struct {
				Choices []struct {
					Delta struct{ Content string }
				}
			}
			decode(t, rec, raw, &v)
			for _, c := range v.Choices {
				b.WriteString(c.Delta.Content)
			}
		})
	case "anthropic-json":
		var v struct {
			Content []struct{ Type, Text string }
		}
		decode(t, rec, rec.body, &v)
		for _, c := range v.Content {
			if c.Type == "text" {
				b.WriteString(c.Text)
			}
		}
	case "anthropic-sse", "anthropic-chunks":
		each(anthropicEvents(rec), func(raw []byte) {
			var v struct {
				Type         string
				ContentBlock struct{ Type, Text string } `json:"content_block"`
				Delta        struct{ Type, Text string }
			}
			decode(t, rec, raw, &v)
			switch {
			case v.Type == "content_block_start" && v.ContentBlock.Type == "text":
				b.WriteString(v.ContentBlock.Text)
			case v.Type == "content_block_delta" && v.Delta.Type == "text_delta":
				b.WriteString(v.Delta.Text)
			}
		})
	case "bedrock-json":
		var v struct {
			Output struct {
				Message struct {
					Content []struct{ Text string }
				}
			}
		}
		decode(t, rec, rec.body, &v)
		for _, c := range v.Output.Message.Content {
			b.WriteString(c.Text)
		}
	case "bedrock-eventstream", "bedrock-chunks":
		for _, ev := range bedrockEvents(t, rec) {
			if ev.typ != "contentBlockDelta" {
				continue
			}
			var v struct {
				Delta struct{ Text string }
			}
			decode(t, rec, ev.payload, &v)
			b.WriteString(v.Delta.Text)
		}
	case "gemini-json", "gemini-sse", "gemini-chunks":
		each(geminiEvents(t, rec), func(raw []byte) {
			var v struct {
				Candidates []struct {
					Content struct {
						Parts []struct {
							Text    *string
							Thought bool
						}
					}
				}
			}
			decode(t, rec, raw, &v)
			for _, c := range v.Candidates[:min(1, len(v.Candidates))] {
				for _, p := range c.Content.Parts {
					if p.Text != nil && !p.Thought {
						b.WriteString(*p.Text)
					}
				}
			}
		})
	default:
		t.Fatalf("%s: no reader for format %s", rec.ID, rec.Format)
	}
	return b.String()
}

// openAIEvents returns the JSON chunks of an OpenAI-wire stream, without [DONE].
func openAIEvents(rec *recording) [][]byte {
	if strings.HasSuffix(rec.Format, "-chunks") {
		return rec.chunkLines()
	}
	var out [][]byte
	for _, ev := range sseEvents(rec.body) {
		if string(ev.data) != "[DONE]" {
			out = append(out, ev.data)
		}
	}
	return out
}

func anthropicEvents(rec *recording) [][]byte {
	if strings.HasSuffix(rec.Format, "-chunks") {
		return rec.chunkLines()
	}
	var out [][]byte
	for _, ev := range sseEvents(rec.body) {
		out = append(out, ev.data)
	}
	return out
}

type bedrockEvent struct {
	typ     string
	payload []byte
}

// bedrockEvents decodes the frames of an .eventstream capture, or the lines of a .chunks.txt
// one.
func bedrockEvents(t *testing.T, rec *recording) []bedrockEvent {
	var out []bedrockEvent
	if strings.HasSuffix(rec.Format, "-chunks") {
		for _, l := range rec.chunkLines() {
			var ev map[string]json.RawMessage
			decode(t, rec, l, &ev)
			for typ, p := range ev {
				out = append(out, bedrockEvent{typ, p})
			}
		}
		return out
	}
	dec := eventstream.NewDecoder()
	r := bytes.NewReader(rec.body)
	for {
		msg, err := dec.Decode(r, nil)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", rec.ID, err)
		}
		typ := msg.Headers.Get(":event-type")
		if typ == nil {
			typ = msg.Headers.Get(":exception-type")
		}
		out = append(out, bedrockEvent{typ.String(), msg.Payload})
	}
}

func decode(t *testing.T, rec *recording, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v in %s", rec.ID, err, raw)
	}
}

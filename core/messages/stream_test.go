package messages

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// events splits an SSE body into "name data" lines, checking that every data is JSON whose
// type names the event.
func events(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(ev, "\ndata: ")
		name = strings.TrimPrefix(name, "event: ")
		if !ok {
			t.Fatalf("malformed event %q", ev)
		}
		var v struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(data), &v); err != nil || v.Type != name {
			t.Fatalf("event %s: data %s (type %q, %v)", name, data, v.Type, err)
		}
		out = append(out, name+" "+data)
	}
	return out
}

func TestStreamEncoderBlocks(t *testing.T) {
	cases := []struct {
		name   string
		deltas []llm.Delta
		stop   llm.StopReason
		want   []string
	}{
		{
			name:   "text",
			deltas: []llm.Delta{{Text: "Hel"}, {Text: "lo"}},
			stop:   llm.StopEnd,
			want: []string{
				`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`,
				`content_block_stop {"type":"content_block_stop","index":0}`,
			},
		},
		{
			name: "thinking, text, two interleaved tool calls",
			deltas: []llm.Delta{
				{Thinking: "hmm"}, {Signature: "sig"}, {Text: "ok"},
				{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "c0", Name: "f", Arguments: `{"a":`}}},
				{ToolCalls: []llm.ToolCallDelta{{Index: 1, ID: "c1", Name: "g"}}},
				{ToolCalls: []llm.ToolCallDelta{{Index: 0, Arguments: `1}`}, {Index: 1, Arguments: `{}`}}},
			},
			stop: llm.StopToolUse,
			want: []string{
				`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
				`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
				`content_block_stop {"type":"content_block_stop","index":0}`,
				`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
				`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}}`,
				`content_block_stop {"type":"content_block_stop","index":1}`,
				`content_block_start {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"c0","name":"f","input":{}}}`,
				`content_block_delta {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
				`content_block_start {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"c1","name":"g","input":{}}}`,
				`content_block_delta {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}`,
				`content_block_delta {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
				`content_block_stop {"type":"content_block_stop","index":2}`,
				`content_block_stop {"type":"content_block_stop","index":3}`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := NewStreamEncoder("msg_1", "gw/model", 99)
			e.Hold(&llm.Delta{Usage: &llm.Usage{InputTokens: llm.Int(12), CacheReadTokens: llm.Int(2)}})
			b := e.Start(nil, nil)
			for i := range tc.deltas {
				b = e.Delta(b, &tc.deltas[i])
			}
			b = e.End(b, tc.stop, "", &llm.Usage{InputTokens: llm.Int(12), CacheReadTokens: llm.Int(2), OutputTokens: llm.Int(7)})
			got := events(t, string(b))
			wantStart := `message_start {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"gw/model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_read_input_tokens":2,"output_tokens":1}}}`
			if got[0] != wantStart || got[1] != `ping {"type":"ping"}` {
				t.Errorf("start:\n%s\n%s", got[0], got[1])
			}
			wantEnd := []string{
				`message_delta {"type":"message_delta","delta":{"stop_reason":"` + StopReason(tc.stop) + `","stop_sequence":null},"usage":{"input_tokens":10,"cache_read_input_tokens":2,"output_tokens":7}}`,
				`message_stop {"type":"message_stop"}`,
			}
			body := got[2 : len(got)-2]
			if strings.Join(body, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(body, "\n"), strings.Join(tc.want, "\n"))
			}
			if strings.Join(got[len(got)-2:], "\n") != strings.Join(wantEnd, "\n") {
				t.Errorf("end:\n%s", strings.Join(got[len(got)-2:], "\n"))
			}
		})
	}
}

// TestMessageStartAlwaysCarriesCounts: message_start has integer input_tokens and
// output_tokens on every translated stream: the backend's input count when it reported one
// before or with its first content, else the estimate; message_delta has what the backend
// reported at the end, which the SDKs let overwrite message_start's.
func TestMessageStartAlwaysCarriesCounts(t *testing.T) {
	const estimate = 37
	cases := []struct {
		name      string
		held      *llm.Usage // a usage-only delta before the first content
		first     *llm.Usage // the first content's usage
		end       *llm.Usage // the usage the stream ended with
		wantStart string
		wantDelta string
	}{
		{
			name:      "the prompt reported only at the end (OpenAI wire, Converse): the estimate",
			end:       &llm.Usage{InputTokens: llm.Int(120), OutputTokens: llm.Int(9)},
			wantStart: `{"input_tokens":37,"output_tokens":1}`,
			wantDelta: `{"input_tokens":120,"output_tokens":9}`,
		},
		{
			name:      "the prompt reported with the first content (Gemini, the mock)",
			first:     &llm.Usage{InputTokens: llm.Int(41), CacheReadTokens: llm.Int(40), OutputTokens: llm.Int(3)},
			end:       &llm.Usage{InputTokens: llm.Int(41), CacheReadTokens: llm.Int(40), OutputTokens: llm.Int(12)},
			wantStart: `{"input_tokens":1,"cache_read_input_tokens":40,"output_tokens":1}`,
			wantDelta: `{"input_tokens":1,"cache_read_input_tokens":40,"output_tokens":12}`,
		},
		{
			name:      "the prompt reported before any content",
			held:      &llm.Usage{InputTokens: llm.Int(8)},
			end:       &llm.Usage{InputTokens: llm.Int(8), OutputTokens: llm.Int(2)},
			wantStart: `{"input_tokens":8,"output_tokens":1}`,
			wantDelta: `{"input_tokens":8,"output_tokens":2}`,
		},
		{
			name:      "no usage reported at all: the estimate stands",
			end:       &llm.Usage{},
			wantStart: `{"input_tokens":37,"output_tokens":1}`,
			wantDelta: `{}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := NewStreamEncoder("msg_1", "gw/model", estimate)
			if tc.held != nil {
				e.Hold(&llm.Delta{Usage: tc.held})
			}
			first := &llm.Delta{Text: "hi", Usage: tc.first}
			b := e.Start(nil, first)
			b = e.Delta(b, first)
			b = e.End(b, llm.StopEnd, "", tc.end)
			var start, delta struct {
				Message struct{ Usage json.RawMessage }
				Usage   json.RawMessage
			}
			for _, ev := range events(t, string(b)) {
				name, data, _ := strings.Cut(ev, " ")
				switch name {
				case "message_start":
					_ = json.Unmarshal([]byte(data), &start)
				case "message_delta":
					_ = json.Unmarshal([]byte(data), &delta)
				}
			}
			if got := string(start.Message.Usage); got != tc.wantStart {
				t.Errorf("message_start usage %s, want %s", got, tc.wantStart)
			}
			if got := string(delta.Usage); got != tc.wantDelta {
				t.Errorf("message_delta usage %s, want %s", got, tc.wantDelta)
			}
		})
	}
}

// TestMessageStartAllocatesNothingForItsCounts: the counts message_start carries cost no
// allocation, estimate or not.
func TestMessageStartAllocatesNothingForItsCounts(t *testing.T) {
	first := &llm.Delta{Text: "hi"}
	b := make([]byte, 0, 4096)
	for _, u := range []*llm.Usage{nil, {InputTokens: llm.Int(41), CacheReadTokens: llm.Int(40)}} {
		e := NewStreamEncoder("msg_1", "gw/model", 37)
		e.Hold(&llm.Delta{Usage: u})
		if n := testing.AllocsPerRun(100, func() { b = e.Start(b[:0], first) }); n != 0 {
			t.Errorf("Start allocates %.0f times", n)
		}
	}
}

func TestStreamEncoderPassesAnthropicEventsThrough(t *testing.T) {
	e := NewStreamEncoder("msg_gw", "gw/claude", 99)
	raw := func(name, data string) *llm.Delta {
		return &llm.Delta{Raw: &llm.RawEvent{Wire: llm.WireAnthropic, Name: name, Data: []byte(data)}}
	}
	e.Hold(raw("message_start", `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`))
	e.Hold(raw("ping", `{"type":"ping"}`))
	b := e.Start(nil, nil)
	d := raw("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`)
	d.Opaque = true
	b = e.Delta(b, d)
	b = e.Delta(b, &llm.Delta{Text: "ignored: the raw event carries it"})
	b = e.End(b, llm.StopEnd, "", nil)
	got := events(t, string(b))
	want := []string{
		`message_start {"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"gw/claude","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`ping {"type":"ping"}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAppendMessage(t *testing.T) {
	a := &llm.Answer{
		Parts: []llm.Part{{Kind: llm.PartThinking, Text: "t", Signature: "s"}, {Kind: llm.PartText, Text: "hi"},
			{Kind: llm.PartToolUse, ID: "toolu_1", Name: "f", Input: `{"a":1}`}, {Kind: llm.PartToolUse, ID: "toolu_2", Name: "g"}},
		Stop:  llm.StopToolUse,
		Usage: llm.Usage{InputTokens: llm.Int(30), CacheWriteTokens: llm.Int(10), OutputTokens: llm.Int(4)},
	}
	got := string(AppendMessage(nil, "msg_1", "gw/m", a))
	want := `{"id":"msg_1","type":"message","role":"assistant","model":"gw/m","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"hi"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}},{"type":"tool_use","id":"toolu_2","name":"g","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":10,"output_tokens":4}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestErrorStatus(t *testing.T) {
	cases := []struct {
		status     int
		wantStatus int
		wantType   string
	}{
		{400, 400, "invalid_request_error"}, {401, 401, "authentication_error"}, {403, 403, "permission_error"},
		{404, 404, "not_found_error"}, {413, 413, "request_too_large"}, {429, 429, "rate_limit_error"},
		{500, 500, "api_error"}, {502, 500, "api_error"}, {503, 529, "overloaded_error"}, {504, 504, "timeout_error"},
	}
	for _, tc := range cases {
		s, typ := ErrorStatus(&llm.Error{Status: tc.status})
		if s != tc.wantStatus || typ != tc.wantType {
			t.Errorf("%d: got %d %s, want %d %s", tc.status, s, typ, tc.wantStatus, tc.wantType)
		}
	}
}

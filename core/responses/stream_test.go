package responses

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/internal/golden"
)

// ids makes the random ids stable for the golden files.
var ids = regexp.MustCompile(`"(resp|msg|fc|rs)_[A-Za-z0-9]{48,52}"`)

func stable(b []byte) []byte { return ids.ReplaceAll(b, []byte(`"${1}_ID"`)) }

// TestStreamGolden encodes delta sequences of translated backends and compares the events
// with golden files; every stream's final response must also equal the whole answer the
// same parts make.
func TestStreamGolden(t *testing.T) {
	usage := &llm.Usage{InputTokens: llm.Int(10), OutputTokens: llm.Int(5), CacheReadTokens: llm.Int(4), TotalTokens: llm.Int(15)}
	for _, tc := range []struct {
		name    string
		include bool
		body    string // the request, when the case needs its tools
		deltas  []llm.Delta
		answer  llm.Answer // the same output, whole
	}{
		{name: "text", deltas: []llm.Delta{{Text: "Hello"}, {Text: ", world"}, {Stop: llm.StopEnd}},
			answer: llm.Answer{Parts: []llm.Part{{Kind: llm.PartText, Text: "Hello, world"}}, Stop: llm.StopEnd}},
		{name: "thinking_then_tools", include: true, deltas: []llm.Delta{
			{Thinking: "Two cities"}, {Thinking: ", two calls."}, {Signature: "c2ln"},
			{Text: "Checking."},
			{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "call_a", Name: "weather"}}},
			{ToolCalls: []llm.ToolCallDelta{{Index: 1, ID: "call_b", Name: "weather"}}},
			{ToolCalls: []llm.ToolCallDelta{{Index: 0, Arguments: `{"city":`}, {Index: 1, Arguments: `{"city":"Rome"}`}}},
			{ToolCalls: []llm.ToolCallDelta{{Index: 0, Arguments: `"Paris"}`}}},
			{Stop: llm.StopToolUse}},
			answer: llm.Answer{Parts: []llm.Part{{Kind: llm.PartThinking, Text: "Two cities, two calls.", Signature: "c2ln"},
				{Kind: llm.PartText, Text: "Checking."},
				{Kind: llm.PartToolUse, ID: "call_a", Name: "weather", Input: `{"city":"Paris"}`},
				{Kind: llm.PartToolUse, ID: "call_b", Name: "weather", Input: `{"city":"Rome"}`}}, Stop: llm.StopToolUse}},
		{name: "redacted_and_refusal", include: true, deltas: []llm.Delta{{RedactedThinking: "ZW5j"}, {Refusal: "I can't"}, {Refusal: " help."}, {Stop: llm.StopEnd}},
			answer: llm.Answer{Parts: []llm.Part{{Kind: llm.PartRedactedThinking, Data: "ZW5j"}}, Refusal: ptr("I can't help."), Stop: llm.StopEnd}},
		// A call of a namespace's function, offered flattened, comes back as {namespace, name};
		// a function of the same name outside any namespace keeps its name.
		{name: "namespaced_call", body: `{"model":"gw/model","input":"hi","tools":[{"type":"function","name":"echo"},
			{"type":"namespace","name":"mcp__fngate","tools":[{"type":"function","name":"gh__echo"}]}]}`, deltas: []llm.Delta{
			{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "call_a", Name: "mcp__fngate__gh__echo"}}},
			{ToolCalls: []llm.ToolCallDelta{{Index: 1, ID: "call_b", Name: "echo", Arguments: `{}`}}},
			{ToolCalls: []llm.ToolCallDelta{{Index: 0, Arguments: `{"text":"hi"}`}}},
			{Stop: llm.StopToolUse}},
			answer: llm.Answer{Parts: []llm.Part{
				{Kind: llm.PartToolUse, ID: "call_a", Name: "mcp__fngate__gh__echo", Input: `{"text":"hi"}`},
				{Kind: llm.PartToolUse, ID: "call_b", Name: "echo", Input: `{}`}}, Stop: llm.StopToolUse}},
		{name: "max_tokens", deltas: []llm.Delta{{Text: "Lorem ipsum"}, {Stop: llm.StopMaxTokens}},
			answer: llm.Answer{Parts: []llm.Part{{Kind: llm.PartText, Text: "Lorem ipsum"}}, Stop: llm.StopMaxTokens}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &Request{IncludeEncrypted: tc.include, echo: map[string][]byte{}}
			if tc.body != "" {
				var e *llm.Error
				if req, e = Decode([]byte(tc.body), llm.Limits{}); e != nil {
					t.Fatal(e)
				}
			}
			o := Object{ID: NewID("resp"), CreatedAt: 1700000000, Model: "gw/model", Request: req}
			e := NewStreamEncoder(o)
			b := e.Start(nil)
			for i := range tc.deltas {
				b = e.Delta(b, &tc.deltas[i])
			}
			b = e.End(b, usage, 1700000001)
			golden.Check(t, filepath.Join("testdata", "stream", tc.name+".golden.txt"), stable(b))

			for _, ev := range strings.Split(strings.TrimSpace(string(b)), "\n\n") {
				_, data, _ := strings.Cut(ev, "\ndata: ")
				if !json.Valid([]byte(data)) {
					t.Fatalf("invalid event data %s", data)
				}
			}
			tc.answer.Usage = *usage
			o.CompletedAt = 1700000001
			whole := AppendResponse(nil, &o, &tc.answer)
			if got, want := stable(e.Final()), stable(whole); !bytes.Equal(got, want) {
				t.Errorf("the stream's final response\n%s\ndiffers from the whole answer's\n%s", got, want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// A native upstream's events pass through with the gateway's sequence numbers and, in the
// response they carry, its id, model and store.
func TestRawEventsArePatched(t *testing.T) {
	o := Object{ID: "resp_gw", Model: "gw/model", Store: true, Request: &Request{echo: map[string][]byte{"previous_response_id": []byte(`"resp_prev"`)}}}
	e := NewStreamEncoder(o)
	e.Hold(&llm.Delta{Raw: &llm.RawEvent{Wire: llm.WireResponses, Name: "response.created",
		Data: []byte(`{"type":"response.created","sequence_number":7,"response":{"id":"resp_up","model":"gpt-up","store":false,"previous_response_id":null,"output":[]}}`)}})
	b := e.Start(nil)
	b = e.Delta(b, &llm.Delta{Text: "hi", Raw: &llm.RawEvent{Wire: llm.WireResponses, Name: "response.output_text.delta",
		Data: []byte(`{"type":"response.output_text.delta","sequence_number":8,"item_id":"msg_up","delta":"hi"}`)}})
	b = e.Delta(b, &llm.Delta{Stop: llm.StopEnd, Raw: &llm.RawEvent{Wire: llm.WireResponses, Name: "response.completed",
		Data: []byte(`{"type":"response.completed","sequence_number":9,"response":{"id":"resp_up","model":"gpt-up","store":false,"status":"completed"}}`)}})
	b = e.End(b, nil, 0)
	want := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_gw\",\"model\":\"gw/model\",\"store\":true,\"previous_response_id\":\"resp_prev\",\"output\":[]}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_up\",\"delta\":\"hi\"}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_gw\",\"model\":\"gw/model\",\"store\":true,\"status\":\"completed\"}}\n\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if string(e.Final()) != `{"id":"resp_gw","model":"gw/model","store":true,"status":"completed"}` {
		t.Errorf("final %s", e.Final())
	}
	b = e.Fail(nil, &llm.Error{Code: "upstream_stream_broken", Message: "cut"})
	if !strings.HasPrefix(string(b), "event: error\ndata: {\"type\":\"error\",\"sequence_number\":3,") {
		t.Errorf("the gateway's failure event does not follow on: %s", b)
	}
}

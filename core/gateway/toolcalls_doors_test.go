package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fngate/fngate/internal/gatewaytest"
)

// quirkGateway serves one model m over an OpenAI-compatible upstream that answers every
// request with body.
func quirkGateway(t *testing.T, body string) *testGateway {
	t.Helper()
	up := rawUpstream(t, body)
	return newGateway(t, fmt.Sprintf("connections:\n  up: {kind: openai-compatible, base_url: %q}\nmodels:\n  m: {routes: [{connection: up, model: up}]}\n", up.URL))
}

// sseEvent is one event of an SSE body: its name and its data.
type sseEvent struct{ name, data string }

func sseEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, ev := range strings.Split(strings.TrimRight(string(body), "\n"), "\n\n") {
		var e sseEvent
		for _, line := range strings.Split(ev, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				e.name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				e.data = v
			} else {
				t.Fatalf("unexpected SSE line %q", line)
			}
		}
		out = append(out, e)
	}
	return out
}

// TestToolCallsReachMessagesClientsWellFormed replays the upstream tool-call quirks through
// the Messages door (an OpenAI-compatible route, translated) and checks what anthropic-sdk-go
// assembles: every tool_use block has a unique id, its name and its input whole; streamed,
// the blocks are numbered densely from 0 and each tool_use block starts once with its id and
// name; and the conversation sent back with tool_result blocks is accepted.
func TestToolCallsReachMessagesClientsWellFormed(t *testing.T) {
	for _, tc := range toolCallQuirks {
		t.Run(tc.name, func(t *testing.T) {
			g := quirkGateway(t, tc.body)
			client := g.Anthropic()
			params := anthropic.MessageNewParams{Model: "m", MaxTokens: 100, Messages: []anthropic.MessageParam{userText("go")}}
			var msg anthropic.Message
			if tc.stream {
				checkMessagesBlocks(t, g.Do(t, "POST", "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"go"}]}`,
					"Anthropic-Version", "2023-06-01").Body)
				s := client.Messages.NewStreaming(context.Background(), params)
				for s.Next() {
					if err := msg.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				m, err := client.Messages.New(context.Background(), params)
				if err != nil {
					t.Fatal(err)
				}
				msg = *m
			}
			var got []wantCall
			var results []anthropic.ContentBlockParamUnion
			for _, b := range msg.Content {
				if b.Type == "tool_use" {
					got = append(got, wantCall{b.ID, b.Name, string(b.Input)})
					results = append(results, anthropic.NewToolResultBlock(b.ID, "done", false))
				}
			}
			if msg.StopReason != anthropic.StopReasonToolUse {
				t.Errorf("stop_reason %q", msg.StopReason)
			}
			checkCalls(t, got, tc.want)
			params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
			var err error
			if tc.stream {
				s := client.Messages.NewStreaming(context.Background(), params)
				for s.Next() {
				}
				err = s.Err()
			} else {
				_, err = client.Messages.New(context.Background(), params)
			}
			if err != nil {
				t.Errorf("the gateway refused the conversation with its own answer: %v", err)
			}
		})
	}
}

// checkMessagesBlocks checks a raw Messages stream: content blocks start at index 0, 1, ...
// in order, each once, every tool_use block with its id and name, and every delta belongs
// to a started block that has not stopped.
func checkMessagesBlocks(t *testing.T, body []byte) {
	t.Helper()
	started, open := 0, map[int]bool{}
	for _, ev := range sseEvents(t, body) {
		var e struct {
			Index        int `json:"index"`
			ContentBlock struct {
				Type, ID, Name string
			} `json:"content_block"`
		}
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatalf("%v: %s", err, ev.data)
		}
		switch ev.name {
		case "content_block_start":
			if e.Index != started {
				t.Errorf("block %d started after %d blocks: not dense\n%s", e.Index, started, body)
			}
			started++
			open[e.Index] = true
			if e.ContentBlock.Type == "tool_use" && (e.ContentBlock.ID == "" || e.ContentBlock.Name == "") {
				t.Errorf("tool_use block %d starts without its id or name: %s", e.Index, ev.data)
			}
		case "content_block_delta":
			if !open[e.Index] {
				t.Errorf("a delta of block %d, which is not open: %s", e.Index, ev.data)
			}
		case "content_block_stop":
			if !open[e.Index] {
				t.Errorf("block %d stopped twice or before it started", e.Index)
			}
			delete(open, e.Index)
		}
	}
	if len(open) != 0 {
		t.Errorf("blocks %v never stopped", open)
	}
}

// TestToolCallsReachResponsesClientsWellFormed replays the upstream tool-call quirks through
// the Responses door (an OpenAI-compatible route, translated) and checks what openai-go
// assembles: every function_call item has a unique call_id, its name and its arguments
// whole; streamed, items are numbered densely from 0 and each function_call item is added
// once with its call_id and name; and the conversation sent back with function_call_output
// items is accepted.
func TestToolCallsReachResponsesClientsWellFormed(t *testing.T) {
	for _, tc := range toolCallQuirks {
		t.Run(tc.name, func(t *testing.T) {
			g := quirkGateway(t, tc.body)
			client := g.OpenAI()
			params := responses.ResponseNewParams{Model: "m", Input: text("go")}
			var resp responses.Response
			if tc.stream {
				checkResponsesItems(t, g.Do(t, "POST", "/v1/responses", `{"model":"m","stream":true,"input":"go"}`).Body)
				resp = streamedResponse(t, client, params)
			} else {
				r, err := client.Responses.New(context.Background(), params)
				if err != nil {
					t.Fatal(err)
				}
				resp = *r
			}
			var got []wantCall
			in := []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage("go", responses.EasyInputMessageRoleUser)}
			var outputs []responses.ResponseInputItemUnionParam
			for _, item := range resp.Output {
				if item.Type == "function_call" {
					c := item.AsFunctionCall()
					got = append(got, wantCall{c.CallID, c.Name, c.Arguments})
					in = append(in, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.CallID, c.Name))
					outputs = append(outputs, functionOutput(c.CallID, "done"))
				}
			}
			checkCalls(t, got, tc.want)
			params.Input = items(append(in, outputs...)...)
			var err error
			if tc.stream {
				s := client.Responses.NewStreaming(context.Background(), params)
				for s.Next() {
				}
				err = s.Err()
			} else {
				_, err = client.Responses.New(context.Background(), params)
			}
			if err != nil {
				t.Errorf("the gateway refused the conversation with its own answer: %v", err)
			}
		})
	}
}

func streamedResponse(t *testing.T, c oai.Client, params responses.ResponseNewParams) responses.Response {
	t.Helper()
	s := gatewaytest.StreamResponse(t, c, params)
	if last := s.Types[len(s.Types)-1]; last != "response.completed" {
		t.Fatalf("the stream ended with %s", last)
	}
	return s.Final
}

// checkResponsesItems checks a raw Responses stream: output items are added at
// output_index 0, 1, ... in order, each once, every function_call item with its call_id and
// name, and the arguments deltas and the item's done event carry the same item as added.
func checkResponsesItems(t *testing.T, body []byte) {
	t.Helper()
	type item struct {
		ID, Type, CallID, Name string
	}
	added := map[int]item{}
	for _, ev := range sseEvents(t, body) {
		var e struct {
			OutputIndex int `json:"output_index"`
			Item        struct {
				ID     string `json:"id"`
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Name   string `json:"name"`
			} `json:"item"`
		}
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			t.Fatalf("%v: %s", err, ev.data)
		}
		it := item{e.Item.ID, e.Item.Type, e.Item.CallID, e.Item.Name}
		switch ev.name {
		case "response.output_item.added":
			if e.OutputIndex != len(added) {
				t.Errorf("item %d added after %d items: not dense\n%s", e.OutputIndex, len(added), body)
			}
			added[e.OutputIndex] = it
			if it.Type == "function_call" && (it.CallID == "" || it.Name == "") {
				t.Errorf("function_call item %d is added without its call_id or name: %s", e.OutputIndex, ev.data)
			}
		case "response.function_call_arguments.delta", "response.function_call_arguments.done":
			if a, ok := added[e.OutputIndex]; !ok || a.Type != "function_call" {
				t.Errorf("%s for item %d, which is no function_call added: %s", ev.name, e.OutputIndex, ev.data)
			}
		case "response.output_item.done":
			if a := added[e.OutputIndex]; a != it {
				t.Errorf("item %d done as %+v, added as %+v", e.OutputIndex, it, a)
			}
		}
	}
}

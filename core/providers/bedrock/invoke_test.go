package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/bedrockfake"
)

func TestAPIOf(t *testing.T) {
	for _, tc := range []struct {
		model, api string
		want       api
		ok         bool
	}{
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", "", viaInvoke, true},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "", viaInvoke, true},
		{"global.anthropic.claude-opus-4-1-20250805-v1:0", "", viaInvoke, true},
		{"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0", "", viaInvoke, true},
		{"arn:aws:bedrock:eu-west-1:123456789012:inference-profile/eu.Anthropic.Claude-3-haiku-20240307-v1:0", "", viaInvoke, true},
		{"amazon.nova-pro-v1:0", "", viaConverse, true},
		{"meta.llama3-1-70b-instruct-v1:0", "", viaConverse, true},
		// An application inference profile does not say which model it serves.
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", "", viaConverse, true},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", "invoke", viaInvoke, true},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "Converse", viaConverse, true},
		{"anthropic.claude-v2", "rawPredict", viaConverse, false},
	} {
		got, ok := apiOf(providers.Target{Model: tc.model, API: tc.api})
		if got != tc.want || ok != tc.ok {
			t.Errorf("apiOf(%s, api %q) = %v, %v; want %v, %v", tc.model, tc.api, got, ok, tc.want, tc.ok)
		}
	}
	p, f := fakeProvider(t)
	oe := p.Check(hello(), providers.Target{Model: "anthropic.claude-v2", API: "rawPredict"})
	if oe == nil || oe.Status != 500 || oe.Code != "route_misconfigured" || !strings.Contains(oe.Message, `"rawPredict"`) {
		t.Errorf("an unknown api: %v", oe)
	}
	if len(f.Requests()) != 0 {
		t.Error("Check called Bedrock")
	}
}

// toolAnswer is text, a thinking block and two tool calls, the second without input.
var toolAnswer = bedrockfake.Answer{
	Blocks: []bedrockfake.Block{
		{Thinking: "Two lookups."},
		{Text: "Checking both."},
		{ToolUse: &bedrockfake.ToolUse{ID: "toolu_A", Name: "get_weather", Input: `{"city":"Paris","say":"\"hi\" caf\u00e9"}`}},
		{ToolUse: &bedrockfake.ToolUse{ID: "toolu_B", Name: "get_time", Input: `{}`}},
	},
	Usage: &bedrockfake.Usage{InputTokens: ptrInt(7), OutputTokens: ptrInt(30), CacheReadInputTokens: ptrInt(100), CacheWriteInputTokens: ptrInt(20)},
}

func ptrInt(n int) *int { return &n }

// TestInvokeStream plays scripted InvokeModelWithResponseStream answers through the fake's
// real event-stream framing and the SDK: a whole answer assembles to what InvokeModel
// returns; exceptions, cuts and an end without message_stop fail the way ConverseStream's do.
func TestInvokeStream(t *testing.T) {
	p, f := fakeProvider(t)
	target := providers.Target{Model: "anthropic.claude-stream-test-v1:0"}
	for _, tc := range []struct {
		name   string
		answer bedrockfake.Answer
		class  providers.Class // "" for success
		status int
		text   string // streamed before the failure
	}{
		{"whole answer", toolAnswer, "", 0, "Checking both."},
		{"throttled before content", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "never"}}, FailAfter: 2,
			StreamError: &bedrockfake.Exception{Type: "ThrottlingException", Message: "slow down"}}, providers.RateLimited, 429, ""},
		{"model error after content", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "half of it and the rest"}}, FailAfter: 5,
			StreamError: &bedrockfake.Exception{Type: "ModelStreamErrorException", Message: "boom"}}, providers.Unavailable, 424, "half of "},
		{"cut mid-frame", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "half of it and the rest"}}, Cut: true, CutAfter: 5, CutMidFrame: true},
			providers.StreamBroken, 0, "half of "},
		{"ends before message_stop", bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "half of it and the rest"}}, EndAfter: 5},
			providers.StreamBroken, 0, "half of "},
		{"claude's overloaded event", bedrockfake.Answer{Events: []anthropicfake.Event{anthropicfake.ErrorEvent("overloaded_error", "Overloaded")}},
			providers.Overloaded, 0, ""},
		{"not JSON", bedrockfake.Answer{Frames: []bedrockfake.Frame{bedrockfake.Chunk([]byte("{oops"), "")}}, providers.StreamBroken, 0, ""},
		{"unknown members are skipped", bedrockfake.Answer{Frames: append([]bedrockfake.Frame{{Event: "somethingNew", Payload: json.RawMessage(`{}`)}},
			frames(t, toolAnswer)...)}, "", 0, "Checking both."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Script(target.Model, tc.answer)
			st, err := p.Stream(ctx, hello(), target)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := streamResult(st)
			checkDenseIndexes(t, ds)
			var text strings.Builder
			for _, d := range ds {
				text.WriteString(d.Text)
			}
			if text.String() != tc.text {
				t.Errorf("streamed %q, want %q", text.String(), tc.text)
			}
			if tc.class == "" {
				if err != nil {
					t.Fatal(err)
				}
				got := assemble(ds)
				if tc.answer.Frames == nil { // hand-written frames exist only as a stream
					plain, err := p.Generate(ctx, hello(), target)
					if err != nil {
						t.Fatal(err)
					}
					sameCompletion(t, got, plain)
				}
				if th := got.Parts[0]; th.Kind != llm.PartThinking || th.Text != "Two lookups." || th.Signature == "" {
					t.Errorf("thinking %+v", th)
				}
				if u := got.Usage; *u.InputTokens != 127 || *u.CacheReadTokens != 100 || *u.CacheWriteTokens != 20 || *u.OutputTokens != 30 {
					t.Errorf("usage %+v", u)
				}
				return
			}
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Class != tc.class || pe.Status != tc.status || pe.Provider != displayName {
				t.Errorf("got %v (%+v), want class %s status %d", err, pe, tc.class, tc.status)
			}
		})
	}
}

// frames is the chunk frames of an answer, as the fake makes them.
func frames(t *testing.T, a bedrockfake.Answer) []bedrockfake.Frame {
	t.Helper()
	var out []bedrockfake.Frame
	for i, e := range (&anthropicfake.Answer{ID: "msg_bdrk_x", Model: bedrockfake.Model, Blocks: []anthropicfake.Block{
		anthropicfake.Thinking(a.Blocks[0].Thinking), anthropicfake.Text(a.Blocks[1].Text),
		anthropicfake.ToolUse(a.Blocks[2].ToolUse.ID, a.Blocks[2].ToolUse.Name, a.Blocks[2].ToolUse.Input),
		anthropicfake.ToolUse(a.Blocks[3].ToolUse.ID, a.Blocks[3].ToolUse.Name, a.Blocks[3].ToolUse.Input)},
		StopReason: "tool_use", Usage: anthropicfake.Usage{Input: 7, Output: 30, CacheRead: 100, CacheCreation: 20}}).Events("") {
		out = append(out, bedrockfake.Chunk([]byte(e.Data), strings.Repeat("p", i)))
	}
	return out
}

// TestInvokeStreamPassThrough: for a Messages door client every upstream event rides on a
// delta verbatim, named by its type, pings and block stops included, and message_stop comes
// without Bedrock's invocation metrics.
func TestInvokeStreamPassThrough(t *testing.T) {
	p, f := fakeProvider(t)
	target := providers.Target{Model: "anthropic.claude-raw-v1:0"}
	f.Script(target.Model, toolAnswer)
	req := hello()
	req.PassThrough = llm.WireAnthropic
	st, err := p.Stream(ctx, req, target)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var names []string
	for {
		d, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Raw == nil || d.Raw.Wire != llm.WireAnthropic {
			t.Fatalf("a delta without its event: %+v", d)
		}
		var e struct{ Type string }
		if err := json.Unmarshal(d.Raw.Data, &e); err != nil || e.Type != d.Raw.Name {
			t.Errorf("event %q carries %s", d.Raw.Name, d.Raw.Data)
		}
		if d.Raw.Name == "message_stop" && string(d.Raw.Data) != `{"type":"message_stop"}` {
			t.Errorf("message_stop %s", d.Raw.Data)
		}
		names = append(names, d.Raw.Name)
	}
	want := (&anthropicfake.Answer{}).Events("")
	if names[0] != want[0].Name || names[1] != "ping" || names[len(names)-1] != "message_stop" || len(names) < 10 {
		t.Errorf("events %v", names)
	}
}

func TestAppendEvent(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		stop           bool
	}{
		{"compact", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n", false},
		{"spaced", "{ \"index\": 1,\n  \"type\": \"ping\" }", "event: ping\ndata: {\"index\":1,\"type\":\"ping\"}\n\n", false},
		{"metrics dropped", `{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":5}}`,
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", true},
		{"line break in invalid JSON", "{\"type\":\"x\n", "event: message\ndata: {\"type\":\"x \n\n", false},
		{"no type", `{"a":1}`, "event: message\ndata: {\"a\":1}\n\n", false},
		{"type with a quote", `{"type":"a\"b"}`, "event: a\"b\ndata: {\"type\":\"a\\\"b\"}\n\n", false},
	} {
		got, stop := appendEvent(nil, []byte(tc.in))
		if string(got) != tc.want || stop != tc.stop {
			t.Errorf("%s: appendEvent = %q, %v; want %q, %v", tc.name, got, stop, tc.want, tc.stop)
		}
	}
}

// FuzzAppendEvent: whatever bytes a chunk carries, the SSE written for it is exactly one
// event, whose data is the chunk's (compacted when it held line breaks), so one chunk can
// never smuggle in a second event.
func FuzzAppendEvent(f *testing.F) {
	f.Add([]byte(`{"type":"message_start","message":{"id":"m"}}`))
	f.Add([]byte("{\"type\":\"ping\"}\n\nevent: error\ndata: {}"))
	f.Add([]byte("\r\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, stop := appendEvent(nil, data)
		r := providers.NewSSEReader(bytes.NewReader(out))
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("%q holds more than one event (%v)", out, err)
		}
		if !bytes.ContainsAny(data, "\r\n") && !stop && !bytes.Equal(ev.Data, data) {
			t.Fatalf("data %q came out as %q", data, ev.Data)
		}
	})
}

// TestInvokeAnswer: Claude's message is kept whole for the Messages door; an InvokeModel
// answer that is not a message fails as unavailable (or busy, for Claude's overloaded error
// with a 200), so the gateway can try another route.
func TestInvokeAnswer(t *testing.T) {
	p, f := fakeProvider(t)
	target := providers.Target{Model: "anthropic.claude-answer-v1:0"}
	f.Script(target.Model, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "ok"}}})
	a, err := p.Generate(ctx, hello(), target)
	if err != nil || a.RawWire != llm.WireAnthropic || !bytes.Contains(a.Raw, []byte(`"id":"msg_bdrk_`)) {
		t.Fatalf("the answer is not kept for the Messages door: %v %+v", err, a)
	}
	for _, tc := range []struct {
		body  string
		class providers.Class
	}{
		{`<html>502 Bad Gateway</html>`, providers.Unavailable},
		{`{"type":"completion","completion":"hi"}`, providers.Unavailable},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, providers.Overloaded},
	} {
		f.Script(target.Model, bedrockfake.Answer{Body: tc.body})
		_, err := p.Generate(ctx, hello(), target)
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Class != tc.class || pe.Provider != displayName {
			t.Errorf("%s: got %v, want class %s", tc.body, err, tc.class)
		}
	}
}

// TestAnswerLimit: a non-streamed answer larger than the bound fails as unavailable (the
// SDK would read any size into memory); one within it, and streams, are read as usual.
func TestAnswerLimit(t *testing.T) {
	p, f := fakeProvider(t)
	defer func(n int64) { answerLimit = n }(answerLimit)
	answerLimit = 4 << 10
	big := strings.Repeat("word ", 1000) // 5 KB of text
	for _, api := range []string{apiConverse, apiInvoke} {
		target := providers.Target{Model: "m-big", API: api}
		f.Script(target.Model, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: big}}})
		_, err := p.Generate(ctx, hello(), target)
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Class != providers.Unavailable || !errors.Is(err, errAnswerTooLarge) {
			t.Errorf("%s: a 5 KB answer under a 4 KB bound: %v", api, err)
		}
		st, err := p.Stream(ctx, hello(), target)
		if err != nil {
			t.Fatal(err)
		}
		if ds, err := streamResult(st); err != nil || assemble(ds).Parts[0].Text != big {
			t.Errorf("%s: the stream is not bounded by the answer limit: %v", api, err)
		}
		f.Script(target.Model, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "small"}}})
		if _, err := p.Generate(ctx, hello(), target); err != nil {
			t.Errorf("%s: a small answer: %v", api, err)
		}
	}
}

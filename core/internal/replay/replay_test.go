package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// TestReplay serves each recording as the fake upstream of a real gateway and asks the
// gateway through openai-go, as the recording was asked: streamed or not (an error body
// answers both). What the client gets must be what the recording says: its text, its tool
// calls (usable: the conversation sent back with their results is accepted), its finish
// reason and usage; for an error, the status and code, the class logged for self-repair, and
// whether the gateway tries the next route.
//
//	go test ./core/internal/replay/ -run 'TestReplay/openrouter'
func TestReplay(t *testing.T) {
	recs := loadRecordings(t)
	for i := range rows {
		rw := &rows[i]
		rec := recs[rw.id]
		if rec == nil {
			continue // TestEveryRecordingHasARow names it
		}
		modes := []bool{rec.stream()}
		if rec.Format == "http-error" {
			modes = []bool{false, true}
		}
		for _, stream := range modes {
			name := rw.id
			if rec.Format == "http-error" {
				name += map[bool]string{false: "/whole", true: "/stream"}[stream]
			}
			t.Run(name, func(t *testing.T) { replay(t, rec, rw, stream) })
		}
	}
}

const gatewayConfig = `
connections:
  up: %s
  backup: {kind: mock}
models:
  replay:
    routes: [{connection: up, model: %q, api: %q}]
  replay-failover:
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: up, model: %[2]q, api: %[3]q}
      - {connection: backup, model: echo}
`

func replay(t *testing.T, rec *recording, rw *row, stream bool) {
	up := serve(t, rec, stream)
	reg := providers.Registry{}
	up.register(reg)
	mock.Register(reg)
	logs := &gatewaytest.LogBuffer{}
	cfg := gatewaytest.Config(t, fmt.Sprintf(gatewayConfig, up.conn, up.model, up.api), config.Options{Getenv: func(string) string { return "" }})
	srv := gatewaytest.Serve(t, cfg, gateway.Options{Registry: reg, Logger: logs.Logger()})
	client := srv.OpenAI()

	params := request(rw, "replay", stream)
	got := ask(client, params, stream)
	if rw.status != 0 {
		checkRefused(t, rw, got, logs)
		checkFailover(t, rw, client, stream, up)
		return
	}
	if got.err != nil {
		if rw.broken == "" || !strings.Contains(got.err.Error(), `"code":"`+rw.broken+`"`) {
			t.Fatalf("the answer failed: %v", got.err)
		}
	} else if rw.broken != "" {
		t.Errorf("the stream ended cleanly; the recording breaks off with %s", rw.broken)
	}
	checkAnswer(t, rec, rw, got)
	if len(rw.calls) > 0 && got.err == nil {
		// A tool loop sends the answer back with the calls' results: the gateway must accept
		// its own answer, and the provider the translation of it.
		params.Messages = append(params.Messages, got.msg.ToParam())
		for _, c := range got.msg.ToolCalls {
			params.Messages = append(params.Messages, oai.ToolMessage(`{"ok":true}`, c.ID))
		}
		before := up.calls()
		if again := ask(client, params, stream); again.err != nil {
			t.Errorf("the conversation with the gateway's own answer was refused: %v", again.err)
		} else if up.calls() != before+1 {
			t.Errorf("the conversation sent back reached the provider %d times", up.calls()-before)
		}
	}
}

// request is a one-turn chat offering the tools the recording calls.
func request(rw *row, model string, stream bool) oai.ChatCompletionNewParams {
	p := gatewaytest.UserOnly(model, "Replay the recorded answer, please.")
	seen := map[string]bool{}
	for _, c := range rw.calls {
		if !seen[c.name] {
			seen[c.name] = true
			p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name: c.name, Parameters: shared.FunctionParameters{"type": "object"}}))
		}
	}
	if stream {
		p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	}
	return p
}

// answer is what the client made of the gateway's answer.
type answer struct {
	msg    oai.ChatCompletionMessage
	finish string
	usage  string // the usage object's JSON; "" when none came
	err    error
}

func ask(client oai.Client, params oai.ChatCompletionNewParams, stream bool) answer {
	ctx := context.Background()
	if !stream {
		c, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return answer{err: err}
		}
		a := answer{msg: c.Choices[0].Message, finish: c.Choices[0].FinishReason}
		if c.JSON.Usage.Valid() {
			a.usage = c.Usage.RawJSON()
		}
		return a
	}
	s := client.Chat.Completions.NewStreaming(ctx, params)
	defer s.Close()
	var acc oai.ChatCompletionAccumulator
	var a answer
	for s.Next() {
		c := s.Current()
		if !acc.AddChunk(c) {
			return answer{err: fmt.Errorf("openai-go's accumulator refused the chunk %s", c.RawJSON())}
		}
		if len(c.Choices) == 0 && c.JSON.Usage.Valid() {
			a.usage = c.Usage.RawJSON()
		}
		if len(c.Choices) > 0 && c.Choices[0].FinishReason != "" {
			a.finish = c.Choices[0].FinishReason
		}
	}
	a.err = s.Err()
	if len(acc.Choices) > 0 {
		a.msg = acc.Choices[0].Message
	}
	return a
}

func checkAnswer(t *testing.T, rec *recording, rw *row, got answer) {
	t.Helper()
	text := got.msg.Content
	if want := recordedText(t, rec); text != want {
		t.Errorf("text:\n got %q\nwant %q", text, want)
	}
	if !strings.HasPrefix(text, rw.text) || (rw.text == "") != (text == "") {
		t.Errorf("text %q does not start as the row says (%q)", text, rw.text)
	}
	if got.msg.Refusal != "" {
		t.Errorf("refusal %q", got.msg.Refusal)
	}
	calls := got.msg.ToolCalls
	if len(calls) != len(rw.calls) {
		t.Errorf("%d tool calls, want %d: %s", len(calls), len(rw.calls), describe(calls))
	}
	ids := map[string]bool{}
	for i := range min(len(calls), len(rw.calls)) {
		c, w := calls[i], rw.calls[i]
		if c.Function.Name != w.name || !openaifake.JSONEqual(c.Function.Arguments, w.args) || c.Type != "function" {
			t.Errorf("call %d: %s %s(%s), want %s(%s)", i, c.Type, c.Function.Name, c.Function.Arguments, w.name, w.args)
		}
		switch {
		case w.id != "" && c.ID != w.id:
			t.Errorf("call %d: id %q, want the provider's %q", i, c.ID, w.id)
		case w.id == "" && !strings.HasPrefix(c.ID, "call_"):
			t.Errorf("call %d: id %q, want one the gateway made up", i, c.ID)
		case ids[c.ID]:
			t.Errorf("call %d: id %q is not unique", i, c.ID)
		}
		ids[c.ID] = true
	}
	if got.finish != rw.finish {
		t.Errorf("finish reason %q, want %q", got.finish, rw.finish)
	}
	switch {
	case rw.usage == "" && got.usage != "":
		t.Errorf("usage %s; the recording reports none", got.usage)
	case rw.usage != "" && !openaifake.JSONEqual(got.usage, rw.usage):
		t.Errorf("usage:\n got %s\nwant %s", got.usage, rw.usage)
	}
}

// checkRefused checks a failure before any output: what the client gets, and the class
// logged for the attempt (self-repair acts on it: not_found and auth disable the route).
func checkRefused(t *testing.T, rw *row, got answer, logs *gatewaytest.LogBuffer) {
	t.Helper()
	var apiErr *oai.Error
	if !errors.As(got.err, &apiErr) {
		t.Fatalf("got %v (%+v), want the client error %d %s", got.err, got.msg, rw.status, rw.code)
	}
	if apiErr.StatusCode != rw.status || apiErr.Code != rw.code {
		t.Errorf("client error %d %s (%s), want %d %s", apiErr.StatusCode, apiErr.Code, apiErr.Message, rw.status, rw.code)
	}
	failed := logs.WaitLines(t, record.MsgProviderError, 1)
	if len(failed) != 1 || failed[0]["error_class"] != rw.class {
		t.Errorf("logged attempts %v, want one of class %s", failed, rw.class)
	}
}

// checkFailover asks a model whose second route is the mock: a failure that is the route's
// (not the request's) moves there before any output.
func checkFailover(t *testing.T, rw *row, client oai.Client, stream bool, up *upstream) {
	t.Helper()
	before := up.calls()
	got := ask(client, request(rw, "replay-failover", stream), stream)
	if up.calls() != before+1 {
		t.Errorf("the provider got %d requests, want 1", up.calls()-before)
	}
	switch {
	case rw.failover && got.err != nil:
		t.Errorf("no failover to the next route: %v", got.err)
	case rw.failover && got.msg.Content != "Replay the recorded answer, please.":
		t.Errorf("the next route did not answer: %+v", got.msg)
	case !rw.failover && got.err == nil:
		t.Errorf("the gateway failed over on the request's own fault: %+v", got.msg)
	}
}

func describe(calls []oai.ChatCompletionMessageToolCallUnion) string {
	var b strings.Builder
	for i, c := range calls {
		fmt.Fprintf(&b, "[%d] id %q %q(%s) ", i, c.ID, c.Function.Name, c.Function.Arguments)
	}
	return b.String()
}

package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/internal/gatewaytest"
)

const socketConfig = `
keys:
  - {name: app, value: sk-gw-socket-0123456789}
connections:
  mock: {kind: mock}
  slow: {kind: mock, delay_ms: 50}
models:
  mock-echo: {routes: [{connection: mock, model: echo}]}
  mock-tools: {routes: [{connection: mock, model: tools}]}
  mock-slow: {routes: [{connection: slow, model: lorem}]}
  mock-panic: {routes: [{connection: mock, model: panic}]}
  mock-panic-mid: {routes: [{connection: mock, model: "panic:3"}]}
  mock-cut: {routes: [{connection: mock, model: "cut:3"}]}
  mock-down: {routes: [{connection: mock, model: "error:503"}]}
limits: {websocket_max_message_bytes: 65536}
`

const socketKey = "sk-gw-socket-0123456789"

func withSockets(o *gateway.Options) { o.WebSockets = true }

// withLimit adds a setting to socketConfig's limits.
func withLimit(cfg, setting string) string {
	return strings.Replace(cfg, "limits: {", "limits: {"+setting+", ", 1)
}

// requestLines waits for n request lines and returns the request lines.
func requestLines(t *testing.T, g *testGateway, n int) []map[string]any {
	t.Helper()
	g.logs.AfterRequests(t, n)
	return g.logs.Lines(t, record.MsgRequest)
}

// lookupTool is a function tool the mock's tools model calls.
const lookupTool = `[{"type":"function","name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}]`

// TestWebSocketResponseCarriesTheStreamsEvents: a response.create gets, as text messages, the
// events POST /v1/responses with stream: true sends as SSE, in the same order, ending with
// response.completed; its request is logged as a Responses request with the transport.
func TestWebSocketResponseCarriesTheStreamsEvents(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	body := `{"model":"mock-echo","input":[{"type":"message","role":"user","content":"Count from 1 to 3."}]}`
	r := g.Do(t, http.MethodPost, "/v1/responses", strings.Replace(body, "{", `{"stream":true,`, 1), "Authorization", "Bearer "+socketKey)
	var httpTypes []string
	var httpFinal map[string]any
	for _, block := range strings.Split(strings.TrimSpace(string(r.Body)), "\n\n") {
		_, d, _ := strings.Cut(block, "\ndata: ")
		var ev map[string]any
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatalf("%v: %q", err, block)
		}
		httpTypes = append(httpTypes, ev["type"].(string))
		if ev["type"] == "response.completed" {
			httpFinal = ev["response"].(map[string]any)
		}
	}

	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	turn := s.Turn(t, strings.Replace(body, "{", `{"type":"response.create",`, 1))
	if !reflect.DeepEqual(turn.Types, httpTypes) {
		t.Errorf("WebSocket events %v\nSSE events       %v", turn.Types, httpTypes)
	}
	if turn.Status() != "completed" || turn.Text() != "Count from 1 to 3." {
		t.Fatalf("status %s, text %q: %v", turn.Status(), turn.Text(), turn.Raw)
	}
	final, _ := json.Marshal(turn.Final)
	want, _ := json.Marshal(httpFinal)
	if got, w := gatewaytest.ComparableResponse(t, string(final)), gatewaytest.ComparableResponse(t, string(want)); !reflect.DeepEqual(got, w) {
		t.Errorf("WebSocket response %s\nHTTP response %s", final, want)
	}

	lines := requestLines(t, g, 2)
	ws := lines[1]
	for k, v := range map[string]any{"endpoint": "responses", "transport": "websocket", "status": float64(200), "stream": true,
		"model": "mock-echo", "websocket_id": s.Header.Get("X-Request-Id")} {
		if ws[k] != v {
			t.Errorf("request line %s = %v, want %v: %v", k, ws[k], v, ws)
		}
	}
	if _, ok := lines[0]["transport"]; ok {
		t.Errorf("the HTTP request's line names a transport: %v", lines[0])
	}
	if ws["request_id"] == s.Header.Get("X-Request-Id") {
		t.Error("a response.create has the connection's id as its request id")
	}
	if a := g.logs.Attempts(t, 2)[1]; a["transport"] != "websocket" {
		t.Errorf("attempt line %v", a)
	}
	_ = s.Conn.Close(websocket.StatusNormalClosure, "")
	c := g.logs.WaitLines(t, record.MsgWebSocket, 1)[0]
	if c["messages"] != float64(1) || c["key"] != "app" || c["websocket_id"] != s.Header.Get("X-Request-Id") {
		t.Errorf("connection line %v", c)
	}
}

// TestWebSocketSequentialResponses: one connection carries one response after another.
func TestWebSocketSequentialResponses(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	var ids []string
	for _, word := range []string{"first", "second", "third"} {
		turn := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"input":"Reply with exactly: `+word+`"}`)
		if turn.Status() != "completed" || turn.Text() != "Reply with exactly: "+word {
			t.Fatalf("%s: %s %q", word, turn.Status(), turn.Text())
		}
		ids = append(ids, turn.ID())
	}
	if ids[0] == ids[1] || ids[1] == ids[2] {
		t.Errorf("response ids %v", ids)
	}
}

// TestWebSocketContinuesAResponseThatWasNotStored: without a response store, a continuation
// on the connection builds on its last response (the tool call the mock made is there for its
// output to answer), which a POST cannot continue.
func TestWebSocketContinuesAResponseThatWasNotStored(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	first := s.Turn(t, `{"type":"response.create","model":"mock-tools","store":false,"input":"find it","tools":`+lookupTool+`}`)
	out, _ := first.Final["output"].([]any)
	if first.Status() != "completed" || len(out) != 1 {
		t.Fatalf("first: %v", first.Raw)
	}
	call := out[0].(map[string]any)
	if call["type"] != "function_call" {
		t.Fatalf("first output %v", call)
	}
	second := s.Turn(t, `{"type":"response.create","model":"mock-tools","store":false,"previous_response_id":"`+first.ID()+`","tools":`+lookupTool+
		`,"input":[{"type":"function_call_output","call_id":"`+call["call_id"].(string)+`","output":"42"}]}`)
	if second.Status() != "completed" || second.Text() != "The tool returned: 42" || second.Final["previous_response_id"] != first.ID() {
		t.Fatalf("second: %v", second.Raw)
	}
	// The chain goes on from the last response.
	third := s.Turn(t, `{"type":"response.create","model":"mock-tools","store":false,"previous_response_id":"`+second.ID()+`","input":[],"tools":`+lookupTool+`}`)
	if third.Status() != "completed" {
		t.Fatalf("third: %v", third.Raw)
	}
	// Only the last response is kept: the first cannot be continued any more.
	again := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"previous_response_id":"`+first.ID()+`","input":"x"}`)
	if again.ErrorCode() != "previous_response_not_found" {
		t.Errorf("continuing a response that is no longer the last: %v", again.Raw)
	}

	r := g.Do(t, http.MethodPost, "/v1/responses", `{"model":"mock-echo","previous_response_id":"`+third.ID()+`","input":"x"}`, "Authorization", "Bearer "+socketKey)
	if r.Status != http.StatusBadRequest {
		t.Errorf("a POST continuing the connection's response: %d %s", r.Status, r.Body)
	}
}

// TestWebSocketNewConnectionDoesNotSeeAnotherConnectionsResponse: a store: false response
// lives on its connection only; a continuation on another is previous_response_not_found in
// the WebSocket error shape, and that connection goes on serving.
func TestWebSocketNewConnectionDoesNotSeeAnotherConnectionsResponse(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []func(*gateway.Options)
	}{
		{"without a store", []func(*gateway.Options){withSockets}},
		{"with a store", []func(*gateway.Options){withSockets, withStore}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, socketConfig, tc.opts...)
			first := gatewaytest.DialResponses(t, g.URL, socketKey).Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"input":"Remember: copper."}`)
			if first.Status() != "completed" {
				t.Fatalf("first: %v", first.Raw)
			}
			s := gatewaytest.DialResponses(t, g.URL, socketKey)
			miss := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"previous_response_id":"`+first.ID()+`","input":"continue"}`)
			if miss.ErrorCode() != "previous_response_not_found" || len(miss.Events) != 1 {
				t.Fatalf("reconnected continuation: %v", miss.Raw)
			}
			e := miss.Error["error"].(map[string]any)
			if miss.Error["status"] != float64(400) || e["type"] != "invalid_request_error" || e["param"] != "previous_response_id" ||
				!strings.Contains(e["message"].(string), "only on the connection that created it") {
				t.Errorf("error event %s", miss.Raw[0])
			}
			if h, _ := miss.Error["headers"].(map[string]any); h["x-request-id"] == nil {
				t.Errorf("the error event carries no request id: %s", miss.Raw[0])
			}
			recovered := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"input":"recovered"}`)
			if recovered.Status() != "completed" || recovered.Text() != "recovered" {
				t.Errorf("recovery: %v", recovered.Raw)
			}
		})
	}
}

// TestWebSocketStoredResponseContinuesOnAnyConnection: a stored response is found by any
// connection of its key, as by a POST.
func TestWebSocketStoredResponseContinuesOnAnyConnection(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets, withStore)
	first := gatewaytest.DialResponses(t, g.URL, socketKey).Turn(t, `{"type":"response.create","model":"mock-tools","input":"find it","tools":`+lookupTool+`}`)
	call := first.Final["output"].([]any)[0].(map[string]any)
	second := gatewaytest.DialResponses(t, g.URL, socketKey).Turn(t, `{"type":"response.create","model":"mock-tools","previous_response_id":"`+first.ID()+
		`","tools":`+lookupTool+`,"input":[{"type":"function_call_output","call_id":"`+call["call_id"].(string)+`","output":"7"}]}`)
	if second.Text() != "The tool returned: 7" || second.Final["store"] != true {
		t.Fatalf("second: %v", second.Raw)
	}
	r := g.Do(t, http.MethodGet, "/v1/responses/"+second.ID(), "", "Authorization", "Bearer "+socketKey)
	if r.Status != http.StatusOK {
		t.Errorf("GET of the stored WebSocket response: %d %s", r.Status, r.Body)
	}
}

// TestWebSocketFailedContinuationEvictsTheResponse: a continuation that fails (a tool output
// no call in the last response asked for) is refused, and the response it continued is no
// longer there to continue.
func TestWebSocketFailedContinuationEvictsTheResponse(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	first := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"input":"Remember: ember."}`)
	failed := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"previous_response_id":"`+first.ID()+
		`","input":[{"type":"function_call_output","call_id":"call_missing","output":"no such call"}]}`)
	if failed.Error == nil || failed.Error["status"] != float64(400) {
		t.Fatalf("the bad continuation: %v", failed.Raw)
	}
	retry := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"previous_response_id":"`+first.ID()+`","input":"stale"}`)
	if retry.ErrorCode() != "previous_response_not_found" {
		t.Fatalf("after the failed continuation: %v", retry.Raw)
	}
	// A failure that was no continuation leaves the last response alone.
	next := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"input":"fresh"}`)
	if bad := s.Turn(t, `{"type":"response.create","model":"no-such-model","input":"x"}`); bad.ErrorCode() != "model_not_found" {
		t.Fatalf("unknown model: %v", bad.Raw)
	}
	if cont := s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"previous_response_id":"`+next.ID()+`","input":"on"}`); cont.Status() != "completed" {
		t.Errorf("continuing after an unrelated failure: %v", cont.Raw)
	}
}

// TestWebSocketOversizedMessageClosesOnlyItsConnection: a message past
// limits.websocket_max_message_bytes gets a 413 error event and its connection closes with
// 1009; another connection, open all along, goes on serving.
func TestWebSocketOversizedMessageClosesOnlyItsConnection(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	other := gatewaytest.DialResponses(t, g.URL, socketKey)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	big := `{"type":"response.create","model":"mock-echo","input":"` + strings.Repeat("x", 70_000) + `"}`
	refused := s.Turn(t, big)
	e, _ := refused.Error["error"].(map[string]any)
	if refused.Error["status"] != float64(413) || e["code"] != "request_too_large" || !strings.Contains(e["message"].(string), "limits.websocket_max_message_bytes") {
		t.Fatalf("oversized message: %v", refused.Raw)
	}
	if code, reason := s.Closed(t); code != websocket.StatusMessageTooBig {
		t.Errorf("closed with %v %q, want 1009", code, reason)
	}
	if turn := other.Turn(t, `{"type":"response.create","model":"mock-echo","input":"still here"}`); turn.Text() != "still here" {
		t.Errorf("the other connection: %v", turn.Raw)
	}
	// Just under the limit is served.
	fits := `{"type":"response.create","model":"mock-echo","input":"` + strings.Repeat("y", 60_000) + `"}`
	if turn := gatewaytest.DialResponses(t, g.URL, socketKey).Turn(t, fits); turn.Status() != "completed" {
		t.Errorf("a message under the limit: %v", turn.Types)
	}
	var logged bool
	for _, l := range g.logs.Lines(t, record.MsgRequest) {
		logged = logged || l["status"] == float64(413) && l["transport"] == "websocket"
	}
	if !logged {
		t.Error("the oversized message has no request line")
	}
}

// TestWebSocketBudgetRefusalKeepsTheConnection: each response.create is admitted by the key's
// counters like a POST: past the day's budget it gets the 429 budget_exceeded error event
// (with x-should-retry: false among its headers), and the connection goes on serving what the
// budget does not hold.
func TestWebSocketBudgetRefusalKeepsTheConnection(t *testing.T) {
	store := newSettling(counters.NewMemory())
	cfg := strings.Replace(pricedLimits, "models:\n", "models:\n  free: {routes: [{connection: mock, model: echo}]}\n", 1)
	g := newGateway(t, cfg, withSockets, limited(store))
	s := gatewaytest.DialResponses(t, g.URL, limitedKey)
	priced := `{"type":"response.create","model":"m","max_output_tokens":20,"input":"one two three"}`
	var spent int64
	for i := 0; spent < 10_000_000; i++ {
		if turn := s.Turn(t, priced); turn.Status() != "completed" {
			t.Fatalf("response %d with %d nano-USD spent: %v", i+1, spent, turn.Raw)
		}
		store.wait(t)
		spent = store.read(t, "app").Value("", counters.SpendDay)
	}
	refused := s.Turn(t, priced)
	h, _ := refused.Error["headers"].(map[string]any)
	if refused.Error["status"] != float64(429) || refused.ErrorCode() != "budget_exceeded" || h["x-should-retry"] != "false" {
		t.Fatalf("past the budget: %v", refused.Raw)
	}
	if turn := s.Turn(t, `{"type":"response.create","model":"free","input":"free"}`); turn.Text() != "free" {
		t.Errorf("after the refusal: %v", turn.Raw)
	}
}

// TestWebSocketRefusesBadMessages: a message that is no response.create gets an error event
// naming what is wrong, and the connection goes on.
func TestWebSocketRefusesBadMessages(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	for _, tc := range []struct{ msg, code, param string }{
		{`{"type":"response.create","model":"mock-echo"`, "invalid_json", ""},
		{`["response.create"]`, "invalid_json", ""},
		{`{"model":"mock-echo","input":"hi"}`, "missing_required_parameter", "type"},
		{`{"type":"response.cancel","model":"mock-echo","input":"hi"}`, "invalid_value", "type"},
		{`{"type":"response.create","type":"response.create","model":"mock-echo","input":"hi"}`, "invalid_json", "type"},
		{`{"type":"response.create","model":"mock-echo","input":"hi","stream":false}`, "invalid_value", "stream"},
		{`{"type":"response.create","model":"mock-echo","input":"hi","background":true}`, "unsupported_parameter", "background"},
		{`{"type":"response.create","model":"mock-echo","input":"hi","generate":"no"}`, "invalid_type", "generate"},
		{`{"type":"response.create","model":"mock-echo","input":"hi","temprature":1}`, "unknown_parameter", "temprature"},
	} {
		turn := s.Turn(t, tc.msg)
		e, _ := turn.Error["error"].(map[string]any)
		param, _ := e["param"].(string)
		if turn.Error["status"] != float64(400) || e["code"] != tc.code || param != tc.param {
			t.Errorf("%s: %v", tc.msg, turn.Raw)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Conn.Write(ctx, websocket.MessageBinary, []byte(`{"type":"response.create"}`)); err != nil {
		t.Fatal(err)
	}
	if turn := s.Read(t); turn.ErrorCode() != "invalid_message" {
		t.Errorf("a binary message: %v", turn.Raw)
	}
	// Codex sends stream: true, which WebSocket mode implies.
	if turn := s.Turn(t, `{"type":"response.create","model":"mock-echo","input":"fine","stream":true}`); turn.Text() != "fine" {
		t.Errorf("after the refusals: %v", turn.Raw)
	}
}

// TestWebSocketWarmUp: generate: false (Codex's prewarm) answers a completed response with no
// output and no usage, without calling the model, and the next turn continues from its input.
func TestWebSocketWarmUp(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	warm := s.Turn(t, `{"type":"response.create","model":"mock-tools","store":false,"generate":false,"input":"find it","tools":`+lookupTool+`}`)
	if want := []string{"response.created", "response.in_progress", "response.completed"}; !reflect.DeepEqual(warm.Types, want) {
		t.Fatalf("warm-up events %v", warm.Raw)
	}
	if out, _ := warm.Final["output"].([]any); len(out) != 0 {
		t.Errorf("warm-up output %v", out)
	}
	if u, _ := warm.Final["usage"].(map[string]any); u["input_tokens"] != float64(0) || u["output_tokens"] != float64(0) {
		t.Errorf("warm-up usage %v", warm.Final["usage"])
	}
	if l := requestLines(t, g, 1)[0]; l["attempts"] != float64(0) || l["status"] != float64(200) {
		t.Errorf("warm-up request line %v", l)
	}
	// Its input is the conversation: the next turn, with no input of its own, is answered.
	turn := s.Turn(t, `{"type":"response.create","model":"mock-tools","store":false,"previous_response_id":"`+warm.ID()+`","input":[],"tools":`+lookupTool+`}`)
	if out, _ := turn.Final["output"].([]any); turn.Status() != "completed" || len(out) != 1 {
		t.Fatalf("the turn after the warm-up: %v", turn.Raw)
	}
	if bad := s.Turn(t, `{"type":"response.create","model":"no-such-model","generate":false,"input":"x"}`); bad.ErrorCode() != "model_not_found" {
		t.Errorf("a warm-up of an unknown model: %v", bad.Raw)
	}
	// Codex's prewarm holds its instructions alone; its first turn adds the user's message.
	warm = s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"generate":false,"input":[{"type":"message","role":"developer","content":"Be brief."}]}`)
	if warm.Status() != "completed" {
		t.Fatalf("a warm-up of instructions alone: %v", warm.Raw)
	}
	turn = s.Turn(t, `{"type":"response.create","model":"mock-echo","store":false,"previous_response_id":"`+warm.ID()+`","input":"hello"}`)
	if turn.Text() != "hello" {
		t.Errorf("the turn after it: %v", turn.Raw)
	}
	if bad := s.Turn(t, `{"type":"response.create","model":"mock-echo","input":[{"type":"message","role":"developer","content":"Be brief."}]}`); bad.ErrorCode() != "invalid_value" {
		t.Errorf("a response that would answer instructions alone: %v", bad.Raw)
	}
}

// TestWebSocketFailuresEndTheirResponseOnly: a route that fails before output, a panic before
// it and a panic mid-stream each end their response with one terminal message (the error
// event, or response.failed), and the connection goes on.
func TestWebSocketFailuresEndTheirResponseOnly(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	for _, tc := range []struct{ model, want string }{
		{"mock-down", "error"},
		{"mock-panic", "error"},
		{"mock-panic-mid", "failed"},
		{"mock-cut", "failed"},
	} {
		turn := s.Turn(t, `{"type":"response.create","model":"`+tc.model+`","input":"one two three four five"}`)
		if turn.Status() != tc.want {
			t.Errorf("%s: %s %v", tc.model, turn.Status(), turn.Raw)
		}
		if tc.want == "failed" {
			if e, _ := turn.Final["error"].(map[string]any); e["code"] == nil {
				t.Errorf("%s: response.failed without its error: %v", tc.model, turn.Final)
			}
			for _, typ := range turn.Types {
				if typ == "error" {
					t.Errorf("%s: an error event before response.failed: %v", tc.model, turn.Types)
				}
			}
		}
		if next := s.Turn(t, `{"type":"response.create","model":"mock-echo","input":"next"}`); next.Text() != "next" {
			t.Fatalf("after %s: %v", tc.model, next.Raw)
		}
	}
}

// TestWebSocketClientLeavingCancelsItsResponse: a client that closes the connection while its
// response streams ends the attempt (client_closed), as an HTTP client that leaves does.
func TestWebSocketClientLeavingCancelsItsResponse(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	s := gatewaytest.DialResponses(t, g.URL, socketKey)
	s.Send(t, `{"type":"response.create","model":"mock-slow","input":"go"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, data, err := s.Conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "output_text.delta") {
			break
		}
	}
	_ = s.Conn.CloseNow()
	a := g.logs.Attempts(t, 1)[0]
	if a["outcome"] != record.OutcomeClientClosed {
		t.Errorf("attempt %v", a)
	}
	if r := requestLines(t, g, 1)[0]; r["status"] != float64(499) {
		t.Errorf("request %v", r)
	}
}

// TestWebSocketIdleAndLifetimeLimits: a connection left idle for limits.websocket_idle_timeout
// is closed normally; one in use past limits.websocket_max_duration gets
// websocket_connection_limit_reached and is closed.
func TestWebSocketIdleAndLifetimeLimits(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		g := newGateway(t, withLimit(socketConfig, "websocket_idle_timeout: 200ms"), withSockets)
		s := gatewaytest.DialResponses(t, g.URL, socketKey)
		if turn := s.Turn(t, `{"type":"response.create","model":"mock-echo","input":"hi"}`); turn.Text() != "hi" {
			t.Fatal(turn.Raw)
		}
		code, reason := s.Closed(t)
		if code != websocket.StatusNormalClosure || !strings.Contains(reason, "limits.websocket_idle_timeout") {
			t.Errorf("closed with %v %q", code, reason)
		}
		if c := g.logs.WaitLines(t, record.MsgWebSocket, 1)[0]; !strings.Contains(c["closed"].(string), "idle") {
			t.Errorf("connection line %v", c)
		}
	})
	t.Run("lifetime", func(t *testing.T) {
		g := newGateway(t, withLimit(socketConfig, "websocket_max_duration: 300ms"), withSockets)
		s := gatewaytest.DialResponses(t, g.URL, socketKey)
		for {
			s.Send(t, `{"type":"response.create","model":"mock-echo","input":"hi"}`)
			turn := s.Read(t)
			if turn.Error != nil {
				if turn.ErrorCode() != "websocket_connection_limit_reached" {
					t.Fatalf("error %v", turn.Raw)
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if code, _ := s.Closed(t); code != websocket.StatusNormalClosure {
			t.Errorf("closed with %v", code)
		}
	})
}

// TestWebSocketHandshakeRefusals: a handshake the gateway will not take is answered in
// OpenAI's error shape with its status: WebSocket mode off (Lambda) is a 426 naming HTTP
// streaming; a bad key 401; a web page's Origin 403. A GET that is no handshake is still the
// 405 naming POST.
func TestWebSocketHandshakeRefusals(t *testing.T) {
	off := newGateway(t, socketConfig)
	on := newGateway(t, socketConfig, withSockets)
	for _, tc := range []struct {
		name   string
		g      *testGateway
		key    string
		header []string
		status int
		code   string
	}{
		{"websocket mode off", off, socketKey, nil, http.StatusUpgradeRequired, "websocket_not_supported"},
		{"websocket mode off, no key", off, "", nil, http.StatusUnauthorized, "missing_api_key"},
		{"wrong key", on, "sk-wrong-0123456789", nil, http.StatusUnauthorized, "invalid_api_key"},
		{"a web page", on, socketKey, []string{"Origin", "https://evil.example"}, http.StatusForbidden, "origin_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := gatewaytest.TryDialResponses(tc.g.URL, tc.key, tc.header...)
			if err == nil || resp == nil {
				t.Fatalf("handshake accepted (%v)", err)
			}
			body, _ := io.ReadAll(resp.Body)
			r := &gatewaytest.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
			e := r.ErrorObject(t)
			if r.Status != tc.status || e["code"] != tc.code {
				t.Fatalf("%d %s", r.Status, body)
			}
			if tc.code == "websocket_not_supported" && !strings.Contains(e["message"].(string), `POST /v1/responses with "stream": true`) {
				t.Errorf("message %q does not name HTTP streaming", e["message"])
			}
		})
	}
	r := on.Do(t, http.MethodGet, "/v1/responses", "", "Authorization", "Bearer "+socketKey)
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
		t.Errorf("a plain GET: %d %v %s", r.Status, r.Header, r.Body)
	}
	// A front end that drops the Upgrade header still passes Sec-WebSocket-Key: it gets the
	// 426 too.
	r = off.Do(t, http.MethodGet, "/v1/responses", "", "Authorization", "Bearer "+socketKey, "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version", "13")
	if r.Status != http.StatusUpgradeRequired {
		t.Errorf("a handshake without Upgrade: %d %s", r.Status, r.Body)
	}
	if got := len(off.logs.Lines(t, record.MsgRequest)); got < 3 {
		t.Errorf("%d request lines for the refused handshakes", got)
	}
}

// TestCloseWebSocketsLetsResponsesFinish: a server shutting down closes each connection (1001)
// once its running response has ended, refuses new handshakes with a 503, and, when it stops
// waiting, cuts what is still open.
func TestCloseWebSocketsLetsResponsesFinish(t *testing.T) {
	g := newGateway(t, socketConfig, withSockets)
	idle := gatewaytest.DialResponses(t, g.URL, socketKey)
	busy := gatewaytest.DialResponses(t, g.URL, socketKey)
	busy.Send(t, `{"type":"response.create","model":"mock-slow","max_output_tokens":16,"input":"go"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, first, err := busy.Conn.Read(ctx); err != nil || !strings.Contains(string(first), "response.created") { // under way
		t.Fatalf("%s %v", first, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- g.Gateway.CloseWebSockets(ctx) }()
	if code, _ := idle.Closed(t); code != websocket.StatusGoingAway {
		t.Errorf("the idle connection closed with %v", code)
	}
	turn := busy.Read(t)
	if turn.Status() != "incomplete" || len(turn.Types) < 16 { // the output maximum ends it
		t.Errorf("the running response: %v", turn.Types)
	}
	if code, _ := busy.Closed(t); code != websocket.StatusGoingAway {
		t.Errorf("the busy connection closed with %v", code)
	}
	if err := <-closed; err != nil {
		t.Errorf("CloseWebSockets: %v", err)
	}
	if _, resp, err := gatewaytest.TryDialResponses(g.URL, socketKey); err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a handshake after the shutdown began: %v", err)
	}

	t.Run("cut when the grace ends", func(t *testing.T) {
		g := newGateway(t, socketConfig, withSockets)
		s := gatewaytest.DialResponses(t, g.URL, socketKey)
		s.Send(t, `{"type":"response.create","model":"mock-slow","input":"go"}`)
		if _, _, err := s.Conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
		short, stop := context.WithTimeout(ctx, 100*time.Millisecond)
		defer stop()
		if err := g.Gateway.CloseWebSockets(short); err != context.DeadlineExceeded {
			t.Errorf("CloseWebSockets: %v", err)
		}
		if a := g.logs.Attempts(t, 1)[0]; a["outcome"] != record.OutcomeClientClosed {
			t.Errorf("the cut response's attempt %v", a)
		}
	})
}

// cacheLeg is one Responses request of a cache test: over the WebSocket mode (streamed, as
// every response there is) or over HTTP, on a model of cacheConfig.
type cacheLeg struct {
	socket bool
	stream bool // over HTTP
	model  string
}

func (l cacheLeg) String() string {
	if l.socket {
		return "socket/" + l.model
	}
	return fmt.Sprintf("http/stream=%v/%s", l.stream, l.model)
}

// do sends the leg's request to s, as the n-th request logged to logs, and returns what the
// cache did (the request line's cache over the socket, which has no headers per response;
// x-fngate-cache over HTTP) and the answer's text.
func (l cacheLeg) do(t *testing.T, s *gatewaytest.Server, logs *gatewaytest.LogBuffer, n int, generate bool) (result, text string) {
	t.Helper()
	body := fmt.Sprintf(`"model":%q,"store":false,"max_output_tokens":64,"input":"Name three primes."`, l.model)
	if !l.socket {
		r := s.Do(t, "POST", "/v1/responses", fmt.Sprintf(`{"stream":%v,%s}`, l.stream, body), "Authorization", "Bearer "+cacheKeyA)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", l, r.Status, r.Body)
		}
		return cacheResult(r), answerText(t, l.stream, r.Body)
	}
	sock := gatewaytest.DialResponses(t, s.URL, cacheKeyA)
	defer sock.Conn.Close(websocket.StatusNormalClosure, "")
	turn := sock.Turn(t, fmt.Sprintf(`{"type":"response.create","generate":%v,%s}`, generate, body))
	if turn.Status() != "completed" {
		t.Fatalf("%s: %v", l, turn.Raw)
	}
	lines := requestLines(t, &testGateway{logs: logs}, n)
	result, _ = lines[n-1]["cache"].(string)
	return result, turn.Text()
}

// TestWebSocketSharesTheCacheWithHTTP: a response.create is looked up and cached as POST
// /v1/responses is (docs/cache.md: the Responses API over HTTP and over its WebSocket mode
// share entries), a miss then a hit on the other instance, either way round; a whole answer
// from OpenAI's own route is the exception docs/cache.md states (its items exist only in
// OpenAI's objects and events), a miss for the socket's stream.
func TestWebSocketSharesTheCacheWithHTTP(t *testing.T) {
	socket := func(model string) cacheLeg { return cacheLeg{socket: true, model: model} }
	post := func(model string, stream bool) cacheLeg { return cacheLeg{stream: stream, model: model} }
	for _, tc := range []struct {
		first, second cacheLeg
		want          string
	}{
		{socket("gpt"), socket("gpt"), "hit"},
		{socket("claude"), socket("claude"), "hit"},
		{post("gpt", true), socket("gpt"), "hit"},
		{socket("gpt"), post("gpt", true), "hit"},
		{post("claude", false), socket("claude"), "hit"},
		{socket("claude"), post("claude", false), "hit"},
		{post("gpt", false), socket("gpt"), "miss"},
	} {
		t.Run(tc.first.String()+"-then-"+tc.second.String(), func(t *testing.T) {
			t.Parallel()
			u := newCacheUpstreams(t)
			logs := &gatewaytest.LogBuffer{}
			gw := cacheInstances(t, cacheConfig(u, ""), memoryCache(), gateway.Options{WebSockets: true, Logger: logs.Logger()})
			got, missText := tc.first.do(t, gw[0], logs, 1, true)
			if got != "miss" {
				t.Fatalf("the first request: cache %q, want miss", got)
			}
			flush(t, gw[0])
			before := u.calls()
			got, text := tc.second.do(t, gw[1], logs, 2, true)
			if got != tc.want || (u.calls() == before) != (tc.want == "hit") {
				t.Errorf("the second request: cache %q with %d upstream calls, want %s", got, u.calls()-before, tc.want)
			}
			if text != missText || text == "" {
				t.Errorf("the second request's text %q, the first's %q", text, missText)
			}
		})
	}
}

// TestWebSocketWarmUpIsNotCached: a generate: false warm-up answers no output, which must
// never answer a request. It is answered before any look-up (socket.go's warmUp: its line has
// no cache result) and writes nothing, so the same request generated afterwards is a miss
// with the model's answer, whose hit then follows.
func TestWebSocketWarmUpIsNotCached(t *testing.T) {
	u := newCacheUpstreams(t)
	logs := &gatewaytest.LogBuffer{}
	gw := cacheInstances(t, cacheConfig(u, ""), memoryCache(), gateway.Options{WebSockets: true, Logger: logs.Logger()})
	leg := cacheLeg{socket: true, model: "claude"}
	for i, step := range []struct {
		generate bool
		want     string
		calls    int
	}{
		{false, "", 0},
		{false, "", 0},
		{true, "miss", 1},
		{true, "hit", 0},
	} {
		before := u.calls()
		got, text := leg.do(t, gw[i%2], logs, i+1, step.generate)
		flush(t, gw[i%2])
		if got != step.want || u.calls()-before != step.calls {
			t.Errorf("step %d (generate %v): cache %q with %d upstream calls, want %q with %d", i, step.generate, got, u.calls()-before, step.want, step.calls)
		}
		if step.generate && text == "" {
			t.Errorf("step %d: no text", i)
		}
	}
}

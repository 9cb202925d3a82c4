package main

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fngate/fngate/internal/gatewaytest"
)

// TestWebSocketModeOnTheServer: the real server takes the Responses API's WebSocket mode: a
// response, then a store: false continuation on the same connection (the mock's tool call,
// answered), and a reconnect that cannot see it. On SIGTERM a response under way finishes
// before its connection closes (1001) and the process exits cleanly.
func TestWebSocketModeOnTheServer(t *testing.T) {
	cmd, addr, out := startServerOut(t, `
keys: [{name: app, value: sk-local-socket-0123456789}]
connections: {mock: {kind: mock}, slow: {kind: mock, delay_ms: 100}}
models:
  tools: {routes: [{connection: mock, model: tools}]}
  slow: {routes: [{connection: slow, model: lorem}]}
`, "-shutdown-grace", "20s", "-route-state", "off")
	base := "http://" + addr
	const key = "sk-local-socket-0123456789"
	const tool = `[{"type":"function","name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}]`
	s := gatewaytest.DialResponses(t, base, key)
	first := s.Turn(t, `{"type":"response.create","model":"tools","store":false,"input":"find it","tools":`+tool+`}`)
	out0, _ := first.Final["output"].([]any)
	if first.Status() != "completed" || len(out0) != 1 {
		t.Fatalf("first: %v\n%s", first.Raw, out.String())
	}
	call := out0[0].(map[string]any)["call_id"].(string)
	second := s.Turn(t, `{"type":"response.create","model":"tools","store":false,"previous_response_id":"`+first.ID()+`","tools":`+tool+
		`,"input":[{"type":"function_call_output","call_id":"`+call+`","output":"42"}]}`)
	if second.Text() != "The tool returned: 42" {
		t.Fatalf("continuation: %v", second.Raw)
	}
	again := gatewaytest.DialResponses(t, base, key).Turn(t, `{"type":"response.create","model":"tools","store":false,"previous_response_id":"`+second.ID()+`","input":"x"}`)
	if again.ErrorCode() != "previous_response_not_found" {
		t.Errorf("a new connection continuing: %v", again.Raw)
	}

	s.Send(t, `{"type":"response.create","model":"slow","max_output_tokens":16,"input":"go"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := s.Conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if turn := s.Read(t); turn.Status() != "incomplete" || len(turn.Types) < 16 {
		t.Errorf("the response under way at SIGTERM: %v", turn.Types)
	}
	if code, _ := s.Closed(t); code != websocket.StatusGoingAway {
		t.Errorf("closed with %v", code)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, out.String())
	}
}

package gcf

import (
	"testing"

	"github.com/fngate/fngate/internal/gatewaytest"
)

// TestWebSocketModeThroughTheFunctionsFramework: the functions framework hands the upgrade
// to the gateway, which serves response.create messages on the connection, one after another.
func TestWebSocketModeThroughTheFunctionsFramework(t *testing.T) {
	s := gatewaytest.DialResponses(t, baseURL, "")
	for _, word := range []string{"first", "second"} {
		turn := s.Turn(t, `{"type":"response.create","model":"mock/echo","store":false,"input":"`+word+`"}`)
		if turn.Status() != "completed" || turn.Text() != word {
			t.Fatalf("%s: %v", word, turn.Raw)
		}
	}
}

// TestWebSocketEndsBeforeTheRequestTimeout: with the function's timeout in
// CLOUD_RUN_TIMEOUT_SECONDS (the framework bounds each request's context by it), a
// connection ends with websocket_connection_limit_reached shortly before the platform would
// cut it, so the client knows to reconnect.
func TestWebSocketEndsBeforeTheRequestTimeout(t *testing.T) {
	t.Setenv("CLOUD_RUN_TIMEOUT_SECONDS", "2")
	s := gatewaytest.DialResponses(t, baseURL, "")
	if turn := s.Turn(t, `{"type":"response.create","model":"mock/echo","input":"hi"}`); turn.Text() != "hi" {
		t.Fatalf("%v", turn.Raw)
	}
	if turn := s.Read(t); turn.ErrorCode() != "websocket_connection_limit_reached" {
		t.Fatalf("%v", turn.Raw)
	}
}

package gatewaytest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Socket is a client connection of the Responses API's WebSocket mode (GET /v1/responses
// upgraded), made with coder/websocket's Dial.
type Socket struct {
	Conn *websocket.Conn
	// Header is the handshake's answer (X-Request-Id names the connection).
	Header http.Header
}

// SocketURL is the WebSocket URL of the Responses door of a server at base (http://...).
func SocketURL(base string) string {
	return "ws" + strings.TrimPrefix(strings.TrimRight(base, "/"), "http") + "/v1/responses"
}

// DialResponses opens a WebSocket on the Responses door of the server at base with the key
// as its bearer token ("" sends none) and the header pairs (name, value, ...); the test fails
// unless the handshake succeeds. The connection closes when the test ends.
func DialResponses(t testing.TB, base, key string, header ...string) *Socket {
	t.Helper()
	s, resp, err := TryDialResponses(base, key, header...)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("WebSocket handshake: %v (status %d)", err, status)
	}
	t.Cleanup(func() { _ = s.Conn.CloseNow() })
	return s
}

// TryDialResponses is DialResponses for a handshake that may be refused: the refusal's
// answer comes back with its body unread.
func TryDialResponses(base, key string, header ...string) (*Socket, *http.Response, error) {
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, SocketURL(base), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, resp, err
	}
	// The gateway bounds what it reads; the test reads whatever it is sent.
	conn.SetReadLimit(-1)
	return &Socket{Conn: conn, Header: resp.Header}, resp, nil
}

// Send writes one text message.
func (s *Socket) Send(t testing.TB, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// SocketTurn is what one response.create got: its events up to the terminal one.
type SocketTurn struct {
	Raw    []string         // the messages as sent
	Events []map[string]any // each decoded
	Types  []string
	// Final is the terminal event's response (response.completed, .incomplete or .failed).
	Final map[string]any
	// Error is the error event that refused the request instead, nil otherwise.
	Error map[string]any
}

// Status is the final response's status, or "error" for a refusal.
func (st SocketTurn) Status() string {
	if st.Error != nil {
		return "error"
	}
	s, _ := st.Final["status"].(string)
	return s
}

// ID is the final response's id.
func (st SocketTurn) ID() string {
	s, _ := st.Final["id"].(string)
	return s
}

// Text joins the output_text deltas.
func (st SocketTurn) Text() string {
	var b strings.Builder
	for _, ev := range st.Events {
		if ev["type"] == "response.output_text.delta" {
			s, _ := ev["delta"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// ErrorCode is the refusal's error.code, "" when there was none.
func (st SocketTurn) ErrorCode() string {
	e, _ := st.Error["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// Turn sends a response.create and reads its events; see Read.
func (s *Socket) Turn(t testing.TB, msg string) SocketTurn {
	t.Helper()
	s.Send(t, msg)
	return s.Read(t)
}

// Read reads the messages of one response: every event up to the terminal one, or the error
// event that refused it. Each message must be a JSON object with a type; a successful
// response's sequence numbers must run without a gap (from 0, unless the caller read the
// first events itself).
func (s *Socket) Read(t testing.TB) SocketTurn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out SocketTurn
	for {
		typ, data, err := s.Conn.Read(ctx)
		if err != nil {
			t.Fatalf("read after %v: %v", out.Types, err)
		}
		if typ != websocket.MessageText {
			t.Fatalf("a binary message after %v", out.Types)
		}
		var ev map[string]any
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("a message that is not JSON: %v\n%s", err, data)
		}
		kind, _ := ev["type"].(string)
		out.Raw = append(out.Raw, string(data))
		out.Events = append(out.Events, ev)
		out.Types = append(out.Types, kind)
		switch kind {
		case "error":
			out.Error = ev
			return out
		case "response.completed", "response.incomplete", "response.failed":
			out.Final, _ = ev["response"].(map[string]any)
			if kind != "response.failed" {
				first, _ := out.Events[0]["sequence_number"].(float64)
				for i, e := range out.Events {
					if n, _ := e["sequence_number"].(float64); int(n) != int(first)+i {
						t.Errorf("event %d (%s) has sequence_number %v after %v", i, out.Types[i], e["sequence_number"], first)
					}
				}
			}
			return out
		case "":
			t.Fatalf("a message without a type: %s", data)
		}
	}
}

// Closed waits for the server to close the connection and returns its close status and
// reason; the test fails if a data message arrives instead.
func (s *Socket) Closed(t testing.TB) (websocket.StatusCode, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, data, err := s.Conn.Read(ctx)
	if err == nil {
		t.Fatalf("a message where the close was expected: %s", data)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("the connection ended without a close frame: %v", err)
	}
	return ce.Code, ce.Reason
}

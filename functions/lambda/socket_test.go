package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/fakeruntime"
)

// TestWebSocketUpgradeGetsHTTPStreaming: Lambda function URLs pass no WebSocket upgrade, so
// the bootstrap leaves the gateway's WebSocket mode off. A handshake that reaches it (with or
// without its hop-by-hop Upgrade headers) gets a 426 in OpenAI's error shape naming HTTP
// streaming, and the function goes on serving.
func TestWebSocketUpgradeGetsHTTPStreaming(t *testing.T) {
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig)
	for _, headers := range []map[string]string{
		{"connection": "Upgrade", "upgrade": "websocket", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13"},
		{"sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13"},
	} {
		_, p, payload := in.invoke(t, fakeruntime.Request{Event: fakeruntime.URLEvent("GET", "/v1/responses", headers, "")})
		var body struct {
			Error struct {
				Code, Message string
			}
		}
		if err := json.Unmarshal([]byte(payload), &body); err != nil {
			t.Fatalf("%v: %s", err, payload)
		}
		if p.StatusCode != 426 || body.Error.Code != "websocket_not_supported" || !strings.Contains(body.Error.Message, `POST /v1/responses with "stream": true`) {
			t.Errorf("%v: %d %s", headers, p.StatusCode, payload)
		}
	}
	_, p, payload := in.invoke(t, fakeruntime.Request{Event: chat("mock/echo", false)})
	if p.StatusCode != 200 {
		t.Errorf("after the refused upgrades: %d %s", p.StatusCode, payload)
	}
}

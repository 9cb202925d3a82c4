package gateway_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/openaifake"
)

// leakyKey is a provider key with characters that URL-encoding and base64 spell differently;
// leakyQueryKey is a credential in the connection's base_url, Azure style.
const (
	leakyKey      = "sk-live/9Zk+Q=leak-0123456789"
	leakyQueryKey = "azure-key-0123456789abcdef"
)

// echoes are the spellings of the gateway's credentials an upstream may send back.
var echoes = map[string]string{
	"raw":             leakyKey,
	"query-escaped":   url.QueryEscape(leakyKey),
	"base64":          base64.StdEncoding.EncodeToString([]byte(leakyKey)),
	"base64 URL-safe": base64.RawURLEncoding.EncodeToString([]byte(leakyKey)),
	"basic auth":      base64.StdEncoding.EncodeToString([]byte("apikey:" + leakyKey)),
	"base_url query":  leakyQueryKey,
}

// TestUpstreamTextsNeverShowTheGatewaysCredentials: an upstream that quotes the gateway's
// credentials back (a 400 body, an error event before or after output), in any spelling and
// wherever a cut falls, reaches neither the client nor the logs with them; the message
// itself still does, redacted.
func TestUpstreamTextsNeverShowTheGatewaysCredentials(t *testing.T) {
	var all []string
	for _, e := range echoes {
		all = append(all, e)
	}
	quoting := "Incorrect API key provided: " + strings.Join(all, " and ")
	body := func(msg string) string {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": "invalid_api_key"}})
		return string(b)
	}
	type leak struct {
		reply    openaifake.Reply
		stream   bool
		redacted bool // the redacted message shows in the answer
	}
	cases := map[string]leak{
		"400 body":                {reply: openaifake.Reply{Status: 400, ErrorBody: body(quoting)}, redacted: true},
		"400 body, stream":        {reply: openaifake.Reply{Status: 400, ErrorBody: body(quoting)}, stream: true, redacted: true},
		"400 body, text":          {reply: openaifake.Reply{Status: 400, ErrorBody: quoting}, redacted: true},
		"error event before text": {reply: openaifake.Reply{ErrorEventAfter: -1, ErrorEventCode: 400, ErrorEventMessage: quoting}, stream: true, redacted: true},
		"error event after text":  {reply: openaifake.Reply{Text: "one two three", ErrorEventAfter: 2, ErrorEventCode: 400, ErrorEventMessage: quoting}, stream: true, redacted: true},
	}
	// The message is cut to 1 KiB; wherever the cut falls in the key, no head of it stays.
	for _, at := range []int{970, 985, 1000, 1015} {
		straddling := strings.Repeat("x", at) + leakyKey + " is not a key"
		cases[fmt.Sprintf("key across the cut at %d", at)] = leak{reply: openaifake.Reply{Status: 400, ErrorBody: body(straddling)}}
		cases[fmt.Sprintf("error event with the key across the cut at %d", at)] = leak{reply: openaifake.Reply{Text: "one two three", ErrorEventAfter: 2, ErrorEventCode: 400, ErrorEventMessage: straddling}, stream: true}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			up := openaifake.New()
			defer up.Close()
			g := newGateway(t, fmt.Sprintf(`
connections:
  up: {kind: openai, api_key: %q, base_url: "%s?api-key=%s"}
models:
  m: {routes: [{connection: up, model: model-a}]}
`, leakyKey, up.BaseURL(), leakyQueryKey))
			up.Enqueue(tc.reply)
			r := g.Chat(t, fmt.Sprintf(`{%s,"stream":%v}`, hello, tc.stream))
			g.logs.AfterRequests(t, 1) // the attempt and request lines are all written
			if !strings.Contains(string(r.Body), "error") {
				t.Fatalf("status %d: want an error answer: %s", r.Status, r.Body)
			}
			if tc.redacted && !strings.Contains(string(r.Body), "[REDACTED]") {
				t.Errorf("the upstream's message did not reach the client, redacted: %s", r.Body)
			}
			for form, echo := range echoes {
				if strings.Contains(string(r.Body), echo) {
					t.Errorf("the client got the %s credential: %s", form, r.Body)
				}
			}
			// A cut made before redaction leaves the head of the key.
			if head := leakyKey[:8]; strings.Contains(string(r.Body), head) || strings.Contains(g.logs.String(), head) {
				t.Errorf("the head of the key survived a cut: %s\nlogs: %s", r.Body, g.logs.String())
			}
			for form, echo := range echoes {
				if strings.Contains(g.logs.String(), echo) {
					t.Errorf("the logs show the %s credential", form)
				}
			}
		})
	}
}

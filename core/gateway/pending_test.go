package gateway_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers/anthropic"
)

// The gateway writes a token without flushing it when the upstream has the next delta in
// hand, and flushes before it waits on the upstream. Events that are buffered but yield no
// delta (a role-only chunk, a ping, a block's start, a comment) are not a next delta: a token
// followed by one of them, then a pause, reaches the client during the pause. Each upstream
// here sends the token and such an event in one write, then waits until the client has the
// token; a gateway that held the token would wait with it, and the upstream gives up
// waiting only after releaseAfter, which the test reports.
func TestTokenIsNotHeldBehindEventsThatYieldNothing(t *testing.T) {
	const chatHead = `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":`
	chatTail := chatHead + `{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	const msgStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	token := func(text string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + text + "\"}}\n\n"
	}
	const msgTail = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	cases := []struct {
		name, kind, path, body string
		first, rest            string // what the upstream writes before and after the pause
	}{
		{"chat, OpenAI wire: a role-only chunk", "openai-compatible", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`,
			chatHead + `{"role":"assistant","content":"tok1"},"finish_reason":null}]}` + "\n\n" + chatHead + `{"role":"assistant"},"finish_reason":null}]}` + "\n\n",
			chatHead + `{"content":"tok2"},"finish_reason":null}]}` + "\n\n" + chatTail},
		{"chat, OpenAI wire: a keep-alive comment", "openai-compatible", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`,
			chatHead + `{"content":"tok1"},"finish_reason":null}]}` + "\n\n: keep-alive\n\n",
			chatHead + `{"content":"tok2"},"finish_reason":null}]}` + "\n\n" + chatTail},
		{"chat, Anthropic route: a ping and a block start", "anthropic", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`,
			msgStart + token("tok1") + "event: ping\ndata: {\"type\": \"ping\"}\n\n" + "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			strings.ReplaceAll(token("tok2"), `"index":0`, `"index":1`) + strings.ReplaceAll(msgTail, `"index":0`, `"index":1`)},
		{"messages door, Anthropic route: a comment", "anthropic", "/v1/messages", `{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"go"}]}`,
			msgStart + token("tok1") + ": keep-alive\n\n",
			token("tok2") + msgTail},
	}
	const releaseAfter = 10 * time.Second
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			heldUntilTimeout := make(chan bool, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(tc.first))
				w.(http.Flusher).Flush()
				select {
				case <-release:
					heldUntilTimeout <- false
				case <-time.After(releaseAfter):
					heldUntilTimeout <- true
				}
				_, _ = w.Write([]byte(tc.rest))
			}))
			defer up.Close()
			base := up.URL + "/v1"
			if tc.kind == "anthropic" {
				base = up.URL
			}
			g := newGateway(t, fmt.Sprintf("connections:\n  up: {kind: %s, api_key: sk-test-not-secret, base_url: %q}\nmodels:\n  m: {routes: [{connection: up, model: up}]}\n", tc.kind, base),
				func(o *gateway.Options) { anthropic.Register(o.Registry) })
			req, _ := http.NewRequest(http.MethodPost, g.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Anthropic-Version", "2023-06-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			var got strings.Builder
			released := false
			for sc.Scan() {
				got.WriteString(sc.Text() + "\n")
				if !released && strings.Contains(sc.Text(), "tok1") {
					released = true
					close(release)
				}
			}
			if !released {
				t.Fatalf("tok1 never arrived:\n%s", got.String())
			}
			if <-heldUntilTimeout {
				t.Errorf("tok1 was held until the upstream went on after %v", releaseAfter)
			}
			if !strings.Contains(got.String(), "tok2") {
				t.Errorf("the stream did not finish:\n%s", got.String())
			}
		})
	}
}

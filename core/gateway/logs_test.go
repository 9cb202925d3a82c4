package gateway_test

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/record"

	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// TestHugeUserLabelKeepsLogLinesUnderTheLimit: a 3 MB user value (the client's to choose)
// makes no log line longer than the platforms take; the fields queries and bills read stay
// whole, the label is cut, and a provider key inside it stays redacted across the cut.
func TestHugeUserLabelKeepsLogLinesUnderTheLimit(t *testing.T) {
	g, a, _ := newPair(t)
	a.Enqueue(openaifake.Reply{Text: "hi", PromptTokens: 3, CompletionTokens: 2})
	user := strings.Repeat("key sk-test-key-aaaaaaaa ", 3<<20/25)
	if r := g.Chat(t, `{`+hello+`,"user":"`+user+`"}`); r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	g.logs.AfterRequests(t, 1)
	for _, line := range strings.Split(strings.TrimSpace(g.logs.String()), "\n") {
		if len(line)+1 > telemetry.MaxLineBytes {
			t.Errorf("a log line of %d bytes, limit %d", len(line)+1, telemetry.MaxLineBytes)
		}
		if strings.Contains(line, "sk-test-key-a") {
			t.Error("a cut log line shows the head of the provider key")
		}
	}
	for _, msg := range []string{record.MsgAttempt, record.MsgRequest} {
		lines := g.logs.Lines(t, msg)
		if len(lines) != 1 {
			t.Fatalf("%d %s lines", len(lines), msg)
		}
		l := lines[0]
		if l["request_id"] == "" || l["model"] != "m" || l["route"] != "a/model-a" || l["cost_usd"] == nil || l["usage"] == nil {
			t.Errorf("%s line lost a field that matters: %v", msg, l)
		}
		labels, _ := l["labels"].(map[string]any)
		if u, _ := labels["user"].(string); !strings.HasPrefix(u, "key [REDACTED] key") || !strings.HasSuffix(u, " bytes cut]") {
			t.Errorf("%s line: labels.user = %.60q…, want its head and a cut marker", msg, u)
		}
	}
	if a := g.logs.Lines(t, record.MsgAttempt)[0]; a["outcome"] != record.OutcomeOK {
		t.Errorf("attempt outcome %v", a["outcome"])
	}
}

// keyedPair is twoUpstreams behind a client key named app.
const keyedPair = "keys: [{name: app, value: gw-key-0123456789}]\n" + twoUpstreams

// TestRefusalsAreLoggedWithKeyAndModel: a request refused before any attempt is logged with
// the key's name and the model it asked for, even when its body did not decode; a request
// without a valid key is logged too, with its status.
func TestRefusalsAreLoggedWithKeyAndModel(t *testing.T) {
	a, b := openaifake.New(), openaifake.New()
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	g := newGateway(t, fmt.Sprintf(keyedPair, a.BaseURL(), b.BaseURL()))
	auth := []string{"Authorization", "Bearer gw-key-0123456789"}
	if r := g.Chat(t, `{"model":"m","max_completion_tokens":5,"messages":[{"role":"wizard","content":"hi"}]}`, auth...); r.Status != 400 {
		t.Fatalf("status %d", r.Status)
	}
	if r := g.Chat(t, `{`+hello+`}`, "Authorization", "Bearer wrong-key-0123456789"); r.Status != 401 {
		t.Fatalf("status %d", r.Status)
	}
	lines := g.logs.AfterRequests(t, 2)
	reqs := gatewaytestLines(lines, record.MsgRequest)
	if len(reqs) != 2 {
		t.Fatalf("request lines: %v", reqs)
	}
	refused, unauth := reqs[0], reqs[1]
	labels, _ := refused["labels"].(map[string]any)
	if refused["model"] != "m" || labels["key"] != "app" || refused["status"] != float64(400) || refused["error_param"] == nil {
		t.Errorf("refused request line: %v", refused)
	}
	if unauth["status"] != float64(401) || unauth["labels"] != nil {
		t.Errorf("unauthenticated request line: %v", unauth)
	}
}

func gatewaytestLines(all []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range all {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// TestTextLogsOneReadableLinePerRequest: logging.format text gives a person one line per
// request with status, door, model, route, attempts, latency, time to first token, tokens,
// cost and key; a failed attempt gets a line of its own, a successful one none.
func TestTextLogsOneReadableLinePerRequest(t *testing.T) {
	a, b := openaifake.New(), openaifake.New()
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	var text gatewaytest.LogBuffer
	g := newGateway(t, fmt.Sprintf(keyedPair, a.BaseURL(), b.BaseURL()), func(o *gateway.Options) {
		o.Logger = telemetry.NewLogger(io.MultiWriter(&text, &suiteLogs), telemetry.FormatText, []string{"gw-key-0123456789"})
	})
	auth := []string{"Authorization", "Bearer gw-key-0123456789"}
	a.Enqueue(openaifake.Reply{Status: 503, ErrorBody: `{"error":{"message":"down for gw-key-0123456789","type":"server_error"}}`})
	b.Enqueue(openaifake.Reply{Text: "from b", PromptTokens: 30, CompletionTokens: 2, CachedTokens: 10})
	if r := g.Chat(t, `{"model":"m","max_completion_tokens":50,"stream":true,"messages":[{"role":"user","content":"hello"}]}`, auth...); r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	if r := g.Chat(t, `{"model":"m","max_completion_tokens":5,"messages":[{"role":"wizard","content":"hi"}]}`, auth...); r.Status != 400 {
		t.Fatalf("status %d", r.Status)
	}
	var lines []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if lines = strings.Split(strings.TrimSpace(text.String()), "\n"); len(lines) >= 3 {
			break
		}
	}
	const clock = `\d\d:\d\d:\d\d\.\d{3} `
	want := []string{
		clock + `ERROR attempt 1 a/model-a failover status=503 [\d.]+m?s class=unavailable error="server_error: down for \[REDACTED\]" id=req_\w+$`,
		clock + `200 chat m route=b/model-b attempts=2 [\d.]+m?s ttft=[\d.]+m?s tokens=30/2 cached=10 cost=\$0\.00008 key=app id=req_\w+$`,
		clock + `400 chat m attempts=0 [\d.]+m?s key=app error=".*role.*\(messages\[0\]\.role\)" id=req_\w+$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), text.String())
	}
	for i, re := range want {
		if !regexp.MustCompile("^" + re).MatchString(lines[i]) {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], re)
		}
	}
}

// TestAttemptLineNamesTheModelThatAnswered: when the upstream answers with another name than
// the route's (a dated snapshot behind an alias), the attempt line says which; streamed and
// not.
func TestAttemptLineNamesTheModelThatAnswered(t *testing.T) {
	a, b := openaifake.New(), openaifake.New()
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	g := newGateway(t, fmt.Sprintf(keyedPair, a.BaseURL(), b.BaseURL()))
	auth := []string{"Authorization", "Bearer gw-key-0123456789"}
	for i, stream := range []string{"false", "true"} {
		a.Enqueue(openaifake.Reply{Text: "hi", Model: "model-a-2025-01-01"})
		if r := g.Chat(t, `{"model":"m","max_completion_tokens":5,"stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`, auth...); r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		lines := gatewaytestLines(g.logs.AfterRequests(t, i+1), record.MsgAttempt)
		if got := lines[len(lines)-1]["response_model"]; got != "model-a-2025-01-01" {
			t.Errorf("stream=%s: attempt line response_model = %v", stream, got)
		}
	}
}

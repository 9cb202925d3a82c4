package gateway_test

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers/openaicompat/openaifake"
	"github.com/fngate/fngate/core/telemetry"
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
	for _, msg := range []string{gateway.MsgAttempt, gateway.MsgRequest} {
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
	if a := g.logs.Lines(t, gateway.MsgAttempt)[0]; a["outcome"] != gateway.OutcomeOK {
		t.Errorf("attempt outcome %v", a["outcome"])
	}
}

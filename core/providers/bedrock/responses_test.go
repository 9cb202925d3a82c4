package bedrock_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/bedrockfake"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// Codex's requests (its default hosted tools off) through the Responses door on Bedrock: on
// a Converse model and on Claude through InvokeModel, each is accepted, reaches the fake as
// a body it validates, and streams to response.completed. Codex's developer messages are its
// instructions, which Converse takes as system. Codex sends no max_output_tokens: on the
// priced claude-codex the model's ceiling bounds the answer.
func TestCodexRecordingsOnBedrock(t *testing.T) {
	h := newHarness(t)
	for _, rec := range gatewaytest.AgentRecordings(t, "codex-*.jsonl") {
		if strings.Contains(rec.File, "default-tools") || strings.Contains(rec.File, "not-hardened") {
			continue // the hosted tools: refused on every route but OpenAI's (core/responses tests)
		}
		for _, tc := range []struct{ model, upstream string }{
			{"nova", "amazon.nova-test-v1:0"},
			{"claude-codex", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		} {
			name := rec.File + ":" + strconv.Itoa(rec.Line) + " on " + tc.model
			h.fake.Script(tc.upstream, bedrockfake.Answer{Blocks: []bedrockfake.Block{{Text: "PONG"}}, Usage: bedrockfake.Tokens(50, 1)})
			var body map[string]any
			if err := json.Unmarshal(rec.Body, &body); err != nil {
				t.Fatal(err)
			}
			body["model"] = tc.model
			raw, _ := json.Marshal(body)
			r := h.srv.Do(t, "POST", "/v1/responses", string(raw))
			if r.Status != 200 || !strings.Contains(string(r.Body), "event: response.completed") || !strings.Contains(string(r.Body), `"delta":"PONG"`) {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
				continue
			}
			sent := string(h.fake.Last().Body)
			if tc.model == "nova" && !strings.Contains(sent, `"system":[{"text":"You are a coding agent running in the Codex CLI`) {
				t.Errorf("%s: Codex's developer message is not Converse's system: %.300s", name, sent)
			}
			if tc.model == "claude-codex" && !strings.Contains(sent, `"max_tokens":4096`) {
				t.Errorf("%s: the model's ceiling is not the maximum: %.300s", name, sent)
			}
		}
	}
}

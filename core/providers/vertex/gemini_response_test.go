package vertex

import (
	"os"
	"path/filepath"
	"testing"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fngate/fngate/core/golden"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// TestGeminiResponseGolden converts each GenerateContentResponse in
// testdata/gemini/response (the REST API's JSON) and compares the chat completion the
// gateway would send with its golden file. Tool call ids come from a counter.
func TestGeminiResponseGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "gemini/response", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "gemini", "response", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var resp aiplatformpb.GenerateContentResponse
			if err := protojson.Unmarshal(raw, &resp); err != nil {
				t.Fatal(err)
			}
			c, err := geminiCompletion(&resp, counter())
			if err != nil {
				t.Fatal(err)
			}
			c.Usage.WithTotal() // as the gateway does before answering
			golden.CheckIndented(t, filepath.Join("testdata", "gemini", "response", name+".golden.json"),
				openai.AppendChatCompletion(nil, "chatcmpl-golden", 1700000000, "gw/gemini", c))
		})
	}
}

// TestGeminiResponseWithoutCandidates: an answer with neither a candidate nor a blocked
// prompt is a failure worth another route, not an empty success.
func TestGeminiResponseWithoutCandidates(t *testing.T) {
	_, err := geminiCompletion(&aiplatformpb.GenerateContentResponse{}, counter())
	pe, ok := err.(*providers.Error)
	if !ok || pe.Class != providers.Unavailable {
		t.Fatalf("got %v", err)
	}
}

// TestFinishReasons: every finish reason Gemini names, with and without function calls.
func TestFinishReasons(t *testing.T) {
	for r, want := range map[aiplatformpb.Candidate_FinishReason]string{
		aiplatformpb.Candidate_FINISH_REASON_UNSPECIFIED: "stop",
		aiplatformpb.Candidate_STOP:                      "stop",
		aiplatformpb.Candidate_MAX_TOKENS:                "length",
		aiplatformpb.Candidate_SAFETY:                    "content_filter",
		aiplatformpb.Candidate_RECITATION:                "content_filter",
		aiplatformpb.Candidate_OTHER:                     "stop",
		aiplatformpb.Candidate_BLOCKLIST:                 "content_filter",
		aiplatformpb.Candidate_PROHIBITED_CONTENT:        "content_filter",
		aiplatformpb.Candidate_SPII:                      "content_filter",
		aiplatformpb.Candidate_MALFORMED_FUNCTION_CALL:   "stop",
		aiplatformpb.Candidate_MODEL_ARMOR:               "content_filter",
		aiplatformpb.Candidate_FinishReason(99):          "stop",
	} {
		if got := finishReason(r, false); got != want {
			t.Errorf("%v: %q, want %q", r, got, want)
		}
		if got := finishReason(r, true); got != "tool_calls" {
			t.Errorf("%v after a call: %q, want tool_calls", r, got)
		}
	}
}

// TestNewCallID: ids look like OpenAI's and do not repeat.
func TestNewCallID(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := newCallID()
		if len(id) != 29 || id[:5] != "call_" || seen[id] {
			t.Fatalf("id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}

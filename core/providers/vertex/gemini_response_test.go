package vertex

import (
	"os"
	"path/filepath"
	"testing"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/messages"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
)

// TestGeminiResponseGolden converts each GenerateContentResponse in
// testdata/gemini/response (the REST API's JSON) and compares the chat completion the
// gateway would send with its golden file. Tool call ids come from a counter (giveIDs).
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
			a, err := geminiAnswer(&resp, false)
			if err != nil {
				t.Fatal(err)
			}
			giveIDs(a)
			a.Usage.WithTotal() // as the gateway does before answering
			golden.CheckIndented(t, filepath.Join("testdata", "gemini", "response", name+".golden.json"),
				openai.AppendChatCompletion(nil, "chatcmpl-golden", 1700000000, "gw/gemini", a))
		})
	}
}

// TestGeminiMessagesResponseGolden converts each GenerateContentResponse in
// testdata/gemini/messages_response for a client that asked for thinking, and compares the
// Messages door's message with its golden file: thoughts are a thinking block, consecutive
// texts one text block, text after calls a block of its own, the cached share apart from
// input_tokens.
func TestGeminiMessagesResponseGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "gemini/messages_response", ".json") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "gemini", "messages_response", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var resp aiplatformpb.GenerateContentResponse
			if err := protojson.Unmarshal(raw, &resp); err != nil {
				t.Fatal(err)
			}
			a, err := geminiAnswer(&resp, true)
			if err != nil {
				t.Fatal(err)
			}
			giveIDs(a)
			a.Usage.WithTotal()
			golden.CheckIndented(t, filepath.Join("testdata", "gemini", "messages_response", name+".golden.json"),
				messages.AppendMessage(nil, "msg_golden", "gw/gemini", a))
		})
	}
}

// TestGeminiResponseWithoutCandidates: an answer with neither a candidate nor a blocked
// prompt is a failure worth another route, not an empty success.
func TestGeminiResponseWithoutCandidates(t *testing.T) {
	_, err := geminiAnswer(&aiplatformpb.GenerateContentResponse{}, false)
	pe, ok := err.(*providers.Error)
	if !ok || pe.Class != providers.Unavailable {
		t.Fatalf("got %v", err)
	}
}

// giveIDs gives the tool calls of an answer ids from a counter, where the gateway would give
// them random ones (v1's FunctionCall has none).
func giveIDs(a *llm.Answer) {
	ids := counter()
	for i := range a.Parts {
		if a.Parts[i].Kind == llm.PartToolUse && a.Parts[i].ID == "" {
			a.Parts[i].ID = ids()
		}
	}
}

// TestStopReasons: every finish reason Gemini names, with and without function calls.
func TestStopReasons(t *testing.T) {
	for r, want := range map[aiplatformpb.Candidate_FinishReason]llm.StopReason{
		aiplatformpb.Candidate_FINISH_REASON_UNSPECIFIED: llm.StopEnd,
		aiplatformpb.Candidate_STOP:                      llm.StopEnd,
		aiplatformpb.Candidate_MAX_TOKENS:                llm.StopMaxTokens,
		aiplatformpb.Candidate_SAFETY:                    llm.StopContentFilter,
		aiplatformpb.Candidate_RECITATION:                llm.StopContentFilter,
		aiplatformpb.Candidate_OTHER:                     llm.StopEnd,
		aiplatformpb.Candidate_BLOCKLIST:                 llm.StopContentFilter,
		aiplatformpb.Candidate_PROHIBITED_CONTENT:        llm.StopContentFilter,
		aiplatformpb.Candidate_SPII:                      llm.StopContentFilter,
		aiplatformpb.Candidate_MALFORMED_FUNCTION_CALL:   llm.StopEnd,
		aiplatformpb.Candidate_MODEL_ARMOR:               llm.StopContentFilter,
		aiplatformpb.Candidate_FinishReason(99):          llm.StopEnd,
	} {
		if got := stopReason(r, false); got != want {
			t.Errorf("%v: %q, want %q", r, got, want)
		}
		if got := stopReason(r, true); got != llm.StopToolUse {
			t.Errorf("%v after a call: %q, want tool_use", r, got)
		}
	}
}

package modelarmor

import (
	"encoding/json"
	"testing"

	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/internal/modelarmorfake"
)

// FuzzJudge: no answer, however shaped, panics the judgement, and a mask always has text.
func FuzzJudge(f *testing.F) {
	for _, name := range []string{"no_match", "rai_match", "sdp_deidentify", "sdp_inspect_match", "partial", "failure"} {
		f.Add(modelarmorfake.Recorded(name).Body)
	}
	f.Add([]byte(`{"sanitizationResult":{"filterMatchState":"MATCH_FOUND","filterResults":{"x":{"y":null}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var resp sanitizeResponse
		if json.Unmarshal(body, &resp) != nil {
			return
		}
		j, err := judge(resp.SanitizationResult)
		if err == nil && j.action == guardrail.Mask && len(j.categories) == 0 {
			t.Fatalf("a mask without categories: %s", body)
		}
	})
}

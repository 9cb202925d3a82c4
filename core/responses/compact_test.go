package responses_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/compaction"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/responses"
	"github.com/fngate/fngate/internal/golden"
)

const testOwner = "app"

func testRing(t *testing.T, id string, fill byte) *compaction.Keyring {
	t.Helper()
	k, err := compaction.New([]compaction.Key{{ID: id, Secret: bytes.Repeat([]byte{fill}, compaction.KeySize)}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// compactAll decodes a compact body and builds its summary request as the door does.
func compactAll(t *testing.T, body []byte, ring *compaction.Keyring) (*responses.Request, *llm.Error) {
	t.Helper()
	r, e := responses.DecodeCompact(body, llm.Limits{})
	if e == nil {
		e = r.Unseal(ring, testOwner)
	}
	if e == nil {
		e = r.Continue(nil)
	}
	if e != nil {
		return nil, e
	}
	r.Compaction()
	return r, nil
}

var randomIDs = regexp.MustCompile(`"(msg|cmp)_[A-Za-z0-9]{48}"`)

// TestCompactGolden decodes each compact request in testdata/compact ("$SEALED" stands for an
// item the gateway sealed) and compares, with its golden file, the request every route but
// the native one is sent (the compaction prompt, the conversation as a transcript), what the
// native route is sent (its fields and input items) and the response.compaction object the
// gateway answers with.
func TestCompactGolden(t *testing.T) {
	ring := testRing(t, "k1", 1)
	for _, name := range golden.Cases(t, "compact", ".json") {
		t.Run(name, func(t *testing.T) {
			body := golden.Read(t, filepath.Join("compact", name+".json"))
			body = bytes.ReplaceAll(body, []byte("$SEALED"), []byte(ring.Seal(testOwner, []byte("The user likes PAPAYA."))))
			r, e := compactAll(t, body, ring)
			if e != nil {
				t.Fatalf("refused: %v", e)
			}
			rs := r.LLM.Responses
			if len(r.LLM.System) != 1 || r.LLM.System[0].Text != responses.CompactionPrompt || !rs.Compact {
				t.Fatalf("system %+v, compact %v", r.LLM.System, rs.Compact)
			}
			var only []string
			for _, o := range rs.Only {
				only = append(only, o.Param+": "+o.Message)
			}
			fields := map[string]json.RawMessage{}
			for _, f := range rs.Fields {
				fields[f.Name] = f.Value
			}
			in := 7
			compacted := r.AppendCompacted(nil, "resp_test", 1700000000, "SEALED", &llm.Usage{InputTokens: &in, OutputTokens: &in})
			compacted = randomIDs.ReplaceAll(compacted, []byte(`"${1}_ID"`))
			v := map[string]any{
				"summary_request": prune(mustGeneric(t, r.LLM.Messages)),
				"native":          map[string]any{"fields": fields, "input": json.RawMessage(rs.Input), "only": only},
				"session":         r.LLM.Session,
				"compacted":       json.RawMessage(compacted),
			}
			// Unescaped, so the transcript's tags read as they are sent.
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			golden.CheckIndented(t, filepath.Join("testdata", "compact", name+".golden.json"), bytes.TrimSpace(b.Bytes()))
		})
	}
}

func mustGeneric(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDecodeCompactRefuses: what OpenAI's compact endpoint refuses is a 400 naming the
// field, and a compaction item that does not open is a 400 naming the item.
func TestDecodeCompactRefuses(t *testing.T) {
	ring := testRing(t, "k1", 1)
	sealed := ring.Seal(testOwner, []byte("summary"))
	item := func(enc string) string {
		return `{"model":"m","input":[{"role":"user","content":"x"},{"type":"compaction","encrypted_content":` + enc + `}]}`
	}
	// One character of the ciphertext changed to another of base64url's alphabet, so the item
	// still decodes and only its authentication can tell (a flipped bit could leave the
	// alphabet, '-' to ',', and be refused as malformed instead).
	flip := []byte(sealed)
	if i := len(flip) - 5; flip[i] == 'A' {
		flip[i] = 'B'
	} else {
		flip[i] = 'A'
	}
	for _, tc := range []struct {
		name, body  string
		ring        *compaction.Keyring
		param, code string
		message     string
	}{
		{"empty", ``, ring, "", "", "empty"},
		{"unknown", `{"model":"m","input":"x","tools":[]}`, ring, "tools", "unknown_parameter", "Unknown parameter: 'tools'."},
		{"stream", `{"model":"m","input":"x","stream":true}`, ring, "stream", "unknown_parameter", ""},
		{"case", `{"Model":"m","input":"x"}`, ring, "Model", "unknown_parameter", "did you mean 'model'"},
		{"no model", `{"input":"x"}`, ring, "model", "missing_required_parameter", ""},
		{"null model", `{"model":null,"input":"x"}`, ring, "model", "missing_required_parameter", ""},
		{"no input", `{"model":"m"}`, ring, "input", "missing_required_parameter", ""},
		{"null input", `{"model":"m","input":null}`, ring, "input", "missing_required_parameter", ""},
		{"input type", `{"model":"m","input":5}`, ring, "input", "invalid_type", ""},
		{"service tier", `{"model":"m","input":"x","service_tier":"turbo"}`, ring, "service_tier", "invalid_value", ""},
		{"instructions type", `{"model":"m","input":"x","instructions":1}`, ring, "instructions", "invalid_type", ""},
		{"no encrypted_content", `{"model":"m","input":[{"type":"compaction","id":"cmp_1"}]}`, ring, "input[0].encrypted_content", "missing_required_parameter", ""},
		{"encrypted_content type", item(`1`), ring, "input[1].encrypted_content", "invalid_type", ""},
		{"compaction key", `{"model":"m","input":[{"type":"compaction","encrypted_content":"x","summary":"y"}]}`, ring, "input[0].summary", "unknown_parameter", ""},
		{"tampered", item(`"` + string(flip) + `"`), ring, "input[1].encrypted_content", "invalid_encrypted_content", "could not be verified"},
		{"another gateway's key", item(`"` + sealed + `"`), testRing(t, "k1", 2), "input[1].encrypted_content", "invalid_encrypted_content", "could not be verified"},
		{"an unknown key id", item(`"` + sealed + `"`), testRing(t, "k2", 1), "input[1].encrypted_content", "invalid_encrypted_content", `the compaction key "k1", which this gateway does not have`},
		{"no keys", item(`"` + sealed + `"`), nil, "input[1].encrypted_content", "invalid_encrypted_content", "no compaction keys (responses.compaction_keys)"},
		{"malformed", item(`"fngate:v1:compaction:k1"`), ring, "input[1].encrypted_content", "invalid_encrypted_content", "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := compactAll(t, []byte(tc.body), tc.ring)
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Status != http.StatusBadRequest || e.Param != tc.param || e.Code != tc.code || !strings.Contains(e.Message, tc.message) {
				t.Errorf("got %d %q %q: %s", e.Status, e.Param, e.Code, e.Message)
			}
		})
	}
}

// TestUnsealOnResponses: a compaction item the gateway sealed, given back in a Responses
// request, reaches every route as the user message of its summary, the native route's raw
// input included (never the ciphertext); one sealed for another key is refused naming it.
func TestUnsealOnResponses(t *testing.T) {
	ring := testRing(t, "k1", 1)
	sealed := ring.Seal(testOwner, []byte("The user likes PAPAYA."))
	body := `{"model":"m","input":[{"role":"user","content":"hi"},{"id":"cmp_1","type":"compaction","encrypted_content":"` + sealed + `"},{"role":"user","content":"What do I like?"}]}`
	r, e := responses.Decode([]byte(body), llm.Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if e := r.Unseal(ring, testOwner); e != nil {
		t.Fatal(e)
	}
	if e := r.Continue(nil); e != nil {
		t.Fatal(e)
	}
	want := responses.SummaryPrefix + "The user likes PAPAYA."
	m := r.LLM.Messages
	if len(m) != 3 || m[1].Role != llm.RoleUser || m[1].Text() != want || len(r.LLM.Responses.Only) != 0 {
		t.Fatalf("messages %+v, only %v", m, r.LLM.Responses.Only)
	}
	if in := string(r.LLM.Responses.Input); strings.Contains(in, compaction.Prefix) || !strings.Contains(in, "PAPAYA") ||
		strings.Contains(string(r.Items[1]), compaction.Prefix) {
		t.Errorf("the native input still holds the ciphertext: %s", in)
	}

	r, _ = responses.Decode([]byte(body), llm.Limits{})
	if e := r.Unseal(ring, "another-app"); e == nil || e.Param != "input[1].encrypted_content" {
		t.Errorf("another key's item: %v", e)
	}
	// Not unsealed (a door that forgot), the item never reaches a route.
	r, _ = responses.Decode([]byte(body), llm.Limits{})
	if e := r.Continue(nil); e == nil || e.Param != "input[1]" {
		t.Errorf("an unopened item: %v", e)
	}
}

// TestOpenAICompactionItemIsTheNativeRoutes: an item OpenAI sealed passes verbatim to the
// native route and is every other route's refusal, naming it.
func TestOpenAICompactionItemIsTheNativeRoutes(t *testing.T) {
	r, e := decodeAll(t, []byte(`{"model":"m","input":[{"role":"user","content":"hi"},{"type":"compaction","encrypted_content":"gAAAAABsealed"}]}`))
	if e != nil {
		t.Fatal(e)
	}
	ref := r.LLM.Responses.Refusal()
	if ref == nil || ref.Param != "input[1]" || !strings.Contains(ref.Message, "compaction item OpenAI sealed") ||
		!strings.Contains(string(r.LLM.Responses.Input), "gAAAAABsealed") {
		t.Fatalf("refusal %v, input %s", ref, r.LLM.Responses.Input)
	}
}

// TestCompactionPromptIsDocumented: docs/compaction.md quotes the prompt every translated
// route is sent, and the words a summary is given back with, as the code has them.
func TestCompactionPromptIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "compaction.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"CompactionPrompt": responses.CompactionPrompt, "SummaryPrefix": strings.TrimSpace(responses.SummaryPrefix)} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/compaction.md does not quote responses.%s verbatim", name)
		}
	}
}

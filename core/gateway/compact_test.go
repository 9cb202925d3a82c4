package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fngate/fngate/core/compaction"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers/anthropic"
	"github.com/fngate/fngate/core/record"

	fresponses "github.com/fngate/fngate/core/responses"
	"github.com/fngate/fngate/internal/anthropicfake"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// The compaction keys of the tests: the current one seals, the older one only opens, and a
// third belongs to another deployment.
const (
	compactKeyNew   = "BoqhgsPTe8+Glir2YW2BAiMMAUmj+4AfazRp/c/6bMM="
	compactKeyOld   = "T9pXOhzJDeLdSULqVKh9PiXxi7yMA+bMw5d+ReohMxU="
	compactKeyOther = "7rHyJzSLEONiUmJ8vkEF3qKLFib6pomD5p1ky0Pb8v4="

	compactAppKey   = "sk-gw-compact-app-0123456789"
	compactOtherKey = "sk-gw-compact-other-0123456789"
)

// compactFakes are the upstreams of compactConfig: an OpenAI that serves /responses/compact,
// a vLLM server (OpenAI's wire, no Responses API) and Anthropic, each answering like a model.
type compactFakes struct {
	openai, vllm *openaifake.Server
	claude       *anthropicfake.Server
}

func newCompactFakes(t *testing.T) *compactFakes {
	f := &compactFakes{openai: openaifake.New(), vllm: openaifake.New(), claude: anthropicfake.New()}
	for _, s := range []*openaifake.Server{f.openai, f.vllm} {
		s.Script = openaifake.Model
		t.Cleanup(s.Close)
	}
	f.claude.Script = anthropicfake.Model
	t.Cleanup(f.claude.Close)
	return f
}

// compactConfig serves one model per kind of route, models that mix them, and the compaction
// keys keys (a YAML list; "" for none).
func (f *compactFakes) config(keys string) string {
	y := `
keys:
  - {name: app, value: ` + compactAppKey + `}
  - {name: other, value: ` + compactOtherKey + `}
connections:
  mock: {kind: mock}
  oai: {kind: openai, api_key: sk-up-compact-0123456789, base_url: "` + f.openai.BaseURL() + `"}
  vllm: {kind: vllm, base_url: "` + f.vllm.BaseURL() + `"}
  claude: {kind: anthropic, api_key: ` + anthropicfake.APIKey + `, base_url: "` + f.claude.URL + `"}
models:
  mock-echo: {routes: [{connection: mock, model: echo}]}
  openai: {routes: [{connection: oai, model: gpt-up}]}
  vllm: {routes: [{connection: vllm, model: served-model}]}
  claude: {routes: [{connection: claude, model: claude-sonnet-4-5}]}
  openai-then-mock: {routes: [{connection: oai, model: gpt-up}, {connection: mock, model: echo}]}
  mock-then-openai: {routes: [{connection: mock, model: echo}, {connection: oai, model: gpt-up}]}
  failover: {routes: [{connection: mock, model: "error:503"}, {connection: mock, model: echo}]}
  priced-unbounded:
    price: {input_per_mtok: 1, output_per_mtok: 2}
    routes: [{connection: vllm, model: served-model}]
  priced:
    price: {input_per_mtok: 1, output_per_mtok: 2}
    max_output_tokens: 300
    routes: [{connection: mock, model: echo}]
`
	if keys != "" {
		y += "responses: {compaction_keys: " + keys + "}\n"
	}
	return y
}

// rotatedKeys: the new key seals, the old one still opens.
const rotatedKeys = `[{id: k2026, key: "` + compactKeyNew + `"}, {id: k2025, key: "` + compactKeyOld + `"}]`

func (f *compactFakes) gateway(t *testing.T, keys string, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	return newGateway(t, f.config(keys), append([]func(*gateway.Options){withStore, func(o *gateway.Options) { anthropic.Register(o.Registry) }}, opts...)...)
}

func post(t *testing.T, g *testGateway, path, key, body string) *gatewaytest.Response {
	t.Helper()
	return g.Do(t, http.MethodPost, path, body, "Authorization", "Bearer "+key)
}

// conversationToCompact holds what a summary must keep: PAPAYA is said only in the
// assistant's answer and a tool result, which the compacted output leaves out.
const conversationToCompact = `[
  {"role": "user", "content": "Remember my code word."},
  {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{\"what\":\"code word\"}"},
  {"type": "function_call_output", "call_id": "call_1", "output": "the code word is PAPAYA"},
  {"role": "assistant", "content": "Noted: your code word is PAPAYA."},
  {"role": "user", "content": [{"type": "input_text", "text": "Thanks."}]}
]`

// compacted is a response.compaction object as the tests read it.
type compacted struct {
	ID     string            `json:"id"`
	Object string            `json:"object"`
	Output []json.RawMessage `json:"output"`
	Usage  map[string]any    `json:"usage"`
}

func readCompacted(t *testing.T, r *gatewaytest.Response) compacted {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("compact: %d %s", r.Status, r.Body)
	}
	var c compacted
	if err := json.Unmarshal(r.Body, &c); err != nil || c.Object != "response.compaction" || !strings.HasPrefix(c.ID, "resp_") || len(c.Output) == 0 {
		t.Fatalf("not a response.compaction object (%v): %s", err, r.Body)
	}
	return c
}

// outputItem reads one output item's type and encrypted_content.
func outputItem(t *testing.T, raw json.RawMessage) (typ, role, encrypted string) {
	t.Helper()
	var v struct {
		Type             string `json:"type"`
		Role             string `json:"role"`
		EncryptedContent string `json:"encrypted_content"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.Type, v.Role, v.EncryptedContent
}

// continueWith is a Responses request whose input is the compacted output and then one more
// user message.
func continueWith(model string, output []json.RawMessage, next string) string {
	in, _ := json.Marshal(append(append([]json.RawMessage(nil), output...), json.RawMessage(`{"role":"user","content":`+mustQuote(next)+`}`)))
	return `{"model":"` + model + `","store":false,"input":` + string(in) + `}`
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCompactOnTranslatedRoutes: on the mock, an OpenAI-wire server and Anthropic, the
// gateway asks the route's model for a summary with the compaction prompt and answers what
// OpenAI's endpoint does (the user messages, then one compaction item) with the summary
// sealed under the first key; given back in /v1/responses the item reaches the route as the
// summary's text, never as the ciphertext.
func TestCompactOnTranslatedRoutes(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, rotatedKeys)
	for _, tc := range []struct {
		model string
		// upstream returns the text of the last request the route's upstream got, "" for the
		// mock (whose echo answers show what it was sent).
		upstream func() string
	}{
		{"mock-echo", nil},
		{"vllm", func() string { rs := f.vllm.Requests(); return string(rs[len(rs)-1].Raw) }},
		{"claude", func() string { return string(f.claude.Last().Body) }},
	} {
		t.Run(tc.model, func(t *testing.T) {
			c := readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"`+tc.model+`","instructions":"Be terse.","input":`+conversationToCompact+`}`))
			if len(c.Output) != 3 {
				t.Fatalf("output %s, want the two user messages and the compaction item", c.Output)
			}
			for i, want := range []string{"Remember my code word.", "Thanks."} {
				if typ, role, _ := outputItem(t, c.Output[i]); typ != "message" || role != "user" || !strings.Contains(string(c.Output[i]), want) {
					t.Errorf("output[%d] = %s", i, c.Output[i])
				}
			}
			typ, _, sealed := outputItem(t, c.Output[2])
			if typ != "compaction" || !strings.HasPrefix(sealed, compaction.Prefix+"k2026:") || strings.Contains(string(c.Output[2]), "PAPAYA") {
				t.Fatalf("compaction item %s", c.Output[2])
			}
			if c.Usage["input_tokens"] == nil || c.Usage["output_tokens"] == nil {
				t.Errorf("usage %v", c.Usage)
			}
			if tc.upstream != nil {
				sent := tc.upstream()
				for _, want := range []string{jsonText(fresponses.CompactionPrompt[:60]), "<conversation>", "PAPAYA", "Be terse."} {
					if !strings.Contains(sent, want) {
						t.Errorf("the summary request lacks %q: %s", want, sent)
					}
				}
			}

			r := post(t, g, "/v1/responses", compactAppKey, continueWith(tc.model, c.Output, "What is my code word?"))
			if r.Status != http.StatusOK {
				t.Fatalf("continuing: %d %s", r.Status, r.Body)
			}
			if tc.upstream != nil {
				sent := tc.upstream()
				if !strings.Contains(sent, jsonText(fresponses.SummaryPrefix)) || !strings.Contains(sent, "PAPAYA") || strings.Contains(sent, compaction.Prefix) {
					t.Errorf("the route did not get the summary's text: %s", sent)
				}
				return
			}
			// The mock echoes the last user message: with the compacted output alone, that is
			// the opened summary, which holds the transcript the mock echoed when compacting.
			r = post(t, g, "/v1/responses", compactAppKey, `{"model":"mock-echo","store":false,"input":`+jsonArray(c.Output)+`}`)
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "Summary of the earlier conversation") || !strings.Contains(string(r.Body), "PAPAYA") {
				t.Errorf("the mock did not see the summary: %d %s", r.Status, r.Body)
			}
		})
	}
}

// jsonText is s as it appears inside a JSON string (the upstream bodies are JSON).
func jsonText(s string) string {
	q := mustQuote(s)
	return q[1 : len(q)-1]
}

func jsonArray(items []json.RawMessage) string {
	b, _ := json.Marshal(items)
	return string(b)
}

// TestCompactPassesThroughToOpenAI: on an openai route the request goes to the upstream's own
// /responses/compact (its input items and fields as sent, the route's model), and its answer
// comes back with the gateway's id; OpenAI's compaction item passes untouched.
func TestCompactPassesThroughToOpenAI(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, "") // no keys: OpenAI's routes do not need any
	c := readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey,
		`{"model":"openai","input":`+conversationToCompact+`,"instructions":"Be terse.","prompt_cache_key":"s-1","service_tier":"flex"}`))
	if c.ID == "resp_fake_compact" {
		t.Errorf("the upstream's id reached the client")
	}
	if typ, _, sealed := outputItem(t, c.Output[len(c.Output)-1]); typ != "compaction" || !strings.HasPrefix(sealed, openaifake.CompactToken) {
		t.Errorf("OpenAI's compaction item was not passed through: %s", c.Output[len(c.Output)-1])
	}
	rs := f.openai.Requests()
	got := rs[len(rs)-1]
	if got.Path != "/v1/responses/compact" || got.Body["model"] != "gpt-up" || got.Body["instructions"] != "Be terse." ||
		got.Body["prompt_cache_key"] != "s-1" || got.Body["service_tier"] != "flex" || len(got.Body["input"].([]any)) != 5 {
		t.Errorf("the upstream got %s %s", got.Path, got.Raw)
	}
	for _, k := range []string{"store", "stream", "max_output_tokens", "previous_response_id"} {
		if _, ok := got.Body[k]; ok {
			t.Errorf("the upstream got %s, which the compact endpoint does not take", k)
		}
	}
	// The OpenAI item goes back to OpenAI: continuing on the openai route passes it on.
	r := post(t, g, "/v1/responses", compactAppKey, continueWith("openai", c.Output, "and now?"))
	if r.Status != http.StatusOK || !strings.Contains(string(f.openai.Requests()[len(f.openai.Requests())-1].Raw), openaifake.CompactToken) {
		t.Errorf("continuing on OpenAI: %d %s", r.Status, r.Body)
	}
	lines := g.logs.AfterRequests(t, 2)
	var found bool
	for _, l := range lines {
		if l["msg"] == record.MsgRequest && l["endpoint"] == "compact" {
			found = l["status"] == float64(200) && l["route"] == "oai/gpt-up" && l["model"] == "openai"
		}
	}
	if !found {
		t.Errorf("no compact request line for the pass-through: %v", lines)
	}
}

// TestCompactionItemsPlanTheRoute: an item OpenAI sealed can only go to openai routes (the
// others refuse it, so a mixed model plans around them, and a model without one answers 400
// naming the item); an item the gateway sealed is opened before any route, OpenAI's
// included, which gets the summary's text.
func TestCompactionItemsPlanTheRoute(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, rotatedKeys)
	openaiItem := `{"id":"cmp_o","type":"compaction","encrypted_content":"gAAAAABopenaisealed"}`
	in := `[{"role":"user","content":"hi"},` + openaiItem + `,{"role":"user","content":"go on"}]`

	r := post(t, g, "/v1/responses", compactAppKey, `{"model":"mock-then-openai","store":false,"input":`+in+`}`)
	if r.Status != http.StatusOK || r.Header.Get(gateway.HeaderRoute) != "oai/gpt-up" {
		t.Fatalf("mixed model: %d route %q %s", r.Status, r.Header.Get(gateway.HeaderRoute), r.Body)
	}
	r = post(t, g, "/v1/responses", compactAppKey, `{"model":"claude","input":`+in+`}`)
	if e := r.ErrorObject(t); r.Status != http.StatusBadRequest || e["param"] != "input[1]" || !strings.Contains(e["message"].(string), "compaction item OpenAI sealed") {
		t.Fatalf("no openai route: %d %s", r.Status, r.Body)
	}
	// So on the compact endpoint.
	r = post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"mock-echo","input":`+in+`}`)
	if e := r.ErrorObject(t); r.Status != http.StatusBadRequest || e["param"] != "input[1]" {
		t.Fatalf("compacting an OpenAI item on the mock: %d %s", r.Status, r.Body)
	}

	c := readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"mock-echo","input":`+conversationToCompact+`}`))
	for _, model := range []string{"openai", "openai-then-mock"} {
		r = post(t, g, "/v1/responses", compactAppKey, continueWith(model, c.Output, "What is my code word?"))
		sent := string(f.openai.Requests()[len(f.openai.Requests())-1].Raw)
		if r.Status != http.StatusOK || r.Header.Get(gateway.HeaderRoute) != "oai/gpt-up" || strings.Contains(sent, compaction.Prefix) ||
			!strings.Contains(sent, jsonText(fresponses.SummaryPrefix)) || !strings.Contains(sent, "PAPAYA") {
			t.Errorf("%s: %d route %q; OpenAI got %s", model, r.Status, r.Header.Get(gateway.HeaderRoute), sent)
		}
	}
}

// TestCompactionItemRefusals: an item altered, sealed for another key, by another gateway
// or under a retired key, and any gateway item where no key is configured, is a 400 naming
// the item; an item sealed under an older key that is still configured opens.
func TestCompactionItemRefusals(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, rotatedKeys)
	older := f.gateway(t, `[{id: k2025, key: "`+compactKeyOld+`"}]`)
	elsewhere := f.gateway(t, `[{id: k2026, key: "`+compactKeyOther+`"}]`)
	none := f.gateway(t, "")

	c := readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"mock-echo","input":`+conversationToCompact+`}`))
	_, _, sealed := outputItem(t, c.Output[2])
	tampered := []byte(sealed)
	if tampered[len(tampered)-10] != 'A' { // another base64 character: the text still decodes
		tampered[len(tampered)-10] = 'A'
	} else {
		tampered[len(tampered)-10] = 'B'
	}
	byOlder := readCompacted(t, post(t, older, "/v1/responses/compact", compactAppKey, `{"model":"mock-echo","input":`+conversationToCompact+`}`))

	withItem := func(enc string) string {
		return `{"model":"mock-echo","store":false,"input":[{"role":"user","content":"hi"},{"type":"compaction","encrypted_content":` + mustQuote(enc) + `},{"role":"user","content":"more"}]}`
	}
	for _, tc := range []struct {
		name, path string
		g          *testGateway
		key, body  string
		why        string // "" when it is served
	}{
		{"as sealed", "/v1/responses", g, compactAppKey, withItem(sealed), ""},
		{"sealed under the older key", "/v1/responses", g, compactAppKey, continueWith("mock-echo", byOlder.Output, "x"), ""},
		{"compacted again", "/v1/responses/compact", g, compactAppKey, strings.Replace(withItem(sealed), `,"store":false`, "", 1), ""},
		{"altered", "/v1/responses", g, compactAppKey, withItem(string(tampered)), "could not be verified"},
		{"altered, compacting", "/v1/responses/compact", g, compactAppKey, strings.Replace(withItem(string(tampered)), `,"store":false`, "", 1), "could not be verified"},
		{"another key's", "/v1/responses", g, compactOtherKey, withItem(sealed), "sealed for another API key"},
		{"another gateway's key of the same id", "/v1/responses", elsewhere, compactAppKey, withItem(sealed), "could not be verified"},
		{"a retired key", "/v1/responses", older, compactAppKey, withItem(sealed), `compaction key "k2026", which this gateway does not have`},
		{"no keys", "/v1/responses", none, compactAppKey, withItem(sealed), "has no compaction keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, tc.g, tc.path, tc.key, tc.body)
			if tc.why == "" {
				if r.Status != http.StatusOK {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				return
			}
			e := r.ErrorObject(t)
			if r.Status != http.StatusBadRequest || e["param"] != "input[1].encrypted_content" || e["code"] != "invalid_encrypted_content" ||
				!strings.Contains(e["message"].(string), tc.why) {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			// The instance goes on serving.
			if r := post(t, tc.g, "/v1/responses", compactAppKey, `{"model":"mock-echo","input":"still there?"}`); r.Status != http.StatusOK {
				t.Fatalf("after the refusal: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestCompactRefusals: the compact body is read as strictly as the Responses door's, a
// translated route without compaction keys refuses to compact (an openai route of the same
// model still serves), and a summary is bounded on every model, a priced one without a
// ceiling of its own included.
func TestCompactRefusals(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, rotatedKeys)
	none := f.gateway(t, "")
	for _, tc := range []struct {
		name        string
		g           *testGateway
		body        string
		status      int
		param, code string
		why         string
	}{
		{"an unknown field", g, `{"model":"mock-echo","input":"x","stream":true}`, 400, "stream", "unknown_parameter", "Unknown parameter: 'stream'."},
		{"a field of /v1/responses", g, `{"model":"mock-echo","input":"x","tools":[]}`, 400, "tools", "unknown_parameter", ""},
		{"no model", g, `{"input":"x"}`, 400, "model", "missing_required_parameter", ""},
		{"a null model", g, `{"model":null,"input":"x"}`, 400, "model", "missing_required_parameter", ""},
		{"no input", g, `{"model":"mock-echo"}`, 400, "input", "missing_required_parameter", ""},
		{"an unknown model", g, `{"model":"nope","input":"x"}`, 404, "model", "model_not_found", ""},
		{"no keys", none, `{"model":"mock-echo","input":"x"}`, 400, "", "compaction_unavailable", "responses.compaction_keys"},
		{"no keys, every route", none, `{"model":"claude","input":"x"}`, 400, "", "compaction_unavailable", ""},
		{"a previous response the store lacks", g, `{"model":"mock-echo","previous_response_id":"resp_nope"}`, 400, "previous_response_id", "previous_response_not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, tc.g, "/v1/responses/compact", compactAppKey, tc.body)
			e := r.ErrorObject(t)
			if r.Status != tc.status || e["param"] != nilIfEmpty(tc.param) || e["code"] != nilIfEmpty(tc.code) || !strings.Contains(e["message"].(string), tc.why) {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		})
	}
	t.Run("no keys, a model with an openai route", func(t *testing.T) {
		r := post(t, none, "/v1/responses/compact", compactAppKey, `{"model":"mock-then-openai","input":"x"}`)
		if r.Status != http.StatusOK || r.Header.Get(gateway.HeaderRoute) != "oai/gpt-up" {
			t.Fatalf("%d %q %s", r.Status, r.Header.Get(gateway.HeaderRoute), r.Body)
		}
	})
	t.Run("a priced model without a ceiling compacts within the summary's bound", func(t *testing.T) {
		before := len(f.vllm.Requests())
		c := readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"priced-unbounded","input":`+conversationToCompact+`}`))
		if len(c.Output) == 0 {
			t.Fatalf("no output: %+v", c)
		}
		reqs := f.vllm.Requests()[before:]
		if len(reqs) != 1 {
			t.Fatalf("%d upstream requests", len(reqs))
		}
		if got := reqs[0].Body["max_tokens"]; got != float64(fresponses.CompactionMaxTokens) {
			t.Fatalf("the summary was asked with max_tokens %v, want %d: %s", got, fresponses.CompactionMaxTokens, reqs[0].Raw)
		}
	})
	t.Run("a priced model compacts within its ceiling", func(t *testing.T) {
		c := readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"priced","input":`+conversationToCompact+`}`))
		if out, _ := c.Usage["output_tokens"].(float64); out == 0 || out > 300 {
			t.Fatalf("usage %v", c.Usage)
		}
		var cost float64
		for _, l := range g.logs.AfterRequests(t, 1) {
			if l["msg"] == record.MsgRequest && l["endpoint"] == "compact" && l["model"] == "priced" {
				cost, _ = l["cost_usd"].(float64)
			}
		}
		if cost <= 0 {
			t.Errorf("the compaction was not charged: %s", g.logs.String())
		}
	})
	t.Run("GET", func(t *testing.T) {
		r := g.Do(t, http.MethodGet, "/v1/responses/compact", "", "Authorization", "Bearer "+compactAppKey)
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
			t.Fatalf("%d allow %q %s", r.Status, r.Header.Get("Allow"), r.Body)
		}
	})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// TestCompactFailsOverBeforeOutput: a route that fails before answering hands the compaction
// to the next, from one translated route to another and from OpenAI's pass-through to the
// gateway's own compaction; each attempt is logged.
func TestCompactFailsOverBeforeOutput(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, rotatedKeys)
	readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"failover","input":"hello"}`))
	f.openai.Script = nil
	f.openai.Enqueue(openaifake.Reply{Status: 503})
	r := post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"openai-then-mock","input":"hello"}`)
	c := readCompacted(t, r)
	if _, _, sealed := outputItem(t, c.Output[len(c.Output)-1]); !compaction.Sealed(sealed) || r.Header.Get(gateway.HeaderAttempts) != "2" {
		t.Fatalf("attempts %s, item %s", r.Header.Get(gateway.HeaderAttempts), c.Output[len(c.Output)-1])
	}
	var outcomes []string
	for _, a := range g.logs.Attempts(t, 2) {
		if a["endpoint"] == "compact" {
			outcomes = append(outcomes, a["route"].(string)+" "+a["outcome"].(string))
		}
	}
	if strings.Join(outcomes, ", ") != "mock/error:503 failover, mock/echo ok, oai/gpt-up failover, mock/echo ok" {
		t.Errorf("attempts %v", outcomes)
	}
}

// TestCompactContinuesAStoredResponse: previous_response_id gives the conversation to compact
// from the response store, under the key that made it.
func TestCompactContinuesAStoredResponse(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, rotatedKeys)
	r := post(t, g, "/v1/responses", compactAppKey, `{"model":"mock-echo","input":"my code word is PAPAYA"}`)
	if r.Status != http.StatusOK {
		t.Fatal(r.Status, string(r.Body))
	}
	id := r.JSON(t)["id"].(string)
	c := readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"mock-echo","previous_response_id":"`+id+`","input":"and then?"}`))
	if len(c.Output) != 3 || !strings.Contains(string(c.Output[0]), "PAPAYA") {
		t.Fatalf("output %s", c.Output)
	}
	if r := post(t, g, "/v1/responses/compact", compactOtherKey, `{"model":"mock-echo","previous_response_id":"`+id+`"}`); r.Status != http.StatusBadRequest {
		t.Errorf("another key continued the response: %d %s", r.Status, r.Body)
	}
}

// TestCompactWithTheOpenAIGoSDK: openai-go's Responses.Compact reads the gateway's answer,
// and its output items go back into Responses.New.
func TestCompactWithTheOpenAIGoSDK(t *testing.T) {
	f := newCompactFakes(t)
	g := f.gateway(t, rotatedKeys)
	client := g.OpenAI(option.WithAPIKey(compactAppKey))
	ctx := context.Background()
	c, err := client.Responses.Compact(ctx, responses.ResponseCompactParams{
		Model: "claude",
		Input: responses.ResponseCompactParamsInputUnion{OfString: oai.String("my code word is PAPAYA")},
	})
	if err != nil {
		t.Fatal(err)
	}
	last := c.Output[len(c.Output)-1]
	if last.Type != "compaction" || !compaction.Sealed(last.EncryptedContent) {
		t.Fatalf("output %+v", c.Output)
	}
	// The SDK has no input param for an output item: they go back as they came.
	var in []json.RawMessage
	for _, o := range c.Output {
		in = append(in, json.RawMessage(o.RawJSON()))
	}
	res, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "claude", Store: oai.Bool(false)}, option.WithJSONSet("input", in))
	if err != nil {
		t.Fatal(err)
	}
	if sent := string(f.claude.Last().Body); !strings.Contains(sent, "PAPAYA") || strings.Contains(sent, compaction.Prefix) || res.OutputText() == "" {
		t.Errorf("Anthropic got %s", sent)
	}
}

// recordingTracer keeps the endpoint of each traced request and how it ended.
type recordingTracer struct {
	mu   sync.Mutex
	seen []string
}

func (t *recordingTracer) Request(_ *http.Request, endpoint string) record.RequestTrace {
	return &recordedRequest{t: t, endpoint: endpoint}
}

func (t *recordingTracer) Transport(next http.RoundTripper) http.RoundTripper { return next }

type recordedRequest struct {
	t        *recordingTracer
	endpoint string
	attempts int
}

func (r *recordedRequest) Decoded(*llm.Request) {}

func (r *recordedRequest) Attempt(ctx context.Context, _ *record.Attempt) (context.Context, record.AttemptTrace) {
	r.attempts++
	return ctx, noAttemptTrace{}
}

func (r *recordedRequest) TraceID() string { return "" }

func (r *recordedRequest) End(rec *record.Request) {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	r.t.seen = append(r.t.seen, rec.Endpoint+" "+rec.Model+" "+http.StatusText(rec.Status)+" attempts="+strconv.Itoa(r.attempts))
}

type noAttemptTrace struct{}

func (noAttemptTrace) Answer(*llm.Answer)  {}
func (noAttemptTrace) Delta(*llm.Delta)    {}
func (noAttemptTrace) End(*record.Attempt) {}

// TestCompactIsTracedAndLogged: the compaction is one traced request with its attempt, and
// one request line and one attempt line under the endpoint compact, its usage and route.
func TestCompactIsTracedAndLogged(t *testing.T) {
	f := newCompactFakes(t)
	tr := &recordingTracer{}
	g := f.gateway(t, rotatedKeys, func(o *gateway.Options) { o.Tracer = tr })
	readCompacted(t, post(t, g, "/v1/responses/compact", compactAppKey, `{"model":"mock-echo","input":"hello"}`))
	lines := g.logs.AfterRequests(t, 1)
	var req, att map[string]any
	for _, l := range lines {
		switch l["msg"] {
		case record.MsgRequest:
			req = l
		case record.MsgAttempt:
			att = l
		}
	}
	if req == nil || req["endpoint"] != "compact" || req["status"] != float64(200) || req["route"] != "mock/echo" || req["usage"] == nil {
		t.Errorf("request line %v", req)
	}
	if att == nil || att["endpoint"] != "compact" || att["outcome"] != "ok" {
		t.Errorf("attempt line %v", att)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if strings.Join(tr.seen, "; ") != "compact mock-echo OK attempts=1" {
		t.Errorf("traces %v", tr.seen)
	}
}

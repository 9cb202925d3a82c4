package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/openaifake"
)

// chatOnly is a provider without the legacy completions endpoint, like Anthropic or Bedrock.
type chatOnly struct{ providers.Provider }

func (chatOnly) Name() string { return "ChatOnlyCloud" }

// Check makes the mock a provider without legacy completions, as Anthropic and Bedrock are.
func (c chatOnly) Check(req *llm.Request, t providers.Target) *llm.Error {
	if req.Op == llm.OpCompletion {
		return llm.UnsupportedEndpoint(req.Model, c.Name())
	}
	return c.Provider.Check(req, t)
}

func withChatOnlyKind(o *gateway.Options) {
	o.Registry["chatonly"] = func(c *config.Connection, env providers.Env) (providers.Provider, error) {
		p, err := mock.New(c, env)
		return chatOnly{p}, err
	}
}

func TestCompletions(t *testing.T) {
	up := openaifake.New()
	defer up.Close()
	g := newGateway(t, fmt.Sprintf(`
connections:
  up: {kind: vllm, base_url: %s}
  chat: {kind: chatonly}
models:
  text: {routes: [{connection: up, model: base-model}]}
  chat-only: {routes: [{connection: chat, model: echo}]}
  mixed: {routes: [{connection: chat, model: echo}, {connection: up, model: base-model}]}
`, up.BaseURL()), withChatOnlyKind)

	up.Enqueue(openaifake.Reply{Text: "once upon a time", PromptTokens: 3, CompletionTokens: 4})
	r := g.Do(t, http.MethodPost, "/v1/completions", `{"model":"text","prompt":"Tell me","max_tokens":20}`)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	ch := m["choices"].([]any)[0].(map[string]any)
	if m["object"] != "text_completion" || ch["text"] != "once upon a time" || m["model"] != "text" || !strings.HasPrefix(m["id"].(string), "cmpl-") {
		t.Errorf("completion %s", r.Body)
	}
	sent := up.Requests()[0]
	if sent.Path != "/v1/completions" || sent.Body["prompt"] != "Tell me" || sent.Body["max_tokens"] != float64(20) || sent.Body["model"] != "base-model" {
		t.Errorf("upstream request %s %s", sent.Path, sent.Raw)
	}

	up.Enqueue(openaifake.Reply{Text: "a b c"})
	r = g.Do(t, http.MethodPost, "/v1/completions", `{"model":"text","prompt":"x","stream":true,"stream_options":{"include_usage":true}}`)
	events := gatewaytest.SSEData(t, r.Body)
	var text string
	for _, ev := range events[:len(events)-2] {
		c := chunkJSON(t, ev)
		if c["object"] != "text_completion" {
			t.Errorf("stream chunk object %v", c["object"])
		}
		text += c["choices"].([]any)[0].(map[string]any)["text"].(string)
	}
	if text != "a b c" || events[len(events)-1] != "[DONE]" {
		t.Errorf("streamed %q, events %v", text, events)
	}

	// The mixed model skips its chat-only route for completions.
	up.Enqueue(openaifake.Reply{Text: "fine"})
	if r := g.Do(t, http.MethodPost, "/v1/completions", `{"model":"mixed","prompt":"x"}`); r.Status != 200 || r.Header.Get("X-Fngate-Route") != "up/base-model" {
		t.Errorf("mixed: status %d route %q", r.Status, r.Header.Get("X-Fngate-Route"))
	}

	r = g.Do(t, http.MethodPost, "/v1/completions", `{"model":"chat-only","prompt":"x"}`)
	if r.Status != 501 || r.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("status %d x-should-retry %q", r.Status, r.Header.Get("X-Should-Retry"))
	}
	e := r.ErrorObject(t)
	if want := "The completions endpoint is not supported for chat-only on ChatOnlyCloud. Use the chat endpoint instead."; e["message"] != want || e["code"] != "unsupported_endpoint" {
		t.Errorf("501 body %s", r.Body)
	}

	for _, tc := range []struct{ body, param string }{
		{`{"model":"text","prompt":["a","b"]}`, "prompt"},
		{`{"model":"text"}`, "prompt"},
		{`{"model":"text","prompt":"x","echo":true}`, "echo"},
		{`{"model":"text","prompt":"x","n":3}`, "n"},
	} {
		r := g.Do(t, http.MethodPost, "/v1/completions", tc.body)
		if e := r.ErrorObject(t); r.Status != 400 || e["param"] != tc.param {
			t.Errorf("%s: status %d %s", tc.body, r.Status, r.Body)
		}
	}
}

func TestKeysAndModelsEndpoint(t *testing.T) {
	sum := sha256.Sum256([]byte("gw-key-for-tests-1"))
	g := newGateway(t, `
keys:
  - {name: app, sha256: "`+hex.EncodeToString(sum[:])+`"}
  - {name: narrow, value: gw-key-for-tests-2, models: ["mock/e*"]}
connections:
  mock: {kind: mock}
models:
  mock/echo: {routes: [{connection: mock, model: echo}]}
  mock/lorem: {routes: [{connection: mock, model: lorem}]}
`)
	body := `{"model":"mock/lorem","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, auth string
		status     int
		errType    string
	}{
		{"no key", "", 401, "authentication_error"},
		{"not bearer", "Basic gw-key-for-tests-1", 401, "authentication_error"},
		{"wrong key", "Bearer gw-key-for-tests-3", 401, "authentication_error"},
		{"hashed key", "Bearer gw-key-for-tests-1", 200, ""},
		{"scheme in lower case", "bearer gw-key-for-tests-1", 200, ""},
		{"scheme in upper case", "BEARER gw-key-for-tests-1", 200, ""},
		{"several spaces after the scheme", "Bearer   gw-key-for-tests-1", 200, ""},
		{"scheme without a key", "Bearer ", 401, "authentication_error"},
		{"scheme glued to the key", "Bearergw-key-for-tests-1", 401, "authentication_error"},
		{"value key, model not allowed", "Bearer gw-key-for-tests-2", 404, "not_found_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.auth != "" {
				h = []string{"Authorization", tc.auth}
			}
			r := g.Chat(t, body, h...)
			if r.Status != tc.status {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if tc.errType != "" && r.ErrorObject(t)["type"] != tc.errType {
				t.Errorf("type %v", r.ErrorObject(t)["type"])
			}
		})
	}
	r := g.Do(t, http.MethodGet, "/v1/models", "", "Authorization", "Bearer gw-key-for-tests-2")
	m := r.JSON(t)
	data := m["data"].([]any)
	if m["object"] != "list" || len(data) != 1 || data[0].(map[string]any)["id"] != "mock/echo" {
		t.Errorf("models for the narrow key: %s", r.Body)
	}
	if r := g.Do(t, http.MethodGet, "/v1/models", ""); r.Status != 401 {
		t.Errorf("models without a key: %d", r.Status)
	}
	if r := g.Do(t, http.MethodGet, "/healthz", ""); r.Status != 200 {
		t.Errorf("healthz needs no key, got %d", r.Status)
	}
	if strings.Contains(g.logs.String(), "gw-key-for-tests") {
		t.Errorf("a gateway key reached the logs:\n%s", g.logs)
	}
}

// A key must not tell the models it may not use from the models that do not exist: both get
// the same 404, word for word but the name.
func TestDisallowedModelLooksNonexistent(t *testing.T) {
	g := newGateway(t, `
keys:
  - {name: narrow, value: gw-key-for-tests-4, models: ["mock/e*"]}
connections:
  mock: {kind: mock}
models:
  mock/echo: {routes: [{connection: mock, model: echo}]}
  mock/lorem: {routes: [{connection: mock, model: lorem}]}
`)
	answer := func(model string) (int, string) {
		r := g.Chat(t, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer gw-key-for-tests-4")
		r.ErrorObject(t)
		return r.Status, strings.ReplaceAll(string(r.Body), model, "MODEL")
	}
	hiddenStatus, hidden := answer("mock/lorem")
	absentStatus, absent := answer("mock/nothing")
	if hiddenStatus != 404 || absentStatus != 404 || hidden != absent {
		t.Errorf("a model the key may not use answers\n%d %s\nand one that does not exist\n%d %s", hiddenStatus, hidden, absentStatus, absent)
	}
	if !strings.Contains(hidden, `"code":"model_not_found"`) || !strings.Contains(hidden, `"param":"model"`) {
		t.Errorf("not a model_not_found error: %s", hidden)
	}
}

func TestRoutingErrors(t *testing.T) {
	g := newGateway(t, `
connections:
  mock: {kind: mock}
models:
  mock/echo: {routes: [{connection: mock, model: echo}]}
`)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/v1/chat/completions", 405},
		{http.MethodPost, "/v1/models", 405},
		{http.MethodGet, "/v1/embeddings", 405},
		{http.MethodPost, "/v1/audio/speech", 404},
		{http.MethodGet, "/", 404},
	} {
		r := g.Do(t, tc.method, tc.path, "{}")
		if r.Status != tc.status {
			t.Errorf("%s %s: %d", tc.method, tc.path, r.Status)
		}
		r.ErrorObject(t)
	}
}

func TestOpenGatewayNeedsExplicitOptIn(t *testing.T) {
	yaml := `
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`
	cfg, err := config.Parse(t.Context(), []byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gateway.New(cfg, gateway.Options{Registry: registry(), Logger: discardLogger(), RequireKeys: true}); err == nil {
		t.Fatal("an open gateway started where keys are required")
	}
	cfg, err = config.Parse(t.Context(), []byte("auth: none\n"+yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gateway.New(cfg, gateway.Options{Registry: registry(), Logger: discardLogger(), RequireKeys: true}); err != nil {
		t.Fatalf("auth: none refused: %v", err)
	}
}

// A key pinned to a residency is served only by routes with that label, first attempt
// included; a model with no such route is refused for that key.
func TestKeyResidencyPin(t *testing.T) {
	g := newGateway(t, `
keys:
  - {name: eu-app, value: gw-key-eu-only-1234, residency: eu}
  - {name: any-app, value: gw-key-anywhere-5678}
connections:
  mock: {kind: mock}
models:
  both:
    routes:
      - {connection: mock, model: lorem, residency: us}
      - {connection: mock, model: echo, residency: eu}
  us-only: {routes: [{connection: mock, model: echo, residency: us}]}
`)
	body := `{"model":"both","messages":[{"role":"user","content":"hi"}]}`
	if r := g.Chat(t, body, "Authorization", "Bearer gw-key-anywhere-5678"); r.Header.Get("X-Fngate-Route") != "mock/lorem" {
		t.Errorf("unpinned key served by %q, want the first route", r.Header.Get("X-Fngate-Route"))
	}
	if r := g.Chat(t, body, "Authorization", "Bearer gw-key-eu-only-1234"); r.Status != 200 || r.Header.Get("X-Fngate-Route") != "mock/echo" {
		t.Errorf("eu key: %d served by %q, want mock/echo", r.Status, r.Header.Get("X-Fngate-Route"))
	}
	r := g.Chat(t, `{"model":"us-only","messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer gw-key-eu-only-1234")
	if r.Status != 403 || r.ErrorObject(t)["code"] != "residency_not_available" {
		t.Errorf("eu key on a us-only model: %d %s", r.Status, r.Body)
	}
}

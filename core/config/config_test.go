package config

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/telemetry"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

const base = `
connections:
  mock: {kind: mock}
models:
  m: {routes: [{connection: mock, model: echo}]}
`

func TestParseDefaultsAndExpansion(t *testing.T) {
	cfg, err := Parse(context.Background(), []byte(`
keys:
  - {name: app, value: "${APP_KEY}"}
connections:
  up:
    kind: openai
    api_key: ${OPENAI_KEY}
    base_url: "${BASE:-http://127.0.0.1:9/v1}"
    anthropic_version: "2023-06-01"
models:
  m:
    max_output_tokens: ${MAX_OUT}
    routes: [{connection: up, model: gpt}]
`), Options{Getenv: env(map[string]string{"APP_KEY": "gw-key-123456", "OPENAI_KEY": "sk-live-abcdefgh", "MAX_OUT": "4096"})})
	if err != nil {
		t.Fatal(err)
	}
	up := cfg.Connections["up"]
	if up.APIKey != "sk-live-abcdefgh" || up.BaseURL != "http://127.0.0.1:9/v1" || up.ExtraString("anthropic_version") != "2023-06-01" {
		t.Errorf("connection %+v", up)
	}
	if cfg.Models["m"].MaxOutputTokens != 4096 || cfg.Models["m"].Routing.Policy != PolicyOrdered || cfg.Models["m"].Routing.MaxAttempts != 1 {
		t.Errorf("model %+v", cfg.Models["m"])
	}
	if cfg.Keys[0].Value != "" || cfg.Keys[0].Hash != sha256.Sum256([]byte("gw-key-123456")) {
		t.Error("key value kept in memory or hashed wrongly")
	}
	if cfg.Timeouts.FirstByte.D() != DefaultFirstByte || cfg.Limits.MaxBodyBytes != DefaultMaxBodyBytes {
		t.Errorf("defaults not applied: %+v %+v", cfg.Timeouts, cfg.Limits)
	}
	joined := strings.Join(cfg.Secrets, ",")
	if !strings.Contains(joined, "sk-live-abcdefgh") || !strings.Contains(joined, "gw-key-123456") {
		t.Errorf("secrets not recorded for redaction: %v", cfg.Secrets)
	}
}

func TestUnsetVariableIsAnError(t *testing.T) {
	_, err := Parse(context.Background(), []byte(`
connections:
  up: {kind: openai, api_key: "${MISSING_KEY}"}
models:
  m: {routes: [{connection: up, model: gpt}]}
`), Options{Getenv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), "MISSING_KEY") || !strings.Contains(err.Error(), "connections.up.api_key") {
		t.Fatalf("err %v", err)
	}
}

func TestEnabledIf(t *testing.T) {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"id":"llama3"},{"id":"qwen"}]}`))
	}))
	defer live.Close()
	yaml := `
connections:
  mock: {kind: mock}
  paid: {kind: openai, api_key: "${PAID_KEY}", enabled_if: {env: PAID_KEY}}
  local: {kind: ollama, base_url: "` + live.URL + `/v1", enabled_if: {reachable: "` + live.URL + `/v1/models"}, discover: {prefix: ollama/}}
  gone: {kind: ollama, base_url: "http://127.0.0.1:1/v1", enabled_if: {reachable: "http://127.0.0.1:1/v1/models"}}
models:
  m: {routes: [{connection: mock, model: echo}]}
  paid-only: {routes: [{connection: paid, model: gpt}]}
  mixed: {routes: [{connection: paid, model: gpt}, {connection: mock, model: echo}]}
  gone-only: {routes: [{connection: gone, model: x}]}
`
	cfg, err := Parse(context.Background(), []byte(yaml), Options{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"paid-only", "gone-only"} {
		if _, ok := cfg.Models[name]; ok {
			t.Errorf("%s kept although its connection is off", name)
		}
	}
	if r := cfg.Models["mixed"].Routes; len(r) != 1 || r[0].Connection != "mock" {
		t.Errorf("mixed routes %+v", r)
	}
	for _, name := range []string{"ollama/llama3", "ollama/qwen"} {
		if m, ok := cfg.Models[name]; !ok || m.Routes[0].Connection != "local" {
			t.Errorf("discovered model %s missing", name)
		}
	}
	cfg, err = Parse(context.Background(), []byte(yaml), Options{Getenv: env(map[string]string{"PAID_KEY": "sk-123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Models["paid-only"]; !ok {
		t.Error("paid-only missing with its key set")
	}
}

type fakeResolver struct{ calls int }

func (f *fakeResolver) Resolve(_ context.Context, ref string) (string, error) {
	f.calls++
	if strings.HasSuffix(ref, "#missing") {
		return "", errors.New("no such key")
	}
	return "resolved:" + ref, nil
}

func TestSecretReferences(t *testing.T) {
	r := &fakeResolver{}
	cfg, err := Parse(context.Background(), []byte(`
connections:
  a: {kind: openai, api_key: "aws-sm://prod/llm#openai"}
  b: {kind: openai, api_key: "aws-sm://prod/llm#openai", headers: {X-Extra: "aws-sm://prod/llm#openai"}}
models:
  m: {routes: [{connection: a, model: x}, {connection: b, model: x}]}
`), Options{Secrets: map[string]SecretResolver{"aws-sm": r}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Connections["a"].APIKey != "resolved:aws-sm://prod/llm#openai" || cfg.Connections["b"].Headers["X-Extra"] != cfg.Connections["a"].APIKey {
		t.Errorf("not resolved: %+v", cfg.Connections)
	}
	if r.calls != 1 {
		t.Errorf("one reference resolved %d times", r.calls)
	}
	if _, err := Parse(context.Background(), []byte(strings.Replace(base, "{kind: mock}", `{kind: mock, api_key: "gcp-sm://projects/p/secrets/s/versions/1"}`, 1)), Options{}); err == nil || !strings.Contains(err.Error(), "gcp-sm") {
		t.Errorf("a reference without a resolver was accepted: %v", err)
	}
}

func TestValidation(t *testing.T) {
	cases := map[string]string{
		"unknown connection":  `{connections: {mock: {kind: mock}}, models: {m: {routes: [{connection: nope, model: x}]}}}`,
		"no routes":           `{connections: {mock: {kind: mock}}, models: {m: {routes: []}}}`,
		"no models":           `{connections: {mock: {kind: mock}}}`,
		"bad policy":          `{connections: {mock: {kind: mock}}, models: {m: {routing: {policy: random}, routes: [{connection: mock, model: x}]}}}`,
		"no kind":             `{connections: {mock: {}}, models: {m: {routes: [{connection: mock, model: x}]}}}`,
		"key without secret":  `{keys: [{name: a}], connections: {mock: {kind: mock}}, models: {m: {routes: [{connection: mock, model: x}]}}}`,
		"bad key hash":        `{keys: [{name: a, sha256: abc}], connections: {mock: {kind: mock}}, models: {m: {routes: [{connection: mock, model: x}]}}}`,
		"negative price":      `{connections: {mock: {kind: mock}}, models: {m: {price: {input_per_mtok: -1}, routes: [{connection: mock, model: x}]}}}`,
		"auth none with keys": `{auth: none, keys: [{name: a, value: k}], connections: {mock: {kind: mock}}, models: {m: {routes: [{connection: mock, model: x}]}}}`,
		"bad duration":        `{timeouts: {idle: soon}, connections: {mock: {kind: mock}}, models: {m: {routes: [{connection: mock, model: x}]}}}`,
		"bad yaml":            `{connections: [`,
	}
	for name, yaml := range cases {
		if _, err := Parse(context.Background(), []byte(yaml), Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDurations(t *testing.T) {
	cfg, err := Parse(context.Background(), []byte("timeouts: {first_byte: 2.5, idle: 300ms}\n"+base), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeouts.FirstByte.D() != 2500*time.Millisecond || cfg.Timeouts.Idle.D() != 300*time.Millisecond {
		t.Errorf("%+v", cfg.Timeouts)
	}
}

func TestEmbeddedDefault(t *testing.T) {
	cfg, err := Default(context.Background(), Options{Getenv: env(nil), HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"mock/echo", "mock/tools", "mock/failover"} {
		if _, ok := cfg.Models[m]; !ok {
			t.Errorf("default lacks %s", m)
		}
	}
	for name := range cfg.Models {
		if strings.HasPrefix(name, "openai/") {
			t.Errorf("%s enabled without OPENAI_API_KEY", name)
		}
	}
	cfg, err = Default(context.Background(), Options{Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-test-123456789"}), HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := cfg.Models["openai/gpt-4.1-mini"]; !ok || !m.Priced() {
		t.Error("OPENAI_API_KEY did not turn on the OpenAI models")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte("keys: [{name: a, value: ${X:-y}}]\n" + base))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(context.Background(), data, Options{Getenv: env(nil), HTTPClient: &http.Client{Timeout: time.Millisecond}})
	})
}

// TestDiscoverKeepsBaseURLQuery: GET /models joins the path of base_url, whose query stays
// the query.
func TestDiscoverKeepsBaseURLQuery(t *testing.T) {
	var got []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RequestURI())
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":"llama3"}]}`))
	}))
	defer live.Close()
	cfg, err := Parse(context.Background(), []byte(`
connections:
  local: {kind: openai-compatible, base_url: "`+live.URL+`/v1?api-version=2024-10-21", discover: {prefix: local/}}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "/v1/models?api-version=2024-10-21" {
		t.Errorf("requests %q, want one GET /v1/models?api-version=2024-10-21", got)
	}
	if cfg.Models["local/llama3"] == nil {
		t.Errorf("models %v: llama3 not discovered", cfg.Models)
	}
}

// TestTelemetryHeadersAreSecrets: an OTLP header (a vendor's API key) resolves like a
// provider key and is blanked in logs like one.
func TestTelemetryHeadersAreSecrets(t *testing.T) {
	cfg, err := Parse(context.Background(), []byte(`
telemetry:
  otlp:
    endpoint: https://otlp.example.com
    protocol: grpc
    sample_ratio: 0.25
    headers: {x-honeycomb-team: "${HONEYCOMB_KEY}"}
`+base), Options{Getenv: func(k string) string { return map[string]string{"HONEYCOMB_KEY": "hc-key-0123456789"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Telemetry.OTLP
	if o == nil || o.Protocol != ProtocolGRPC || *o.SampleRatio != 0.25 || o.Headers["x-honeycomb-team"] != "hc-key-0123456789" {
		t.Fatalf("telemetry = %+v", o)
	}
	if got := telemetry.NewSecrets(cfg.Secrets).Redact("header hc-key-0123456789"); got != "header [REDACTED]" {
		t.Errorf("redacted: %q", got)
	}
}

// TestSecretsIncludeEchoedForms: what an upstream or a library may echo of a credential (its
// URL-encoded and base64 spellings, inside a basic-auth value too) and the credentials of a
// base_url (query parameters, the user information's password) are all secrets: the matcher
// the logs and the client messages use blanks each of them.
func TestSecretsIncludeEchoedForms(t *testing.T) {
	const key = "sk-live/9Zk+Q=secret?0123&x"
	cfg, err := Parse(context.Background(), []byte(`
connections:
  up:
    kind: openai
    api_key: "`+key+`"
    base_url: "https://proxy:pr%40xy-pass-0123@example.com/openai/deployments/d?api-version=2024-10-21&api-key=azure-key-0123456789&sig=sas%2Bsig%3D0123456789"
models:
  m: {routes: [{connection: up, model: gpt}]}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	redact := telemetry.NewSecrets(cfg.Secrets).Redact
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	whole := map[string]string{
		"raw":                    key,
		"query-escaped":          url.QueryEscape(key),
		"path-escaped":           url.PathEscape(key),
		"base64":                 b64(base64.StdEncoding, key),
		"base64 unpadded":        b64(base64.RawStdEncoding, key),
		"base64 URL-safe":        b64(base64.URLEncoding, key),
		"base64 URL-safe bare":   b64(base64.RawURLEncoding, key),
		"query value":            "azure-key-0123456789",
		"query value decoded":    "sas+sig=0123456789",
		"query value as written": "sas%2Bsig%3D0123456789",
		"password":               "pr@xy-pass-0123",
		"password as written":    "pr%40xy-pass-0123",
		"basic auth of the URL":  b64(base64.StdEncoding, "proxy:pr@xy-pass-0123"),
	}
	for name, form := range whole {
		if got := redact("upstream said: " + form + " (end)"); got != "upstream said: [REDACTED] (end)" {
			t.Errorf("%s: %q", name, got)
		}
	}
	// Embedded in a longer base64 text, at each alignment: the characters that encode the
	// key alone must go.
	for _, prefix := range []string{"u:", "us:", "user:", `{"api_key":"`} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			text := b64(enc, prefix+key+`","more":"data"}`)
			from, to := (len(prefix)+2)/3*4+1, (len(prefix)+len(key))/3*4-1
			if core := text[from:to]; strings.Contains(redact(text), core) {
				t.Errorf("base64 of %q+key: %q still shows %q", prefix, redact(text), core)
			}
		}
	}
	// Settings of the URL that are no credentials stay readable.
	if got := redact("api-version=2024-10-21"); got != "api-version=2024-10-21" {
		t.Errorf("a plain query parameter was redacted: %q", got)
	}
}

// TestRequestProfiles: strict unless the config or a key says extended; a key without its
// own settings takes the top level's.
func TestRequestProfiles(t *testing.T) {
	cfg, err := Parse(context.Background(), []byte(`
request_profile: extended
request_profile_ignore: [messages.name]
keys:
  - {name: inherits, value: k-1}
  - {name: strict, value: k-2, request_profile: strict}
  - {name: own-ignore, value: k-3, request_profile_ignore: []}
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`), Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		extended, names bool
	}{{true, true}, {false, true}, {true, false}} {
		k := &cfg.Keys[i]
		if k.Extended() != want.extended || k.Ignores(IgnoreMessageNames) != want.names {
			t.Errorf("%s: extended %v, ignores names %v", k.Name, k.Extended(), k.Ignores(IgnoreMessageNames))
		}
	}
	plain, err := Parse(context.Background(), []byte("connections: {mock: {kind: mock}}\nmodels: {m: {routes: [{connection: mock, model: echo}]}}\n"), Options{Getenv: func(string) string { return "" }})
	if err != nil || plain.RequestProfile != ProfileStrict {
		t.Errorf("default profile %q (%v)", plain.RequestProfile, err)
	}
}

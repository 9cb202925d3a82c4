package config_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/telemetry"
)

// start does what every platform main does with a config: parse it, then build the gateway.
func start(yaml string) error {
	cfg, err := config.Parse(context.Background(), []byte(yaml), config.Options{
		Getenv:  func(string) string { return "" },
		Secrets: map[string]config.SecretResolver{config.SchemeAWS: echoResolver{}, config.SchemeGCP: echoResolver{}},
	})
	if err != nil {
		return err
	}
	reg := providers.Registry{}
	mock.Register(reg)
	openaicompat.Register(reg)
	_, err = gateway.New(cfg, gateway.Options{Registry: reg, Logger: telemetry.NewLogger(io.Discard, telemetry.FormatCloudWatch, nil)})
	return err
}

// echoResolver stands in for a platform's resolver: a reference that reaches it resolves.
type echoResolver struct{}

func (echoResolver) Resolve(_ context.Context, ref string) (string, error) { return "sk-" + ref, nil }

// Each of these configs used to start and then misbehave (a key's rules silently ignored, a
// panic on the first weighted draw, every attempt timing out, a 400 on the first request, a
// reference sent upstream as an API key). Each must stop the start with an error that names
// the key path and the line marked "# <-".
func TestStartRefusesConfigMistakes(t *testing.T) {
	const upstream = "connections:\n  up: {kind: openai-compatible, base_url: \"http://127.0.0.1:9/v1\"}\n  mock: {kind: mock}\n"
	const model = "models:\n  m:\n    routes:\n      - {connection: mock, model: echo}\n"
	for _, tc := range []struct {
		name, yaml, path, why string
	}{
		{"two keys with one value", `
keys:
  - {name: a, value: k-123, models: ["m"]}
  - {name: b, value: k-123, residency: eu} # <-
` + upstream + model, "keys[1].value", "is the secret of keys[0] (a) too"},
		{"a value and a sha256 of the same secret", `
keys:
  - name: a
    value: k-123
  - name: b
    sha256: "` + fmt.Sprintf("%x", sha256.Sum256([]byte("k-123"))) + `" # <-
` + upstream + model, "keys[1].sha256", "is the secret of keys[0] (a) too"},
		{"route weights whose sum overflows", upstream + `
models:
  m:
    routing: {policy: weighted}
    routes:
      - {connection: mock, model: echo, weight: 9223372036854775807}
      - connection: mock
        model: lorem
        weight: 1 # <-
`, "models.m.routes[1].weight", "add up to more than"},
		{"a negative route weight", upstream + `
models:
  m:
    routes:
      - connection: mock
        model: echo
        weight: -3 # <-
`, "models.m.routes[0].weight", "must not be negative"},
		{"a route weight beyond int", upstream + `
models:
  m:
    routes:
      - connection: mock
        model: echo
        weight: 99999999999999999999 # <-
`, "models.m.routes[0].weight", "cannot unmarshal"},
		{"a negative timeout", `
timeouts:
  first_byte: -5s # <-
` + upstream + model, "timeouts.first_byte", "not negative"},
		{"a timeout of 1e30 seconds", `
timeouts:
  total: 1e30 # <-
` + upstream + model, "timeouts.total", "invalid duration"},
		{"a timeout beyond time.Duration", upstream + `
models:
  m:
    timeouts:
      idle: 9999999h # <-
    routes: [{connection: mock, model: echo}]
`, "models.m.timeouts.idle", "invalid duration"},
		{"a timeout of NaN seconds", `
timeouts:
  connect: NaN # <-
` + upstream + model, "timeouts.connect", "invalid duration"},
		{"a mock model that does not exist", upstream + `
models:
  m:
    routes:
      - {connection: mock, model: echo}
      - {connection: mock, model: ecko} # <-
`, "models.m.routes[1]", `unknown mock model "ecko"`},
		{"a base_url that is not http", `
connections:
  up:
    kind: openai-compatible
    base_url: ftp://127.0.0.1/v1 # <-
` + model, "connections.up.base_url", "must be an http:// or https:// URL"},
		{"a base_url without a scheme", `
connections:
  up:
    kind: ollama
    base_url: localhost:11434/v1 # <-
` + model, "connections.up.base_url", "must be an http:// or https:// URL"},
		{"a base_url without a host", `
connections:
  up:
    kind: openai
    base_url: "https:///v1" # <-
` + model, "connections.up.base_url", "has no host"},
		{"an unterminated ${VAR", `
connections:
  up:
    kind: openai
    api_key: "${OPENAI_KEY" # <-
` + model, "connections.up.api_key", "no closing }"},
		{"an empty ${}", `
connections:
  up:
    kind: openai
    headers:
      X-Org: "${}" # <-
` + model, "connections.up.headers.X-Org", "names no variable"},
		{"aws-sm: with one slash", `
connections:
  up:
    kind: openai
    api_key: "aws-sm:/prod/llm#openai" # <-
` + model, "connections.up.api_key", `start with exactly "aws-sm://"`},
		{"AWS-SM in capitals", `
keys:
  - name: a
    value: "AWS-SM://prod/gateway-key" # <-
` + upstream + model, "keys[0].value", `start with exactly "aws-sm://"`},
		{"an aws-sm name Secrets Manager does not allow", `
connections:
  up:
    kind: openai
    api_key: "aws-sm://prod llm" # <-
` + model, "connections.up.api_key", "characters Secrets Manager does not allow"},
		{"an aws-sm ARN of another service", `
connections:
  up:
    kind: openai
    api_key: "aws-sm://arn:aws:ssm:eu-west-1:123456789012:parameter/llm" # <-
` + model, "connections.up.api_key", "not a Secrets Manager secret's"},
		{"a Secrets Manager ARN without aws-sm://", `
connections:
  up:
    kind: anthropic
    api_key: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:llm-AbCdEf" # <-
` + model, "connections.up.api_key", "needs the aws-sm:// prefix"},
		{"an aws-sm reference with an empty JSON key", `
connections:
  up:
    kind: openai
    anthropic_api_key: "aws-sm://prod/llm#" # <-
` + model, "connections.up.anthropic_api_key", "empty JSON key"},
		{"gcp-sm without a secret", `
connections:
  up:
    kind: openai
    api_key: "gcp-sm://projects/p/secrets" # <-
` + model, "connections.up.api_key", "not a secret's resource name"},
		{"gcp-sm with a short form it does not have", `
connections:
  up:
    kind: openai
    api_key: "gcp-sm://my-secret" # <-
` + model, "connections.up.api_key", "not a secret's resource name"},
		{"an OTLP protocol the exporters do not speak", `
telemetry:
  otlp:
    endpoint: http://127.0.0.1:4318
    protocol: http/json # <-
` + upstream + model, "telemetry.otlp.protocol", "must be http/protobuf or grpc"},
		{"an OTLP endpoint without a scheme", `
telemetry:
  otlp:
    endpoint: 127.0.0.1:4317 # <-
` + upstream + model, "telemetry.otlp.endpoint", "must be an http:// or https:// URL"},
		{"a sample ratio above 1", `
telemetry:
  otlp:
    sample_ratio: 10 # <-
` + upstream + model, "telemetry.otlp.sample_ratio", "between 0 and 1"},
		{"a log format that does not exist", `
logging:
  format: pretty # <-
` + upstream + model, "logging.format", "cloudwatch, cloudlogging or text"},
		{"gcp-sm with an empty version", `
connections:
  up:
    kind: openai
    api_key: "gcp-sm://projects/p/secrets/s/versions/" # <-
` + model, "connections.up.api_key", "malformed version"},
		{"an unknown request profile", `
request_profile: lenient # <-
` + model, "request_profile", "must be strict or extended"},
		{"a key's unknown request profile", `
keys:
  - {name: a, value: k-123, request_profile: Extended} # <-
` + model, "keys[0].request_profile", "must be strict or extended"},
		{"ignoring something that cannot be ignored", `
request_profile: extended
request_profile_ignore:
  - messages.name
  - response_format # <-
` + model, "request_profile_ignore[1]", `only "messages.name" can be ignored`},
		{"a response store that does not exist", `
responses:
  store: redis # <-
` + upstream + model, "responses.store", "must be memory, file, dynamodb, firestore or none"},
		{"a negative rate limit", `
keys:
  - name: a
    value: k-123
    rate:
      requests_per_minute: -1 # <-
` + upstream + model, "keys[0].rate", "must not be negative"},
		{"a budget beyond what the counters hold", `
keys:
  - name: a
    value: k-123
    budget:
      usd_per_month: 1e12 # <-
` + upstream + model, "keys[0].budget.usd_per_month", "must be between 0 and"},
		{"a per-model rule with a bad glob", `
keys:
  - name: a
    value: k-123
    per_model:
      "gpt-[": {rate: {requests_per_minute: 1}} # <-
` + upstream + model, "keys[0].per_model.gpt-[", "bad model glob"},
		{"key_defaults without keys", `
key_defaults:
  rate: {requests_per_minute: 10} # <-
` + upstream + model, "key_defaults", "no keys are configured"},
		{"a counter store that does not exist", `
counters:
  store: redis # <-
` + upstream + model, "counters.store", "must be memory, file, dynamodb or firestore"},
		{"an on_store_error that is neither open nor closed", `
counters:
  on_store_error: fail # <-
` + upstream + model, "counters.on_store_error", "must be open or closed"},
		{"a counters setting of another store", `
counters:
  store: memory
  table: fngate-counters # <-
` + upstream + model, "counters.table", "the memory store has no table setting"},
		{"a counters setting that only a named store takes", `
counters:
  path: counters.json # <-
` + upstream + model, "counters.path", "is set but counters.store is not"},
		{"a misspelt counters setting", `
counters:
  store: dynamodb
  tabel: fngate-counters # <-
` + upstream + model, "counters.tabel", "is not a setting of counters"},
		{"a collection, which the counters name by their prefix", `
counters:
  store: firestore
  collection: limits # <-
` + upstream + model, "counters.collection", "is not a setting of counters"},
		{"a counters table DynamoDB would refuse", `
counters:
  store: dynamodb
  table: t # <-
` + upstream + model, "counters.table", "3 to 255 letters"},
		{"a counters timeout that would hold requests", `
counters:
  store: memory
  timeout: 5m # <-
` + upstream + model, "counters.timeout", "must be at most 30s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := markedLine(t, tc.yaml)
			where := fmt.Sprintf("line %d: %s", line, tc.path)
			err := start(tc.yaml)
			if err == nil {
				t.Fatal("the gateway started")
			}
			if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q\nwant it to name %q and say %q", err, where, tc.why)
			}
			if strings.Contains(err.Error(), "k-123") {
				t.Errorf("the error repeats a key's secret: %q", err)
			}
		})
	}
}

// The shapes the refusals above must not catch.
func TestStartAcceptsWellFormedReferences(t *testing.T) {
	for _, ref := range []string{
		"aws-sm://prod/llm",
		"aws-sm://prod/llm#openai",
		"aws-sm://arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/llm-AbCdEf#openai",
		"aws-sm://arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:llm",
		"gcp-sm://projects/my-project/secrets/openai",
		"gcp-sm://projects/123456789/secrets/openai_key/versions/3",
		"gcp-sm://projects/p/secrets/bundle/versions/latest#anthropic",
	} {
		yaml := "connections:\n  up: {kind: openai, api_key: \"" + ref + "\"}\nmodels:\n  m: {routes: [{connection: up, model: gpt}]}\n"
		if err := start(yaml); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
}

// markedLine returns the 1-based number of the line holding "# <-".
func markedLine(t *testing.T, yaml string) int {
	t.Helper()
	for i, l := range strings.Split(yaml, "\n") {
		if strings.Contains(l, "# <-") {
			return i + 1
		}
	}
	t.Fatal("no line is marked # <-")
	return 0
}

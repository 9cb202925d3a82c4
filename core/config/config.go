// Package config loads the YAML model catalog: client keys (with their rate limits and
// budgets, limits.go), provider connections, gateway models and their routes. ${ENV} references expand, secret references (aws-sm://, gcp-sm://)
// resolve once through resolvers the platform supplies, and an embedded default serves
// `make run`. A config that cannot work is refused when it is loaded, and every refusal names
// its place: the key path (models.example/chat.routes[1].weight) and, for YAML, the line
// (locate.go). A model is a chat model or, with kind: embedding, an embedding model with
// its dimensions and task (embedding.go). The keys that seal the Responses door's compaction items
// are responses.compaction_keys (compaction.go). The stored responses and the keys' counters
// each name a store, checked by one code (store.go). A deployment across regions places each
// instance with region and counts with counters.across_regions (region.go).
package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is a loaded, validated catalog. Names of YAML keys are a contract (ARCHITECTURE.md);
// unknown keys are allowed so one file can carry settings for other tools.
type Config struct {
	// Auth is "" (keys required when any are configured) or "none", an explicit opt-in to an
	// open gateway that the cloud functions demand before they serve without keys.
	Auth        string                 `yaml:"auth"`
	Keys        []Key                  `yaml:"keys"`
	Connections map[string]*Connection `yaml:"connections"`
	Models      map[string]*Model      `yaml:"models"`
	Limits      Limits                 `yaml:"limits"`
	Timeouts    Timeouts               `yaml:"timeouts"`
	Logging     Logging                `yaml:"logging"`
	Telemetry   Telemetry              `yaml:"telemetry"`
	// Responses is the store of the Responses door's stored responses (store.go) and the
	// keys of its compaction items (compaction.go).
	Responses Responses `yaml:"responses"`
	// ResponseCache is where the answers models and keys opt to cache are kept (cache.go).
	ResponseCache ResponseCache `yaml:"response_cache"`
	// Guardrails are the named content controls models and keys attach (guardrails.go).
	Guardrails map[string]*Guardrail `yaml:"guardrails"`
	// MCPServers are the upstream MCP servers /mcp aggregates, MCPSessions where the
	// sessions of the protocol versions that open one live, MCPOAuth the OAuth tokens /mcp
	// accepts beside gateway keys (mcp.go).
	MCPServers  map[string]*MCPServer `yaml:"mcp_servers"`
	MCPSessions MCPSessions           `yaml:"mcp_sessions"`
	MCPOAuth    *MCPOAuth             `yaml:"mcp_oauth"`

	// RequestProfile is how strictly the OpenAI doors read requests: ProfileStrict (the
	// default: the documented subset, anything else refused) or ProfileExtended (the fields
	// mainstream SDKs send, each honoured by the route or refused by it with the reason). A
	// key may set its own.
	RequestProfile string `yaml:"request_profile"`
	// RequestProfileIgnore lists what the operator lets routes that cannot carry it leave out
	// under the extended profile; only IgnoreMessageNames is defined. A key may set its own.
	RequestProfileIgnore []string `yaml:"request_profile_ignore"`
	// Counters is where rate limits and budgets are counted (limits.go); KeyDefaults are the
	// limits of keys that set none of their own.
	Counters Counters `yaml:"counters"`
	// Region places this instance in a deployment across regions (region.go).
	Region Region `yaml:"region"`
	// KeyStore keeps the keys issued at runtime; Admin is the control plane (controlplane.go).
	KeyStore    KeyStore   `yaml:"key_store"`
	Admin       Admin      `yaml:"admin"`
	KeyDefaults *KeyLimits `yaml:"key_defaults"`

	// Secrets lists every resolved secret value (client and provider keys, secret headers and
	// settings, credentials in a base_url), each also in the other spellings an echo of it
	// may take (URL-encoded, base64), so logs and client-bound messages can blank them all.
	Secrets []string `yaml:"-"`

	where *located // set by Parse; nil for a Config built in code
}

// Key is a gateway client key. Only its SHA-256 is kept in memory.
type Key struct {
	// ID is what the counters, stored responses, usage history and logs know the key by:
	// a config key's name, or a stored key's immutable key_... id (core/keystore).
	ID     string `yaml:"-"`
	Name   string `yaml:"name"`
	SHA256 string `yaml:"sha256"`
	Value  string `yaml:"value"`
	// Models limits the key to gateway models matching these globs (path.Match syntax);
	// empty allows every model.
	Models []string `yaml:"models"`
	// Residency pins the key's requests to routes with this residency label.
	Residency string `yaml:"residency"`
	// Team is the key's team, whose keys share cached answers under cache scope team.
	Team string `yaml:"team"`
	// RequestProfile and RequestProfileIgnore replace the top-level settings for this key's
	// requests when set; validation fills them in from the top level otherwise.
	RequestProfile       string   `yaml:"request_profile"`
	RequestProfileIgnore []string `yaml:"request_profile_ignore"`
	// MCP limits what the key reaches through /mcp; nil allows every server and tool.
	MCP *MCPAccess `yaml:"mcp"`
	// KeyLimits are the key's rate limit, budget and per-model limits (limits.go).
	KeyLimits `yaml:",inline"`

	Hash [32]byte `yaml:"-"`
}

// StoredKeyIDPrefix begins the id of every key issued at runtime (core/keystore); a config
// key's id is its name, so no config key's name may begin with it.
const StoredKeyIDPrefix = "key_"

// Request profiles.
const (
	ProfileStrict   = "strict"
	ProfileExtended = "extended"
)

// IgnoreMessageNames in request_profile_ignore lets a route that cannot carry a message's
// participant name (OpenAI's messages[].name) leave it out instead of refusing the request.
const IgnoreMessageNames = "messages.name"

// Extended reports whether the key's requests are read under the extended profile.
func (k *Key) Extended() bool { return k.RequestProfile == ProfileExtended }

// Ignores reports whether the key's request_profile_ignore lists what.
func (k *Key) Ignores(what string) bool {
	for _, w := range k.RequestProfileIgnore {
		if w == what {
			return true
		}
	}
	return false
}

// Connection is one provider account or endpoint.
type Connection struct {
	Kind     string            `yaml:"kind"`
	APIKey   string            `yaml:"api_key"`
	BaseURL  string            `yaml:"base_url"`
	Region   string            `yaml:"region"`
	Endpoint string            `yaml:"endpoint"`
	Project  string            `yaml:"project"`
	Location string            `yaml:"location"`
	Insecure bool              `yaml:"insecure"`
	Headers  map[string]string `yaml:"headers"`

	// EnabledIf turns the connection (and the routes and models that use it) on only when a
	// condition holds; the embedded default uses it to light up providers found in the
	// environment.
	EnabledIf *Condition `yaml:"enabled_if"`
	// Discover adds one gateway model per model the endpoint lists (GET {base_url}/models).
	Discover *Discover `yaml:"discover"`

	// Extra holds provider-specific keys (for example anthropic_version, bearer_token).
	Extra map[string]any `yaml:",inline"`

	Name string `yaml:"-"`
}

// ExtraString returns a provider-specific string setting.
func (c *Connection) ExtraString(key string) string {
	if v, ok := c.Extra[key]; ok {
		switch t := v.(type) {
		case string:
			return t
		case int, float64, bool:
			return fmt.Sprint(t)
		}
	}
	return ""
}

// Condition enables a connection when every given test passes.
type Condition struct {
	Env       string `yaml:"env"`       // this environment variable is set and not empty
	Reachable string `yaml:"reachable"` // an HTTP GET of this URL answers (any status)
}

// Discover configures model discovery on an OpenAI-compatible connection.
type Discover struct {
	Prefix string `yaml:"prefix"` // gateway model name = Prefix + upstream id
}

// Model is a gateway model: the name clients send, its price and ceiling, and its routes.
type Model struct {
	Description     string    `yaml:"description"`
	Price           *Price    `yaml:"price"`
	MaxOutputTokens int       `yaml:"max_output_tokens"`
	Routing         Routing   `yaml:"routing"`
	Routes          []Route   `yaml:"routes"`
	Timeouts        *Timeouts `yaml:"timeouts"`
	// Cache opts the model's requests into the response cache (cache.go).
	Cache *Cache `yaml:"cache"`
	// Guardrails check the model's requests and answers (guardrails.go).
	Guardrails []GuardrailUse `yaml:"guardrails"`

	// Kind is what the model serves: chat (the default; the chat, completions and Messages
	// doors) or embedding (POST /v1/embeddings). See embedding.go.
	Kind string `yaml:"kind"`
	// Dimensions is an embedding model's vector length, required: every route must return
	// vectors this long, since a vector index holds one length.
	Dimensions int `yaml:"dimensions"`
	// Task is what an embedding model's vectors are for, for backends whose vectors depend on
	// it (Cohere's input_type, Vertex AI's task_type); default document.
	Task string `yaml:"task"`

	Name string `yaml:"-"`
}

// Priced reports whether requests to the model are charged, which makes the client's output
// maximum mandatory.
func (m *Model) Priced() bool { return m.Price != nil }

// Price is USD per million tokens.
type Price struct {
	InputPerMTok       float64  `yaml:"input_per_mtok"`
	OutputPerMTok      float64  `yaml:"output_per_mtok"`
	CachedInputPerMTok *float64 `yaml:"cached_input_per_mtok"` // default: the input price
	CacheWritePerMTok  *float64 `yaml:"cache_write_per_mtok"`  // default: the input price
}

// Routing policies.
const (
	PolicyOrdered  = "ordered"
	PolicyWeighted = "weighted"
)

// Routing chooses the order of a model's routes and how many may be tried.
type Routing struct {
	Policy      string `yaml:"policy"`
	MaxAttempts int    `yaml:"max_attempts"`
}

// Route sends a gateway model to one upstream model on one connection.
type Route struct {
	Connection string `yaml:"connection"`
	Model      string `yaml:"model"`
	Residency  string `yaml:"residency"`
	Weight     int    `yaml:"weight"`
	// API forces a provider sub-API where a connection serves several (Vertex: gemini,
	// claude, maas).
	API string `yaml:"api"`
}

// ID names the route in logs and in route state: connection/upstream-model.
func (r *Route) ID() string { return r.Connection + "/" + r.Model }

// Limits bound what a request may carry and how much one instance takes on. Validation
// gives each field left 0 its default (the Default constants below), except MaxMessages and
// MaxTools, which the doors' decoding defaults (llm.DefaultMaxMessages, llm.DefaultMaxTools).
type Limits struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	MaxMessages  int   `yaml:"max_messages"`
	MaxTools     int   `yaml:"max_tools"`
	// MaxInFlight caps concurrent requests per instance (429 beyond it).
	MaxInFlight int `yaml:"max_in_flight"`
	// BodyReadTimeout bounds the time to receive a request body (408 beyond it).
	BodyReadTimeout Duration `yaml:"body_read_timeout"`
	// WebSocketMaxMessageBytes bounds one message a client sends in the Responses API's
	// WebSocket mode (its response.create), and the conversation a connection keeps for
	// continuation; 0 means max_body_bytes, which bounds the same body sent over HTTP.
	WebSocketMaxMessageBytes int64 `yaml:"websocket_max_message_bytes"`
	// WebSocketIdleTimeout closes a WebSocket connection on which no response runs and no
	// message arrives for this long.
	WebSocketIdleTimeout Duration `yaml:"websocket_idle_timeout"`
	// WebSocketMaxDuration is how long one WebSocket connection may take response.create
	// messages.
	WebSocketMaxDuration Duration `yaml:"websocket_max_duration"`
}

// Timeouts for upstream calls. Validation gives the top-level zero fields the Default
// constants below; a model's own zero fields take the top level's (Merge).
type Timeouts struct {
	Connect Duration `yaml:"connect"`
	// FirstByte bounds the wait for the start of an answer; past it the attempt fails over.
	// For a stream that is its first content; for a non-stream answer its response headers,
	// which most providers send only with the finished answer, so there it bounds the whole
	// generation.
	FirstByte Duration `yaml:"first_byte"`
	// Idle bounds the gap between two streamed events once output has begun.
	Idle Duration `yaml:"idle"`
	// Total bounds one attempt from start to end, its output guardrails' checks included,
	// and a request's input guardrails' checks, together, before its first attempt.
	Total Duration `yaml:"total"`
}

// Default limits and timeouts.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxInFlight  = 1000
	// DefaultBodyReadTimeout lets a full 4 MB body arrive at 1.2 Mbit/s, and holds a client
	// that trickles its body no longer.
	DefaultBodyReadTimeout = 30 * time.Second
	DefaultConnect         = 5 * time.Second
	DefaultFirstByte       = 60 * time.Second
	DefaultIdle            = 60 * time.Second
	DefaultTotal           = 10 * time.Minute
)

// WebSocket mode's default limits.
const (
	// DefaultWebSocketIdleTimeout keeps a connection open while a person reads an answer and
	// writes the next prompt, and frees an abandoned one.
	DefaultWebSocketIdleTimeout = 10 * time.Minute
	// DefaultWebSocketMaxDuration is OpenAI's own limit on one connection (its
	// websocket_connection_limit_reached), after which clients already reconnect.
	DefaultWebSocketMaxDuration = 60 * time.Minute
)

// Merge returns t with zero fields taken from base.
func (t Timeouts) Merge(base Timeouts) Timeouts {
	if t.Connect == 0 {
		t.Connect = base.Connect
	}
	if t.FirstByte == 0 {
		t.FirstByte = base.FirstByte
	}
	if t.Idle == 0 {
		t.Idle = base.Idle
	}
	if t.Total == 0 {
		t.Total = base.Total
	}
	return t
}

// Logging selects the log flavour.
type Logging struct {
	// Format is "cloudwatch" (JSON, level/msg keys), "cloudlogging" (JSON, severity/message
	// keys), "text" (one readable line per request, for a terminal) or "" to pick by
	// environment (K_SERVICE set: cloudlogging; the local server on a terminal: text).
	Format string `yaml:"format"`
}

// Telemetry is the opt-in OpenTelemetry export (core/telemetry/otel). Unset, nothing is
// traced unless the standard OTEL_EXPORTER_OTLP_* variables ask for it.
type Telemetry struct {
	OTLP *OTLP `yaml:"otlp"`
}

// TelemetryRequested reports whether the config or the environment asks for OpenTelemetry
// export: a telemetry.otlp block, or OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ or
// _METRICS_ variant), unless OTEL_SDK_DISABLED is true. A binary built without the exporter
// (the Lambda bootstrap without -tags otel) refuses to start when it is asked.
func (c *Config) TelemetryRequested(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return c.Telemetry.OTLP != nil || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
		getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
}

// OTLP protocols.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// OTLP is where spans and metrics go and how. Every field left empty falls back to its
// OTEL_* variable, then to the OpenTelemetry default.
type OTLP struct {
	// Endpoint is the collector's base URL (http://127.0.0.1:4318 for http/protobuf,
	// http://127.0.0.1:4317 for grpc); the signal paths (/v1/traces, /v1/metrics) are added.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf (the default) or grpc.
	Protocol string `yaml:"protocol"`
	// Headers go with every export (a vendor's API key); their values are secrets.
	Headers map[string]string `yaml:"headers"`
	// SampleRatio is the share of new traces recorded, 0 to 1; a client's sampled traceparent
	// is always followed. Nil leaves it to OTEL_TRACES_SAMPLER, else 1.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// CaptureContent records the messages and the answer on the spans
	// (gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions). Off, no
	// content of a conversation ever leaves in telemetry.
	CaptureContent bool `yaml:"capture_content"`
}

// Duration is a time.Duration written as "30s" or a number of seconds.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML accepts Go duration strings and plain seconds. A negative duration, or one
// too long for time.Duration (about 292 years), is refused: converted as it is, "1e30" seconds
// wraps to a negative value and "-5s" would make every attempt time out at once.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &nodeError{n, "a duration must be a string such as \"30s\""}
	}
	invalid := &nodeError{n, fmt.Sprintf("invalid duration %q: write a Go duration such as \"30s\" or a number of seconds, not negative and at most %v", n.Value, maxDuration)}
	if secs, err := strconv.ParseFloat(n.Value, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		// 2^63 ns is the first value time.Duration cannot hold; NaN fails both comparisons.
		if ns := secs * float64(time.Second); !(ns >= 0 && ns < 1<<63) {
			return invalid
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value) // its own overflow check refuses "9999999h"
	if err != nil || v < 0 {
		return invalid
	}
	*d = Duration(v)
	return nil
}

// maxDuration is the longest time.Duration, printed in the refusal of a longer one.
const maxDuration = time.Duration(1<<63 - 1)

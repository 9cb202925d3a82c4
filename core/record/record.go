// Package record is what the gateway says of each request and each attempt, in one leaf
// package that the gateway, its telemetry (core/telemetry/otel), the event publisher
// (events/publish) and the remediation handlers (events/remediation) import, so they cannot
// drift: the records, the outcomes, the log message names, the endpoints and the error
// classes.
//
//	record.go  Attempt and Request: a log line's fields, as tracers and OnAttempt receive them
//	names.go   outcomes, log messages, endpoints, transports, error classes
//	trace.go   Tracer, RequestTrace, AttemptTrace: the hooks a tracing system implements
package record

import (
	"log/slog"
	"time"

	"github.com/fngate/fngate/core/llm"
)

// Attempt is one attempt on one route: what the attempt log line holds and what
// Options.OnAttempt and AttemptTrace.End receive.
type Attempt struct {
	Time          time.Time
	RequestID     string
	Endpoint      string // one of the Endpoint names
	Model         string // gateway model
	Route         string // connection/upstream-model
	Connection    string
	Provider      string // connection kind
	UpstreamModel string
	Residency     string
	Attempt       int // 1-based
	Stream        bool
	Outcome       string // one of the Outcome names
	Status        int    // upstream HTTP status, 0 when none
	// ErrorClass is the provider's failure (one of the ErrorClass names), "" when the provider
	// did not fail. ErrorCode and ErrorMessage say what failed; with no class they are the
	// gateway's own end of the attempt (function_timeout).
	ErrorClass   string
	ErrorCode    string
	ErrorMessage string
	Usage        llm.Usage
	CostUSD      *float64
	Latency      time.Duration
	TTFT         time.Duration // streams: time to the first content, 0 when none
	Labels       []slog.Attr
	// Stop is why the answer ended, as far as the client was sent it; "" when it did not.
	Stop llm.StopReason
	// ResponseModel is the model the upstream says answered, "" when it does not say.
	ResponseModel string
	// Transport is TransportWebSocket for a response.create of the Responses API's WebSocket
	// mode, "" for an HTTP request.
	Transport string
	// Saved is, for OutcomeCacheHit, the usage of the cached answer: what serving it again
	// did not use.
	Saved llm.Usage
}

// Failed reports whether the attempt was a provider failure.
func (a *Attempt) Failed() bool { return a.ErrorClass != "" }

// Request is one request as its log line has it, what RequestTrace.End receives.
type Request struct {
	RequestID string
	Endpoint  string
	Model     string // the gateway model asked for; "" when the body could not say
	Key       string // the client key's name; "" on an open gateway or before authentication
	KeyID     string // a stored key's id (key_...); "" for a config key, whose id is its name
	Stream    bool
	Status    int
	Route     string // the route that answered, or the last one tried
	Attempts  int
	Usage     llm.Usage
	CostUSD   *float64
	Error     *llm.Error // what the client was told, when it was an error
	Latency   time.Duration
	TTFT      time.Duration // streams: until the first content reached the client
	Overhead  time.Duration // the gateway's own time: latency less the time spent on providers
	// Cache is the response cache's result (CacheHit, CacheMiss, CacheBypass), "" when the
	// request's model and key cache nothing; Saved is a hit's cached usage.
	Cache string
	Saved llm.Usage
	// Transport is TransportWebSocket for a response.create of the Responses API's WebSocket
	// mode, "" for an HTTP request.
	Transport string
	// Guardrails are the decisions of the guardrails that checked the request and its
	// answer, in the order they ran.
	Guardrails []Guardrail
}

// Guardrail is one guardrail's decision on a request (its input) or its answer (its output,
// all the windows of a stream in one).
type Guardrail struct {
	Name string
	On   string // GuardrailInput or GuardrailOutput
	Mode string // block, mask or log
	// Action is what the gateway did: one of the GuardrailPass ... names. Under mode log it
	// is GuardrailLogged and WouldBe says what block or mask mode would have done.
	Action  string
	WouldBe string
	// Categories name what matched (policies, filters, entity kinds), never the text.
	Categories []string
	// Error is the failure kind of a service that did not give a verdict ("" when it did);
	// the action is then GuardrailFailedOpen or GuardrailFailedClosed.
	Error string
	// Checks counts the service calls; Cached the texts its verdict cache answered.
	Checks, Cached int
	Latency        time.Duration // the time spent waiting on the service
	Units          int           // what the service metered
	CostUSD        float64       // at the service's published price
}

// ToolCall is one message /mcp forwarded to an upstream MCP server, as its log line has it.
type ToolCall struct {
	RequestID string
	Key       string // the gateway key's name, or oauth:<subject> for an OAuth caller
	KeyID     string // a stored key's id; "" otherwise
	Method    string // tools/call, prompts/get or resources/read
	Server    string // the mcp_servers entry
	Name      string // the upstream's own name of the tool or prompt, or the resource's URI
	Outcome   string // one of the ToolCall... outcomes
	Error     string // what the client was told, when it was not ok
	Latency   time.Duration
	// ArgumentBytes and ResultBytes are the JSON sizes of what the client sent and got.
	ArgumentBytes, ResultBytes int
	// Arguments and Result are the JSON themselves, only under logging.capture_content
	// (and cut to a bound there).
	Arguments, Result []byte
}

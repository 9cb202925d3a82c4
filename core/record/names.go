package record

// Attempt outcomes.
const (
	OutcomeOK           = "ok"
	OutcomeFailover     = "failover"      // failed before output; the next route was tried
	OutcomeError        = "error"         // failed; the client got the error
	OutcomeClientClosed = "client_closed" // the client left; the upstream call was cancelled
	// OutcomeCacheHit is an answer served from the response cache: no upstream call, no
	// usage and no cost; the attempt's Saved is what the cached answer had used.
	OutcomeCacheHit = "cache_hit"
)

// Guardrail directions and actions (record.Guardrail).
const (
	GuardrailInput  = "input"
	GuardrailOutput = "output"

	GuardrailPass         = "pass"
	GuardrailMasked       = "mask"
	GuardrailBlocked      = "block"
	GuardrailLogged       = "log"
	GuardrailFailedOpen   = "error_open"   // the service failed; the request went on unchecked
	GuardrailFailedClosed = "error_closed" // the service failed; the request was refused
)

// MetricGuardrailDecisions counts guardrail decisions (EMF, namespace fngate, dimensions
// Guardrail and Action); MetricGuardrailLatency is each decision's wait on its service.
const (
	MetricGuardrailDecisions = "GuardrailDecisions"
	MetricGuardrailLatency   = "GuardrailLatency"
)

// Response cache results, as the x-fngate-cache header and the request line name them.
const (
	CacheHit    = "hit"    // served from the cache
	CacheMiss   = "miss"   // served upstream; a complete answer is then cached
	CacheBypass = "bypass" // served upstream, the cache neither read nor written
)

// The gateway's log messages. Remediation rules, subscription filters and log sinks match
// MsgProviderError: keep it.
const (
	MsgAttempt       = "attempt"        // INFO: an attempt that did not fail upstream
	MsgProviderError = "provider_error" // ERROR: an attempt the provider failed
	MsgRequest       = "request"        // INFO: one per request, at its end
	// MsgImpossibleUsage (WARN) names a usage count the upstream reported that no real answer
	// has (negative, above 2^31-1, more cached tokens than the prompt): it was treated as
	// unreported, left out of the client's usage and of the cost.
	MsgImpossibleUsage = "impossible_usage"
	// MsgCounterStoreError (ERROR) is a counter call that failed or timed out; the request
	// was served uncounted (on_store_error: open) or refused with a 503 (closed).
	MsgCounterStoreError = "counter_store_error"
	// MsgWebSocket (INFO) is one WebSocket connection, logged when it closes: its id, key, the
	// number of messages it carried, how long it lasted and why it closed.
	MsgWebSocket = "websocket"
	// MsgKeyRefused (WARN) is a request whose secret belongs to a stored key that no longer
	// works (disabled, expired, deleted, or the old secret of a rotated key): its id, name and
	// why. The client got the 401 an unknown key gets.
	MsgKeyRefused = "key_refused"
	// MsgKeyStoreError (ERROR) is the first failed call of a burst of failed key store calls;
	// MsgKeyStoreRecovered (INFO) is the first call that answered after it, with how many
	// failed and for how long. Requests in between are not logged one by one.
	MsgKeyStoreError     = "key_store_error"
	MsgKeyStoreRecovered = "key_store_recovered"
	// MsgUsageDropped (WARN) is usage the history never got because its queue was full: how
	// many requests' since the last such line (at most one a second). MsgUsageError (ERROR)
	// is a history write that failed (its key, model, day and requests). Neither touched a
	// client's answer.
	MsgUsageDropped = "usage_dropped"
	MsgUsageError   = "usage_history_error"
	// MsgCacheError (ERROR) is a response cache call that failed or timed out (op read or
	// write): the request was served as a miss, its answer not cached. MsgCacheSkipped
	// (INFO) is a complete answer not cached because the store cannot hold it (too large)
	// or the write queue was full.
	MsgCacheError   = "cache_error"
	MsgCacheSkipped = "cache_skipped"
)

// MetricCounterStoreErrors counts failed counter calls (EMF, namespace fngate, dimension
// OnStoreError).
const MetricCounterStoreErrors = "CounterStoreErrors"

// MetricUsageDropped counts requests whose usage the history dropped (a full queue), and
// MetricUsageErrors failed history writes (EMF, namespace fngate, no dimension).
const (
	MetricUsageDropped = "UsageDropped"
	MetricUsageErrors  = "UsageHistoryErrors"
)

// MetricCacheErrors counts failed response cache calls (EMF, namespace fngate, dimension Op).
const MetricCacheErrors = "CacheErrors"

// Endpoints, as records and log lines name them.
const (
	EndpointChat           = "chat"            // POST /v1/chat/completions
	EndpointCompletions    = "completions"     // POST /v1/completions
	EndpointMessages       = "messages"        // POST /v1/messages
	EndpointCountTokens    = "count_tokens"    // POST /v1/messages/count_tokens
	EndpointResponses      = "responses"       // POST /v1/responses, and each response.create of its WebSocket mode
	EndpointCompact        = "compact"         // POST /v1/responses/compact
	EndpointEmbeddings     = "embeddings"      // POST /v1/embeddings
	EndpointGetResponse    = "get_response"    // GET /v1/responses/{id}
	EndpointDeleteResponse = "delete_response" // DELETE /v1/responses/{id}
	EndpointMCP            = "mcp"             // POST and DELETE /mcp
)

// TransportWebSocket names the WebSocket mode in log lines (transport) and traces
// (fngate.transport).
const TransportWebSocket = "websocket"

// ErrorClass is the kind of an upstream failure. It decides failover, the client's status and
// what the remediation handlers do. The names are logged and matched by event rules: keep
// them.
type ErrorClass string

const (
	RateLimited  ErrorClass = "rate_limited" // 429: busy, keep Retry-After
	Overloaded   ErrorClass = "overloaded"   // Anthropic 529 and the like: busy
	Unavailable  ErrorClass = "unavailable"  // 5xx, connection refused or reset
	Timeout      ErrorClass = "timeout"      // no first byte in time, 408, 504
	Auth         ErrorClass = "auth"         // our provider credentials were refused
	NotFound     ErrorClass = "not_found"    // the provider does not know the model
	Unsupported  ErrorClass = "unsupported"  // the provider cannot serve this operation
	BadRequest   ErrorClass = "bad_request"  // the provider rejected the request itself
	StreamBroken ErrorClass = "stream_broken"
)

// MsgToolCall (INFO) is one message /mcp forwarded to an upstream MCP server (tools/call,
// prompts/get, resources/read), logged when it ends: record.ToolCall.
const MsgToolCall = "mcp_tool_call"

// Tool call outcomes (ToolCall.Outcome).
const (
	ToolCallOK        = "ok"
	ToolCallToolError = "tool_error" // the upstream answered with isError: the tool failed
	ToolCallRefused   = "refused"    // outside the caller's mcp access, or unknown
	ToolCallLimited   = "rate_limited"
	ToolCallUpstream  = "upstream_error" // unreachable, or answered with an error or garbage
	ToolCallTimeout   = "timeout"
	ToolCallTooLarge  = "too_large" // the upstream's answer passed the result size bound
	ToolCallClosed    = "client_closed"
)

// Package responses is the OpenAI Responses front door's wire, as core/messages is
// Anthropic's: strict decoding of POST /v1/responses into the gateway's request, and the
// encoding of response objects, stream events and errors in OpenAI's shapes.
//
//	responses.go  Request: what the door keeps beside llm.Request
//	decode.go     the request body -> Request, refusing what OpenAI refuses
//	tools.go      tools, tool_choice, text.format, reasoning, include
//	items.go      input items (and a continued response's) -> llm messages
//	errors.go     OpenAI's refusals, with the field in OpenAI's notation (input[3].content[0].text)
//	encode.go     llm.Answer -> the response object (every member the Responses API's has); usage
//	stream.go     llm.Delta -> response.created ... response.completed events
//	ids.go        response and item ids: an item id names the response holding it
//	references.go item_reference input items to the gateway's own items, resolved from the store
//	raw.go        a native upstream's own objects and events, with the gateway's names patched in
//	compact.go    POST /v1/responses/compact: its body, the summary request, the compacted
//	              object; compaction items given back as input
//
// "Strict" here means the Responses wire as OpenAI serves it: a field OpenAI accepts is
// accepted, and either honoured by the route or refused by it with the reason; a field OpenAI
// would reject is rejected here. What only OpenAI's own Responses API can honour (hosted tools,
// items and include values the gateway does not model, settings no other backend has) is kept
// in llm.Request.Responses, verbatim for the native route (the openai kind) and as a refusal
// naming the field for every other one.
//
// What each translated route does with a field (docs/responses.md's tables say the same):
//
//	instructions, system/developer messages  the up-front instructions, developer ones as system
//	                                         (later ones are hoisted)
//	text, images, function tools, results    translated
//	namespace tools                          their functions as <namespace>__<name> (tools.go), the
//	                                         model's calls given back as {namespace, name}
//	strict                                   honoured where the backend enforces schemas, else refused;
//	                                         absent is read as not asking (OpenAI defaults it on)
//	parallel_tool_calls: false               llm.ToolChoice.DisableParallel
//	reasoning.summary                        honoured: the backend's reasoning, where it exposes any,
//	                                         comes back as reasoning items with summary_text
//	reasoning.effort                         where the backend takes an effort, else refused; none
//	                                         is honoured everywhere
//	reasoning items from earlier turns       sent back to Anthropic-wire backends when they made
//	                                         them (their signature is the item's encrypted_content),
//	                                         left out elsewhere, as Anthropic itself leaves earlier
//	                                         turns' thinking out of the context
//	include: reasoning.encrypted_content     honoured: the signature of Anthropic thinking
//	text.format                              llm.ResponseFormat, where the backend can hold to it
//	prompt_cache_key                         a caching hint (backends cache by themselves), and the
//	                                         session the weighted policy keeps on one route
//	prompt_cache_retention: in_memory, truncation: disabled, service_tier: auto|default,
//	text.verbosity: medium, top_logprobs: 0  what every backend does anyway
//	metadata, user, safety_identifier        log labels, repeated in the response object
//	client_metadata                          the client's own telemetry; sent to the native route only
//	image detail, message phase              hints, accepted everywhere
//	item_reference to an item the gateway    the item itself, read from the response store by the
//	made                                     door (references.go); OpenAI's own: the native route
//	background: true                         refused on every route: nothing keeps a response running
//	compaction items                         the gateway's own (POST /v1/responses/compact on a
//	                                         translated route): opened into a user message with
//	                                         the summary, for every route; OpenAI's: the native
//	                                         route only
//	everything else OpenAI defines           the native route only
package responses

import (
	"encoding/json"

	"github.com/fngate/fngate/core/llm"
)

// Bounds of the door's own. How many input items (a continued response's included) and tools
// a request may carry is configurable (llm.Limits: MaxMessages counts the items).
const (
	// maxNesting bounds JSON nesting; items and tool schemas need far less.
	maxNesting = 128
	// maxMetadataPairs, maxMetadataKey and maxMetadataValue are OpenAI's metadata bounds.
	maxMetadataPairs = 16
	maxMetadataKey   = 64
	maxMetadataValue = 512
)

// Request is a decoded POST /v1/responses: the gateway's request and what the door itself
// needs to answer and to store the response.
type Request struct {
	// LLM is the gateway's request. Its Messages are built by Continue.
	LLM *llm.Request
	// Store is whether the client asked for the response to be kept (store; absent is true,
	// as in OpenAI's API).
	Store bool
	// PreviousResponseID is previous_response_id: the stored response this one continues.
	PreviousResponseID string
	// Items are the request's own input items, verbatim (a string input as the one user
	// message item it means): what a stored response keeps besides its continued history.
	Items []json.RawMessage
	// IncludeEncrypted is include: reasoning.encrypted_content.
	IncludeEncrypted bool
	// Summary is reasoning.summary (auto, concise, detailed), "" when not asked.
	Summary string
	// WarmUp, set before Continue, reads a request that asks for no answer (the WebSocket
	// mode's generate: false): its conversation may hold instructions alone, as Codex's
	// prewarm does, for the next turn to add to.
	WarmUp bool

	// echo holds the raw values of the fields the response object repeats.
	echo map[string][]byte
	// own are the request's items decoded, with their paths.
	own []item
	// refs are the indexes in own of item_reference items to the gateway's items.
	refs []int
	// conv is the whole conversation, a continued response's items first, once Continue
	// built it.
	conv []item
	// sealed counts the gateway-sealed compaction items among own (Unseal opens them).
	sealed int
	// namespaced maps the flattened name of each function of a namespace tool to its
	// namespace and name, to give a translated route's calls back as the client named them.
	namespaced map[string]namespacedName
	lim        llm.Limits
}

// Echo returns the raw value the client sent for a field the response object repeats, or
// nil.
func (r *Request) Echo(field string) []byte { return r.echo[field] }

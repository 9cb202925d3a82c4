// Package openaicompat serves every provider that speaks OpenAI's Chat Completions wire:
// OpenAI itself, OpenRouter, vLLM, SGLang, Ollama and any OpenAI-compatible server. One
// implementation, one profile per kind saying where the servers differ.
//
//	chat.go, body.go, stream.go, wireparse.go  Chat Completions: the request, answer and chunks
//	completions.go                              the legacy Completions
//	check.go                                    what each kind refuses
//	responses.go                                the Responses door on OpenAI itself: its own
//	                                            Responses API, answers and events passed through
//	compact.go                                  POST /v1/responses/compact on OpenAI itself
//	embeddings.go                               /embeddings, OpenAI's wire on every kind
//	profiles.go, export.go                      the kinds; what Vertex AI's partner models reuse
package openaicompat

import (
	"github.com/fngate/fngate/core/providers"
)

// toolChoiceSupport says which tool_choice values a kind accepts.
type toolChoiceSupport int

const (
	toolChoiceAll      toolChoiceSupport = iota
	toolChoiceAutoNone                   // generic servers: auto and none only
	toolChoiceNone                       // Ollama: no explicit tool_choice at all
)

type profile struct {
	kind           string
	name           string // display name in messages
	defaultBaseURL string
	// maxTokensField is the upstream name of the output maximum: OpenAI wants
	// max_completion_tokens; OpenRouter documents max_tokens; Ollama knows only max_tokens.
	maxTokensField string
	strictTools    bool // strict function schemas are honoured
	toolChoice     toolChoiceSupport
	requireAPIKey  bool
	// topK, parallelToolCalls and reasoningEffort: the server takes top_k,
	// parallel_tool_calls and reasoning_effort.
	topK              bool
	parallelToolCalls bool
	reasoningEffort   bool
	// seed and penalties: the server takes seed, presence_penalty and frequency_penalty.
	seed, penalties bool
	// format is the response_format the server holds its answers to.
	format formatSupport
	// names: the server carries messages[].name to the model.
	names bool
	// dataImagesOnly: the server reads images as base64 data URLs only, not by URL.
	dataImagesOnly bool
	// requireParameters asks OpenRouter to route only to providers that take every
	// parameter sent (provider.require_parameters), so none is ignored there.
	requireParameters bool
}

// formatSupport says which response_format types a kind honours.
type formatSupport int

const (
	formatText   formatSupport = iota // none: the answer is text
	formatSchema                      // json_object and json_schema
)

// profiles: what each kind's servers take, from their documentation. seed and the penalties
// are part of the Chat Completions wire every such server implements. Structured output:
// OpenAI and OpenRouter (with require_parameters) natively, vLLM and SGLang by guided
// decoding, Ollama by its format grammar; a generic server may ignore response_format
// without a word, so it is refused there. Participant names reach the model only on OpenAI:
// other servers' chat templates drop them.
var profiles = map[string]profile{
	"openai": {kind: "openai", name: "OpenAI", defaultBaseURL: "https://api.openai.com/v1",
		maxTokensField: "max_completion_tokens", strictTools: true, requireAPIKey: true,
		parallelToolCalls: true, reasoningEffort: true, seed: true, penalties: true, format: formatSchema, names: true},
	"openrouter": {kind: "openrouter", name: "OpenRouter", defaultBaseURL: "https://openrouter.ai/api/v1",
		maxTokensField: "max_tokens", strictTools: true, requireAPIKey: true,
		topK: true, parallelToolCalls: true, reasoningEffort: true, seed: true, penalties: true, format: formatSchema,
		requireParameters: true},
	"vllm": {kind: "vllm", name: "vLLM", defaultBaseURL: "http://127.0.0.1:8000/v1",
		maxTokensField: "max_tokens", topK: true, parallelToolCalls: true, seed: true, penalties: true, format: formatSchema},
	"sglang": {kind: "sglang", name: "SGLang", defaultBaseURL: "http://127.0.0.1:30000/v1",
		maxTokensField: "max_tokens", topK: true, parallelToolCalls: true, seed: true, penalties: true, format: formatSchema},
	"openai-compatible": {kind: "openai-compatible", name: "the OpenAI-compatible server",
		maxTokensField: "max_tokens", toolChoice: toolChoiceAutoNone, seed: true, penalties: true},
	"ollama": {kind: "ollama", name: "Ollama", defaultBaseURL: "http://127.0.0.1:11434/v1",
		maxTokensField: "max_tokens", toolChoice: toolChoiceNone, seed: true, penalties: true, format: formatSchema,
		dataImagesOnly: true},
}

// Register adds every OpenAI-wire kind to r.
func Register(r providers.Registry) {
	for kind := range profiles {
		r[kind] = New
	}
}

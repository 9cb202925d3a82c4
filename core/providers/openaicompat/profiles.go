// Package openaicompat serves every provider that speaks OpenAI's Chat Completions wire:
// OpenAI itself, OpenRouter, vLLM, SGLang, Ollama and any OpenAI-compatible server. One
// implementation, one profile per kind saying where the servers differ. Their /embeddings
// endpoint, OpenAI's wire too, is in embeddings.go.
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
}

var profiles = map[string]profile{
	"openai": {kind: "openai", name: "OpenAI", defaultBaseURL: "https://api.openai.com/v1",
		maxTokensField: "max_completion_tokens", strictTools: true, requireAPIKey: true,
		parallelToolCalls: true, reasoningEffort: true},
	"openrouter": {kind: "openrouter", name: "OpenRouter", defaultBaseURL: "https://openrouter.ai/api/v1",
		maxTokensField: "max_tokens", strictTools: true, requireAPIKey: true,
		topK: true, parallelToolCalls: true, reasoningEffort: true},
	"vllm": {kind: "vllm", name: "vLLM", defaultBaseURL: "http://127.0.0.1:8000/v1",
		maxTokensField: "max_tokens", topK: true, parallelToolCalls: true},
	"sglang": {kind: "sglang", name: "SGLang", defaultBaseURL: "http://127.0.0.1:30000/v1",
		maxTokensField: "max_tokens", topK: true, parallelToolCalls: true},
	"openai-compatible": {kind: "openai-compatible", name: "the OpenAI-compatible server",
		maxTokensField: "max_tokens", toolChoice: toolChoiceAutoNone},
	"ollama": {kind: "ollama", name: "Ollama", defaultBaseURL: "http://127.0.0.1:11434/v1",
		maxTokensField: "max_tokens", toolChoice: toolChoiceNone},
}

// Register adds every OpenAI-wire kind to r.
func Register(r providers.Registry) {
	for kind := range profiles {
		r[kind] = New
	}
}

package otel

// providerName is gen_ai.provider.name for a connection kind: the convention's own value
// where it has one, the kind itself for servers it does not name (an OpenAI-compatible vLLM
// is not OpenAI).
func providerName(kind string) string {
	switch kind {
	case "bedrock":
		return "aws.bedrock"
	case "vertex":
		return "gcp.vertex_ai"
	case "mock":
		return "fngate.mock"
	case "":
		return "_OTHER"
	}
	return kind // openai, anthropic, openrouter, vllm, sglang, ollama, openai-compatible
}

// operationName is gen_ai.operation.name for a door (the gateway's endpoint names).
func operationName(endpoint string) string {
	switch endpoint {
	case "completions":
		return "text_completion"
	case "embeddings":
		return "embeddings"
	case "count_tokens":
		return "count_tokens" // not a convention value: Anthropic's token count
	}
	return "chat" // chat, messages, responses
}

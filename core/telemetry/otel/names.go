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
// Endpoints the conventions have no operation for keep their own name: count_tokens
// (Anthropic's token count), get_response and delete_response (a stored response), compact
// (POST /v1/responses/compact).
func operationName(endpoint string) string {
	switch endpoint {
	case "chat", "messages", "responses":
		return "chat"
	case "completions":
		return "text_completion"
	}
	return endpoint
}

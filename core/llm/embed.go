package llm

// EmbedRequest is one embeddings request (POST /v1/embeddings), decoded and checked by its
// door. Like Request it is read-only to providers: on failover the same request goes to the
// next route.
type EmbedRequest struct {
	Model string // the gateway model asked for

	// Input holds the texts to embed, in the client's order; none is empty. Nil when the
	// client sent token ids instead.
	Input []string
	// Tokens holds token-id arrays instead of texts (OpenAI's input of integers), in the
	// client's order; none is empty. Only routes whose upstream reads token ids of its own
	// tokenizer take them.
	Tokens [][]int

	// Dimensions is the vector length the client asked for; nil takes the gateway model's.
	Dimensions *int

	// User is a log label; never sent upstream.
	User string
}

// Len is the number of inputs, texts or token arrays.
func (r *EmbedRequest) Len() int {
	if r.Tokens != nil {
		return len(r.Tokens)
	}
	return len(r.Input)
}

// Embeddings is the answer to an EmbedRequest: one vector per input, in the order of the
// inputs, each as long as asked. Vectors are float32, the precision every backend computes
// in and OpenAI's base64 encoding carries.
type Embeddings struct {
	Vectors [][]float32
	// Usage holds the input tokens as reported (InputTokens, TotalTokens); an embedding has
	// no output.
	Usage Usage
}

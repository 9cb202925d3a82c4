package openai

import "github.com/fngate/fngate/core/llm"

// CompletionRequest is the subset of the legacy POST /v1/completions the gateway serves: one
// string prompt and one choice. In this API max_tokens is the current name, not a legacy one.
type CompletionRequest struct {
	Model         string         `json:"model"`
	Prompt        *string        `json:"prompt"`
	MaxTokens     *int           `json:"max_tokens"`
	Temperature   *float64       `json:"temperature"`
	Stream        bool           `json:"stream"`
	StreamOptions *StreamOptions `json:"stream_options"`
	N             *int           `json:"n"`
	User          string         `json:"user"`
}

// IncludeUsage reports whether the client asked for the final usage chunk.
func (r *CompletionRequest) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// DecodeCompletion decodes and validates a legacy completion request body.
func DecodeCompletion(body []byte) (*CompletionRequest, *llm.Error) {
	req := new(CompletionRequest)
	if e := decodeStrict(body, req); e != nil {
		if e.Param == "prompt" && e.Code == "" { // a type error, not a refused key
			e = llm.Unsupported("prompt", "prompt must be a single string: prompt arrays and token arrays are not supported")
		}
		return nil, e
	}
	if e := req.validate(); e != nil {
		return nil, e
	}
	return req, nil
}

func (r *CompletionRequest) validate() *llm.Error {
	switch {
	case r.Model == "":
		return llm.BadRequest("model", "you must provide a model parameter")
	case r.Prompt == nil:
		return llm.BadRequest("prompt", "prompt is required")
	case r.MaxTokens != nil && *r.MaxTokens < 1:
		return llm.BadRequest("max_tokens", "max_tokens must be at least 1")
	case r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 2):
		return llm.BadRequest("temperature", "temperature must be between 0 and 2")
	case r.N != nil && *r.N != 1:
		return llm.Unsupported("n", "n must be 1: the gateway returns exactly one choice")
	case r.StreamOptions != nil && !r.Stream:
		return llm.BadRequest("stream_options", "stream_options is only allowed when stream is true")
	}
	return nil
}

// Request converts the decoded request into the gateway's.
func (r *CompletionRequest) Request() *llm.Request {
	return &llm.Request{
		Op:             llm.OpCompletion,
		Model:          r.Model,
		Prompt:         *r.Prompt,
		MaxTokens:      r.MaxTokens,
		MaxTokensParam: "max_tokens",
		Temperature:    r.Temperature,
		Stream:         r.Stream,
		User:           r.User,
	}
}

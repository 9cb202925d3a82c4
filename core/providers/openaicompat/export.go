package openaicompat

import (
	"io"
	"net/http"

	"github.com/fngate/fngate/core/llm"
)

// NewStream translates an OpenAI chat.completion.chunk event stream read from body, for
// providers that reach an OpenAI-wire endpoint through their own transport and credentials
// (Vertex AI's OpenAI-compatible endpoint). Usage chunks and in-band error events are
// handled as for the kinds of this package; the stream ends with io.EOF only after [DONE],
// implements llm.Pending, and closes body.
func NewStream(body io.ReadCloser, provider string) llm.Stream {
	return newStream(body, provider)
}

// ReadAnswer reads and parses a whole chat.completion from a 2xx resp, for the same providers
// as NewStream, with this package's bounds: at most 32 MB read, nesting and tool calls
// bounded by the one-pass parser (wireparse.go), never encoding/json into unbounded types.
// An unreadable answer, or one without choices, is an unavailable *providers.Error naming
// provider. It does not close resp.Body.
func ReadAnswer(resp *http.Response, provider string) (*llm.Answer, error) {
	var out completion
	if err := readCompletion(resp, &out, provider); err != nil {
		return nil, err
	}
	return out.answer(llm.OpChat), nil
}

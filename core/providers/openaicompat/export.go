package openaicompat

import (
	"io"

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

package providers

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
)

// RefuseExtended refuses the request fields a provider does not translate yet: OpenAI's seed,
// presence and frequency penalties, structured output, and participant names. No door sends
// them under the strict profile; a provider calls this from Check until it honours each one,
// so none is ever silently dropped.
func RefuseExtended(req *llm.Request, provider string) *llm.Error {
	switch {
	case req == nil:
		return nil
	case req.Seed != nil:
		return llm.Unsupported("seed", provider+" routes do not take seed")
	case req.PresencePenalty != nil:
		return llm.Unsupported("presence_penalty", provider+" routes do not take presence_penalty")
	case req.FrequencyPenalty != nil:
		return llm.Unsupported("frequency_penalty", provider+" routes do not take frequency_penalty")
	case req.ResponseFormat != nil && req.ResponseFormat.Type != llm.FormatText:
		return llm.Unsupported("response_format", provider+" routes do not take structured output")
	}
	for i := range req.Messages {
		if req.Messages[i].Name != "" {
			p := "messages[" + strconv.Itoa(i) + "].name"
			return llm.Unsupported(p, provider+" routes do not take participant names")
		}
	}
	return nil
}

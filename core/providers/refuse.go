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
		param := req.ResponseFormat.Param
		if param == "" {
			param = "response_format"
		}
		return llm.Unsupported(param, provider+" routes do not take structured output")
	}
	for i := range req.Messages {
		if req.Messages[i].Name != "" {
			p := "messages[" + strconv.Itoa(i) + "].name"
			return llm.Unsupported(p, provider+" routes do not take participant names")
		}
	}
	return nil
}

// RefuseResponses refuses, on a route that does not speak the Responses API itself, what of
// a Responses request only OpenAI's own Responses API can honour (req.Responses.Only: hosted
// tools, items and include values the gateway does not model, settings no other backend has)
// and, unless the provider sets how hard its model reasons (effort), reasoning.effort. Every
// provider but the native one calls it from Check, so none is ever silently dropped.
func RefuseResponses(req *llm.Request, provider string, effort bool) *llm.Error {
	if req == nil || req.Responses == nil {
		return nil
	}
	r := req.Responses
	if oe := r.Refusal(); oe != nil {
		return oe
	}
	if r.Effort != "" && !effort {
		return llm.Unsupported("reasoning.effort", provider+" routes cannot be told how hard to reason: leave reasoning.effort out (the model decides)")
	}
	return nil
}

package providers

import "github.com/fngate/fngate/core/llm"

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

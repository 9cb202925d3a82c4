package providers

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
)

// The refusals of the extended profile's fields a route lacks, shared so every provider says
// the same thing. Each provider's Check calls those its routes need: a field a route cannot
// honour is refused there, never dropped.

// CheckSeed refuses a seed on a route whose backend takes none.
func CheckSeed(req *llm.Request, provider string) *llm.Error {
	if req.Seed != nil {
		return llm.Unsupported("seed", provider+" does not take a seed: leave seed out or pick a route that takes one")
	}
	return nil
}

// CheckPenalties refuses presence and frequency penalties on a route without them.
func CheckPenalties(req *llm.Request, provider string) *llm.Error {
	switch {
	case req.PresencePenalty != nil:
		return llm.Unsupported("presence_penalty", provider+" does not take presence_penalty")
	case req.FrequencyPenalty != nil:
		return llm.Unsupported("frequency_penalty", provider+" does not take frequency_penalty")
	}
	return nil
}

// CheckNames refuses a participant name (messages[].name) on a route that cannot carry one,
// unless the operator lets such routes leave names out (request_profile_ignore:
// [messages.name], llm.Request.NamesOptional).
func CheckNames(req *llm.Request, provider string) *llm.Error {
	if req.NamesOptional {
		return nil
	}
	for i := range req.Messages {
		if req.Messages[i].Name != "" {
			p := "messages[" + strconv.Itoa(i) + "].name"
			return llm.Unsupported(p, provider+" cannot carry participant names ("+p+"): leave name out, or have the operator list messages.name in request_profile_ignore")
		}
	}
	return nil
}

// CheckResponseFormat refuses structured output on a route that cannot give it.
func CheckResponseFormat(req *llm.Request, provider string) *llm.Error {
	if req.ResponseFormat.JSON() {
		return llm.Unsupported(req.ResponseFormat.ParamName(), provider+" cannot be held to a JSON response_format")
	}
	return nil
}

package providers

import (
	"encoding/json"
	"strings"

	"github.com/fngate/fngate/core/llm"
)

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

// OnlyClearsThinking reports whether a context_management config (Anthropic's, on a request
// from the Messages door) only clears thinking (clear_thinking_* edits): a route whose backend
// is never sent earlier turns' thinking honours that already, so its Check lets it pass.
func OnlyClearsThinking(raw json.RawMessage) bool {
	var cm struct {
		Edits []struct {
			Type string `json:"type"`
		} `json:"edits"`
	}
	if json.Unmarshal(raw, &cm) != nil {
		return false
	}
	for _, e := range cm.Edits {
		if !strings.HasPrefix(e.Type, "clear_thinking") {
			return false
		}
	}
	return true
}

// ValidBase64 reports whether base64.StdEncoding decodes s (padded, line breaks anywhere
// ignored, as it ignores them), without decoding it: a route's Check proves an image's data
// decodable, so its builder decodes it once and trusts the result. "" decodes (to nothing).
func ValidBase64(s string) bool {
	n, pad := 0, 0 // symbols and '=' seen, line breaks aside
	for i := 0; i < len(s); {
		// Images are long runs of symbols: eight at a time, one branch.
		if i+8 <= len(s) && pad == 0 {
			if b64[s[i]]&b64[s[i+1]]&b64[s[i+2]]&b64[s[i+3]]&b64[s[i+4]]&b64[s[i+5]]&b64[s[i+6]]&b64[s[i+7]] == 1 {
				n, i = n+8, i+8
				continue
			}
		}
		switch c := s[i]; {
		case b64[c] == 1 && pad == 0:
			n++
		case c == '=':
			pad++
		case c != '\r' && c != '\n':
			return false // not base64, or a symbol after the padding
		}
		i++
	}
	// The last quantum is four symbols, or two or three and the padding that makes it four.
	switch n % 4 {
	case 0:
		return pad == 0
	case 2:
		return pad == 2
	case 3:
		return pad == 1
	}
	return false
}

// b64 is 1 for the symbols of the standard base64 alphabet.
var b64 = func() (t [256]uint8) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = 1
	}
	return t
}()

package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"path"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// authenticate checks the bearer key against every configured hash without an early exit,
// so timing reveals neither which key matched nor how much of one did.
//
// The key comes as Authorization: Bearer (OpenAI's SDKs, Claude Code's ANTHROPIC_AUTH_TOKEN)
// or x-api-key (Anthropic's SDKs, Claude Code's ANTHROPIC_API_KEY).
func (g *Gateway) authenticate(r *http.Request) (*config.Key, *llm.Error) {
	if g.open {
		return nil, nil
	}
	token, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		token = r.Header.Get("X-Api-Key")
	}
	if token == "" {
		return nil, &llm.Error{Status: http.StatusUnauthorized, Type: llm.TypeAuthentication, Code: "missing_api_key",
			Message: "Missing authentication: send Authorization: Bearer <gateway key> (or x-api-key: <gateway key>)"}
	}
	sum := sha256.Sum256([]byte(token))
	match := -1
	for i := range g.keys {
		if subtle.ConstantTimeCompare(sum[:], g.keys[i].Hash[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, &llm.Error{Status: http.StatusUnauthorized, Type: llm.TypeAuthentication, Code: "invalid_api_key",
			Message: "Incorrect API key provided"}
	}
	return &g.keys[match], nil
}

// allowsModel applies the key's model globs.
func allowsModel(k *config.Key, model string) bool {
	if k == nil || len(k.Models) == 0 {
		return true
	}
	for _, g := range k.Models {
		if ok, _ := path.Match(g, model); ok {
			return true
		}
	}
	return false
}

// bearer returns the credentials of a Bearer authorization; the scheme is case-insensitive
// (RFC 9110 11.1).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// profile is the request profile of a key's requests; with no key (an open gateway), the
// config's.
func (g *Gateway) profile(k *config.Key) openai.Profile {
	if k == nil {
		return g.openProfile
	}
	return openai.Profile{Extended: k.Extended(), NamesOptional: k.Ignores(config.IgnoreMessageNames)}
}

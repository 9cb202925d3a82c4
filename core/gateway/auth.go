package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"path"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// clientKey is a key the gateway serves: one from config, built at New, or a stored key as
// an instance's key cache holds it (keycache.go). Both are served alike; everything that
// follows a key (its counters, stored responses, compaction items, WebSocket connections)
// follows its ID, which is a config key's name.
type clientKey struct {
	config.Key
	// rules are the key's limits (limits.go), compiled once; nil when it has none.
	rules []*rule
	// stored marks a key issued at runtime: log lines and traces add its id (key_id).
	stored bool
}

// findKey finds the request's key: a config key first, checked against every
// configured hash without an early exit, so timing reveals neither which key matched nor how
// much of one did; then, with a key store, the stored key of that secret (keycache.go).
//
// The key comes as Authorization: Bearer (OpenAI's SDKs, Claude Code's ANTHROPIC_AUTH_TOKEN)
// or x-api-key (Anthropic's SDKs, Claude Code's ANTHROPIC_API_KEY).
func (g *Gateway) findKey(r *http.Request, rc *requestCtx) (*clientKey, *llm.Error) {
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
	if match >= 0 {
		return &g.keys[match], nil
	}
	if g.stored != nil {
		return g.stored.find(r.Context(), sum, rc)
	}
	return nil, invalidKey()
}

// invalidKey is the answer to a secret that opens nothing: unknown, or a stored key's that
// no longer works. The client is not told which.
func invalidKey() *llm.Error {
	return &llm.Error{Status: http.StatusUnauthorized, Type: llm.TypeAuthentication, Code: "invalid_api_key",
		Message: "Incorrect API key provided"}
}

// allowsModel applies the key's model globs.
func allowsModel(k *clientKey, model string) bool {
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
func (g *Gateway) profile(k *clientKey) openai.Profile {
	if k == nil {
		return g.openProfile
	}
	return openai.Profile{Extended: k.Extended(), NamesOptional: k.Ignores(config.IgnoreMessageNames)}
}

// appendKey adds the key's name, and a stored key's id, to a log line's attributes.
func appendKey(attrs []slog.Attr, k *clientKey) []slog.Attr {
	if k == nil {
		return attrs
	}
	if k.stored {
		return append(attrs, slog.String("key", k.Name), slog.String("key_id", k.ID))
	}
	return append(attrs, slog.String("key", k.Name))
}

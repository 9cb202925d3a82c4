package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"path"
	"strings"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/openai"
)

// authenticate checks the bearer key against every configured hash without an early exit,
// so timing reveals neither which key matched nor how much of one did.
func (g *Gateway) authenticate(r *http.Request) (*config.Key, *openai.Error) {
	if g.open {
		return nil, nil
	}
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return nil, &openai.Error{Status: http.StatusUnauthorized, Type: openai.TypeAuthentication, Code: "missing_api_key",
			Message: "Missing bearer authentication in header: send Authorization: Bearer <gateway key>"}
	}
	sum := sha256.Sum256([]byte(token))
	match := -1
	for i := range g.keys {
		if subtle.ConstantTimeCompare(sum[:], g.keys[i].Hash[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, &openai.Error{Status: http.StatusUnauthorized, Type: openai.TypeAuthentication, Code: "invalid_api_key",
			Message: "Incorrect API key provided"}
	}
	return &g.keys[match], nil
}

// bearerToken returns the credentials of a Bearer authorization. The scheme is
// case-insensitive and may be followed by several spaces (RFC 9110 section 11.4: credentials =
// auth-scheme [ 1*SP ...]); clients and proxies that send "bearer" exist.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	return token, token != ""
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

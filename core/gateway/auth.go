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
	h := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || token == "" {
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

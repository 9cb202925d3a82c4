package gateway

import (
	"net/http"

	"github.com/fngate/fngate/core/llm"
)

// CodeResidencyMismatch is the error code of a key refused by a region outside its residency.
const CodeResidencyMismatch = "residency_mismatch"

// authenticate finds the request's key (findKey) and holds it to this region's residency: in
// a deployment across regions a key pinned to a residency is served only by the regions of
// that residency (config region.residency), whatever front end brought it here. The front
// ends route by residency where they can (docs/deploy.md); this is the check that holds when
// they cannot, or when a client calls a regional endpoint directly. A 403 is not retried by
// the OpenAI or Anthropic SDKs, which is right: another try reaches the same region.
func (g *Gateway) authenticate(r *http.Request, rc *requestCtx) (*clientKey, *llm.Error) {
	k, oe := g.findKey(r, rc)
	if oe != nil || k == nil || k.Residency == "" || g.region.Residency == "" || k.Residency == g.region.Residency {
		return k, oe
	}
	where := "this region"
	if g.region.Name != "" {
		where = g.region.Name
	}
	return nil, &llm.Error{Status: http.StatusForbidden, Type: llm.TypePermission, Code: CodeResidencyMismatch,
		Message: "This key is pinned to residency " + k.Residency + "; " + where + " serves residency " + g.region.Residency + ": call the gateway's " + k.Residency + " endpoint"}
}

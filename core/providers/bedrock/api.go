package bedrock

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// api is the Bedrock runtime API a route's model is called through.
type api uint8

const (
	// viaConverse: Converse / ConverseStream, Bedrock's own wire, translated from llm.Request.
	viaConverse api = iota
	// viaInvoke: InvokeModel / InvokeModelWithResponseStream carrying Anthropic's Messages body,
	// for Claude.
	viaInvoke
)

// Route api values (config route.api).
const (
	apiConverse = "converse"
	apiInvoke   = "invoke"
)

// apiOf picks the API of a route: its api setting when it has one, otherwise invoke for
// Claude models and converse for every other model. ok is false for an api value this
// provider does not know.
func apiOf(t providers.Target) (a api, ok bool) {
	switch strings.ToLower(t.API) {
	case "":
		if claude(t.Model) {
			return viaInvoke, true
		}
		return viaConverse, true
	case apiConverse:
		return viaConverse, true
	case apiInvoke:
		return viaInvoke, true
	}
	return viaConverse, false
}

// claude reports whether a model id names an Anthropic Claude model: a foundation model
// (anthropic.claude-...), a cross-region inference profile (us.anthropic.claude-...,
// global.anthropic.claude-...) or an ARN of either. Application inference profiles and
// provisioned throughput ARNs do not show the model; such routes set api: invoke.
func claude(model string) bool {
	return strings.Contains(strings.ToLower(model), "anthropic.claude")
}

// nova reports whether a model id names an Amazon Nova model, whose Converse options differ
// from other models' (top_k, see converseExtras).
func nova(model string) bool {
	return strings.Contains(strings.ToLower(model), "amazon.nova")
}

// converseExtras reports whether a model takes Converse's cachePoint blocks and a tool
// result's status: Bedrock documents both only for Anthropic Claude and Amazon Nova models.
// Other models get neither: a cache_control hint is left out (they do not cache prompts),
// and a failed tool result says "Error: " in its text instead.
func converseExtras(model string) bool {
	return claude(model) || nova(model)
}

// badAPI is the refusal of a route whose api names no Bedrock API: a configuration mistake,
// so a server error rather than the client's 400.
func badAPI(t providers.Target) *llm.Error {
	return &llm.Error{Status: http.StatusInternalServerError, Type: llm.TypeServer, Code: "route_misconfigured",
		Message: "the Amazon Bedrock route for " + t.Model + " has api " + strconv.Quote(t.API) + "; it must be converse or invoke"}
}

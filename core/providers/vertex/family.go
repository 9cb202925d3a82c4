package vertex

import (
	"strings"

	"github.com/fngate/fngate/core/jsonx"
	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Family is the wire a route's model speaks on Vertex AI.
type Family string

const (
	// Gemini: GenerateContent / StreamGenerateContent on publishers/google/models/{model}.
	Gemini Family = "gemini"
	// Claude: RawPredict / StreamRawPredict on publishers/anthropic/models/{model}, carrying
	// Anthropic's Messages body.
	Claude Family = "claude"
	// MaaS: partner models (Llama, Mistral, DeepSeek, ...) behind the OpenAI-compatible
	// endpoints/openapi chat completions endpoint, model named in the body.
	MaaS Family = "maas"
)

// maasPrefixes are names without a slash that MLflow's gateway sends to the OpenAI-compatible
// endpoint rather than to GenerateContent.
var maasPrefixes = [...]string{"mistral", "codestral", "jamba"}

// Classify returns the family of a route: the route's api when it names one, else MLflow's
// gateway rules on the model name (case-insensitive): a "claude" prefix is Claude; a "/", a
// mistral, codestral or jamba prefix, or a "-maas" suffix is MaaS; anything else is Gemini.
// ok is false for an api that names no family.
func Classify(t providers.Target) (f Family, ok bool) {
	switch api := strings.ToLower(t.API); api {
	case "":
	case string(Gemini), string(Claude), string(MaaS):
		return Family(api), true
	default:
		return "", false
	}
	name := strings.ToLower(t.Model)
	if strings.HasPrefix(name, "claude") {
		return Claude, true
	}
	if strings.Contains(name, "/") || strings.HasSuffix(name, "-maas") {
		return MaaS, true
	}
	for _, p := range maasPrefixes {
		if strings.HasPrefix(name, p) {
			return MaaS, true
		}
	}
	return Gemini, true
}

// badAPI is the refusal of a route whose api names no family: a configuration mistake, so
// a server error rather than the client's 400.
func badAPI(t providers.Target) *llm.Error {
	return &llm.Error{Status: 500, Type: llm.TypeServer, Code: "route_misconfigured",
		Message: "the Vertex AI route for " + t.Model + " has api " + quoteString(t.API) + "; it must be gemini, claude or maas"}
}

// host is the API host of a location: regional hosts carry the region as a prefix, the global
// location has none, and the multi-regions us and eu have their own rep domains.
func host(location string) string {
	switch location {
	case "global":
		return "aiplatform.googleapis.com"
	case "us", "eu":
		return "aiplatform." + location + ".rep.googleapis.com"
	}
	return location + "-aiplatform.googleapis.com"
}

// parent is the resource prefix every call of a connection names.
func (p *Provider) parent() string {
	return "projects/" + p.project + "/locations/" + p.location
}

// geminiModel names the model of a Gemini route. A full resource name (a tuned model's
// endpoint, another project's model) goes out verbatim; a "google/" publisher prefix, as the
// OpenAI-compatible endpoint spells Gemini models, is dropped for a route forced to gemini.
func (p *Provider) geminiModel(model string) string {
	if strings.HasPrefix(model, "projects/") {
		return model
	}
	return p.parent() + "/publishers/google/models/" + strings.TrimPrefix(model, "google/")
}

// claudeEndpoint names the model of a Claude route; "@" versions are part of the name.
func (p *Provider) claudeEndpoint(model string) string {
	if strings.HasPrefix(model, "projects/") {
		return model
	}
	return p.parent() + "/publishers/anthropic/models/" + model
}

func quoteString(s string) string {
	return string(jsonx.AppendString(nil, s))
}

// countEndpoint names Vertex AI's count-tokens endpoint for a Claude route's model, and the
// model id its body names: one endpoint per project and location serves every Claude model,
// which the body names. A route naming a full resource outside publishers/anthropic (a
// self-deployed endpoint) has no count-tokens endpoint (ok false).
func (p *Provider) countEndpoint(model string) (endpoint, id string, ok bool) {
	const publisher = "/publishers/anthropic/models/"
	if !strings.HasPrefix(model, "projects/") {
		return p.parent() + publisher + "count-tokens", model, true
	}
	i := strings.Index(model, publisher)
	if i < 0 || strings.Contains(model[i+len(publisher):], "/") {
		return "", "", false
	}
	return model[:i] + publisher + "count-tokens", model[i+len(publisher):], true
}

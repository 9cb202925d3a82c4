package openaicompat

import (
	"encoding/json"
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// Check refuses what this kind cannot honour; the body writer trusts it. A Responses request
// on the openai kind goes to OpenAI's own Responses API, which honours all of it (and itself
// refuses what it refuses, as the client's 400).
func (p *Provider) Check(req *llm.Request, _ providers.Target) *llm.Error {
	if p.native(req) {
		return nil
	}
	return p.profile.check(req)
}

func (p *profile) check(req *llm.Request) *llm.Error {
	if oe := p.checkSampling(req); oe != nil {
		return oe
	}
	if req.Op == llm.OpCompletion {
		// Every OpenAI-wire kind serves /v1/completions (OpenAI only for its legacy instruct
		// models, which the upstream itself enforces).
		return nil
	}
	if oe := CheckParts(req, p.name); oe != nil {
		return oe
	}
	if oe := p.checkExtended(req); oe != nil {
		return oe
	}
	if oe := providers.RefuseResponses(req, p.name, p.reasoningEffort); oe != nil {
		return oe
	}
	if req.TopK != nil && !p.topK {
		return llm.Unsupported("top_k", p.name+" does not take top_k")
	}
	if len(req.Stop) > 4 && p.kind == "openai" {
		return llm.Unsupported("stop_sequences", "OpenAI takes at most 4 stop sequences")
	}
	if oe := p.checkThinking(req); oe != nil {
		return oe
	}
	for i := range req.Tools {
		if req.Tools[i].Strict != nil && *req.Tools[i].Strict && !p.strictTools {
			return llm.Unsupported("tools", p.name+" does not enforce strict function schemas: remove \"strict\" or pick a model served by OpenAI")
		}
	}
	tc := req.ToolChoice
	if tc == nil {
		return nil
	}
	if tc.DisableParallel && !p.parallelToolCalls && len(req.Tools) > 0 {
		return llm.Unsupported(tc.Param(), p.name+" cannot be held to one tool call per turn")
	}
	switch p.toolChoice {
	case toolChoiceNone:
		return llm.Unsupported("tool_choice", p.name+" does not support tool_choice: leave it out (the model decides)")
	case toolChoiceAutoNone:
		if tc.Mode == llm.ToolChoiceRequired || tc.Mode == llm.ToolChoiceTool {
			return llm.Unsupported("tool_choice", p.name+" does not reliably support required or named tool_choice: use auto or none")
		}
	}
	return nil
}

// checkSampling refuses the sampling knobs the kind's servers do not take.
func (p *profile) checkSampling(req *llm.Request) *llm.Error {
	if !p.seed {
		if oe := providers.CheckSeed(req, p.name); oe != nil {
			return oe
		}
	}
	if !p.penalties {
		return providers.CheckPenalties(req, p.name)
	}
	return nil
}

// checkExtended refuses the extended profile's chat fields the kind cannot honour.
func (p *profile) checkExtended(req *llm.Request) *llm.Error {
	if p.format == formatText {
		if oe := providers.CheckResponseFormat(req, p.name); oe != nil {
			return oe
		}
	}
	if !p.names {
		if oe := providers.CheckNames(req, p.name); oe != nil {
			return oe
		}
	}
	if p.dataImagesOnly {
		for i := range req.Messages {
			for j := range req.Messages[i].Parts {
				if pt := &req.Messages[i].Parts[j]; pt.Kind == llm.PartImage && pt.URL != "" {
					path := "messages[" + strconv.Itoa(i) + "].content[" + strconv.Itoa(j) + "]"
					return llm.Unsupported(path, path+": "+p.name+" reads images as base64 data only, not by URL")
				}
			}
		}
	}
	return nil
}

// checkThinking: adaptive thinking lets the model decide, which every model honours (one
// without reasoning decides not to); a token budget and an effort need a server that takes
// reasoning_effort.
func (p *profile) checkThinking(req *llm.Request) *llm.Error {
	if t := req.Thinking; t != nil && t.Type == llm.ThinkingEnabled {
		return llm.Unsupported("thinking", p.name+" takes no thinking budget: use thinking {\"type\":\"adaptive\"}")
	}
	if Effort(req) != "" && !p.reasoningEffort {
		return llm.Unsupported("output_config.effort", p.name+" takes no reasoning effort")
	}
	return nil
}

// CheckParts refuses what no OpenAI-wire server can carry: Anthropic-only request fields and
// blocks, images inside tool results, and a mid-conversation system message when the door
// refuses them there. Shared with Vertex AI's OpenAI-compatible endpoint.
func CheckParts(req *llm.Request, provider string) *llm.Error {
	if a := req.Anthropic; a != nil {
		for _, f := range a.Fields {
			switch f.Name {
			case "context_management":
				if !providers.OnlyClearsThinking(f.Value) {
					return llm.Unsupported(f.Name, provider+" has no server-side context management (only clear_thinking edits are honoured: earlier thinking is never sent to it)")
				}
			case "output_config":
				if !onlyEffort(f.Value) {
					return llm.Unsupported(f.Name, f.Name+" other than a low, medium, high or max effort is supported only on Anthropic routes")
				}
			default:
				return llm.Unsupported(f.Name, f.Name+" is supported only on Anthropic routes")
			}
		}
	}
	for i := range req.System {
		if oe := checkPart(&req.System[i], "system["+strconv.Itoa(i)+"]", provider); oe != nil {
			return oe
		}
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		path := "messages[" + strconv.Itoa(i) + "]"
		if len(m.Extra) > 0 {
			return llm.Unsupported(path+"."+m.Extra[0].Name, path+"."+m.Extra[0].Name+" is supported only on Anthropic routes")
		}
		for j := range m.Parts {
			if oe := checkPart(&m.Parts[j], path+".content["+strconv.Itoa(j)+"]", provider); oe != nil {
				return oe
			}
		}
	}
	for i := range req.Tools {
		if req.Tools[i].Raw != nil {
			return llm.Unsupported("tools["+strconv.Itoa(i)+"]", "the tool "+strconv.Quote(req.Tools[i].Name)+" is supported only on Anthropic routes")
		}
	}
	return nil
}

func checkPart(p *llm.Part, path, provider string) *llm.Error {
	if p.Raw != nil {
		what := "this block"
		if p.Kind == llm.PartRaw {
			what = "a " + p.Name + " block"
		}
		return llm.Unsupported(path, path+": "+what+" is supported only on Anthropic routes")
	}
	if p.Kind == llm.PartToolResult {
		for j := range p.Content {
			if p.Content[j].Kind != llm.PartText {
				return llm.Unsupported(path+".content", path+": "+provider+" takes only text in tool results")
			}
		}
	}
	return nil
}

// Effort is the reasoning effort a request asks for (the Responses door's reasoning.effort,
// Anthropic's output_config.effort), as OpenAI's reasoning_effort: minimal, low, medium or
// high; Anthropic's max and OpenAI's xhigh read as high.
func Effort(req *llm.Request) string {
	if r := req.Responses; r != nil && r.Effort != "" {
		if r.Effort == "xhigh" {
			return "high"
		}
		return r.Effort
	}
	raw := req.Anthropic.Field("output_config")
	if raw == nil {
		return ""
	}
	var oc struct {
		Effort string `json:"effort"`
	}
	_ = json.Unmarshal(raw, &oc)
	switch oc.Effort {
	case "low", "medium", "high":
		return oc.Effort
	case "max", "xhigh":
		return "high"
	}
	return ""
}

func onlyEffort(raw json.RawMessage) bool {
	var oc map[string]json.RawMessage
	if json.Unmarshal(raw, &oc) != nil {
		return false
	}
	for k := range oc {
		if k != "effort" {
			return false
		}
	}
	return Effort(&llm.Request{Anthropic: &llm.Anthropic{Fields: []llm.RawField{{Name: "output_config", Value: raw}}}}) != ""
}

package bedrockguard

import (
	"cmp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/guardrail"
)

// assessment is what the assessments of one answer add up to.
type assessment struct {
	categories []string
	blocked    bool
	// reasoning: an automated reasoning finding the claims invalid or impossible. Those
	// findings carry no action of their own; they count only when nothing else explains an
	// intervention.
	reasoning bool
	masks     []mask // anonymized matches and their placeholders
}

type mask struct{ match, placeholder string }

func (a *assessment) add(category string) {
	if len(category) > maxCategory {
		category = category[:maxCategory]
	}
	if !slices.Contains(a.categories, category) {
		a.categories = append(a.categories, category)
	}
}

// maxCategory bounds a category, which carries names the operator chose (topics, regexes).
const maxCategory = 128

// acted reports whether an entry is one the guardrail acted on: an action other than NONE,
// and detected (older answers leave detected out).
func acted(action string, detected *bool) bool {
	return action != "" && action != "NONE" && (detected == nil || *detected)
}

// verdict reads an answer to the texts, of which the blocks sent were texts[sent[i]].
func verdict(out *bedrockruntime.ApplyGuardrailOutput, texts []string, sent []int) (guardrail.Verdict, error) {
	var v guardrail.Verdict
	v.Units, v.CostUSD = usage(out.Usage)
	switch out.Action {
	case types.GuardrailActionNone:
		return v, nil
	case types.GuardrailActionGuardrailIntervened:
	default:
		return v, malformed("an answer with action %q", out.Action)
	}
	var a assessment
	for i := range out.Assessments {
		a.read(&out.Assessments[i])
	}
	v.Categories = a.categories
	switch {
	case a.blocked:
		v.Action = guardrail.Block
	case len(out.Outputs) == len(sent) && allText(out.Outputs) && len(a.masks) > 0:
		v.Action = guardrail.Mask
		v.Masked = slices.Clone(texts)
		for b, i := range sent {
			v.Masked[i] = *out.Outputs[b].Text
		}
	case len(a.masks) > 0:
		v.Action = guardrail.Mask
		v.Masked = replaceMatches(texts, a.masks)
	case a.reasoning:
		v.Action = guardrail.Block
	default:
		return guardrail.Verdict{}, malformed("an intervention that neither blocks nor anonymizes anything")
	}
	return v, nil
}

func allText(outs []types.GuardrailOutputContent) bool {
	for _, o := range outs {
		if o.Text == nil {
			return false
		}
	}
	return true
}

// entry adds a policy entry that acted (blocks: its action is the policy's block).
func (a *assessment) entry(category, action string, detected *bool, blocks bool) {
	if acted(action, detected) {
		a.add(category)
		a.blocked = a.blocked || blocks
	}
}

// read adds one assessment: every policy whose entries carry an action.
func (a *assessment) read(as *types.GuardrailAssessment) {
	if p := as.TopicPolicy; p != nil {
		for _, t := range p.Topics {
			a.entry("topic:"+deref(t.Name), string(t.Action), t.Detected, t.Action == types.GuardrailTopicPolicyActionBlocked)
		}
	}
	if p := as.ContentPolicy; p != nil {
		for _, f := range p.Filters {
			a.entry("content:"+string(f.Type), string(f.Action), f.Detected, f.Action == types.GuardrailContentPolicyActionBlocked)
		}
	}
	if p := as.WordPolicy; p != nil {
		for _, w := range p.CustomWords {
			a.entry("word", string(w.Action), w.Detected, w.Action == types.GuardrailWordPolicyActionBlocked)
		}
		for _, w := range p.ManagedWordLists {
			a.entry("word:"+string(w.Type), string(w.Action), w.Detected, w.Action == types.GuardrailWordPolicyActionBlocked)
		}
	}
	if p := as.SensitiveInformationPolicy; p != nil {
		for _, e := range p.PiiEntities {
			a.sensitive("pii:"+string(e.Type), "{"+string(e.Type)+"}", e.Action, e.Match, e.Detected)
		}
		for _, r := range p.Regexes {
			a.sensitive("regex:"+deref(r.Name), "{"+deref(r.Name)+"}", r.Action, r.Match, r.Detected)
		}
	}
	if p := as.ContextualGroundingPolicy; p != nil {
		for _, f := range p.Filters {
			a.entry("grounding:"+string(f.Type), string(f.Action), f.Detected, f.Action == types.GuardrailContextualGroundingPolicyActionBlocked)
		}
	}
	if p := as.AutomatedReasoningPolicy; p != nil {
		for _, f := range p.Findings {
			switch f.(type) {
			case *types.GuardrailAutomatedReasoningFindingMemberInvalid:
				a.add("reasoning:INVALID")
				a.reasoning = true
			case *types.GuardrailAutomatedReasoningFindingMemberImpossible:
				a.add("reasoning:IMPOSSIBLE")
				a.reasoning = true
			}
		}
	}
}

func (a *assessment) sensitive(category, placeholder string, action types.GuardrailSensitiveInformationPolicyAction, match *string, detected *bool) {
	if !acted(string(action), detected) {
		return
	}
	a.add(category)
	switch action {
	case types.GuardrailSensitiveInformationPolicyActionBlocked:
		a.blocked = true
	case types.GuardrailSensitiveInformationPolicyActionAnonymized:
		if m := deref(match); m != "" {
			a.masks = append(a.masks, mask{match: m, placeholder: placeholder})
		}
	}
}

// replaceMatches masks every text by Bedrock's placeholders, for an answer whose outputs
// cannot be lined up with the texts: each anonymized match, longest first so that a match
// inside another does not break it, replaced wherever it occurs.
func replaceMatches(texts []string, masks []mask) []string {
	slices.SortStableFunc(masks, func(x, y mask) int { return cmp.Compare(len(y.match), len(x.match)) })
	pairs := make([]string, 0, 2*len(masks))
	for _, m := range masks {
		pairs = append(pairs, m.match, m.placeholder)
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = r.Replace(t)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

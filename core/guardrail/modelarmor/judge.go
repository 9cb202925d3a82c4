package modelarmor

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/fngate/fngate/core/guardrail"
)

// The enum values a verdict turns on (google.cloud.modelarmor.v1 FilterMatchState,
// FilterExecutionState, InvocationResult).
const (
	matchFound       = "MATCH_FOUND"
	noMatchFound     = "NO_MATCH_FOUND"
	executionSkipped = "EXECUTION_SKIPPED"
	invocationFailed = "FAILURE"
)

// judgement is one text's verdict.
type judgement struct {
	action     guardrail.Action
	masked     string // the de-identified text, when action is Mask
	categories []string
}

// filterOutcome is what one filter's result says.
type filterOutcome struct {
	skipped    bool
	matched    bool
	masked     *string // an SDP de-identification's text, when it matched with one
	categories []string
	messages   []string
}

// judge turns one SanitizationResult into a judgement. Only an SDP de-identification that
// came with its de-identified text masks; every other match (responsible-AI filters, prompt
// injection, malicious URIs, CSAM, an SDP inspection or a de-identification without text)
// blocks. Filters that were skipped are not judged but named ("skipped:sdp"), so a PARTIAL
// invocation's verdict says what it rests on; when nothing ran, there is no verdict.
func judge(r *sanitizationResult) (judgement, error) {
	if r == nil {
		return judgement{}, malformed("the answer has no sanitizationResult", nil)
	}
	if r.InvocationResult == invocationFailed {
		return judgement{}, unavailable("Model Armor could not run the template's filters", r, nil)
	}
	if r.FilterMatchState != matchFound && r.FilterMatchState != noMatchFound {
		return judgement{}, malformed("the sanitizationResult has no filterMatchState (got "+bounded(r.FilterMatchState)+")", nil)
	}
	var j judgement
	var skipped []string
	var messages []string
	executed, blocks := 0, false
	var masked *string
	for _, name := range slices.Sorted(maps.Keys(r.FilterResults)) {
		o, err := judgeFilter(name, r.FilterResults[name])
		if err != nil {
			return judgement{}, err
		}
		if o.skipped {
			skipped = append(skipped, "skipped:"+name)
			messages = append(messages, o.messages...)
			continue
		}
		executed++
		if !o.matched {
			continue
		}
		j.categories = appendNew(j.categories, o.categories...)
		if o.masked != nil {
			masked = o.masked
		} else {
			blocks = true
		}
	}
	if executed == 0 && len(skipped) > 0 {
		return judgement{}, unavailable("every filter of the template was skipped", r, messages)
	}
	// The overall state is trusted when it reports a match no filter explains: the
	// service matched, and a guardrail does not let through what it cannot explain.
	if r.FilterMatchState == matchFound && len(j.categories) == 0 {
		blocks = true
		j.categories = append(j.categories, "model_armor")
	}
	switch {
	case blocks:
		j.action = guardrail.Block
	case masked != nil:
		j.action, j.masked = guardrail.Mask, *masked
	}
	j.categories = append(j.categories, skipped...)
	return j, nil
}

// judgeFilter reads one FilterResult, a union with one member (raiFilterResult,
// sdpFilterResult, piAndJailbreakFilterResult, maliciousUriFilterResult,
// csamFilterFilterResult, virusScanFilterResult). A member this checker does not know is
// judged on the state every filter result has, so a filter Google adds still blocks.
func judgeFilter(name string, union map[string]json.RawMessage) (filterOutcome, error) {
	var o filterOutcome
	for member, raw := range union {
		var state filterState
		var categories []string
		var masked *string
		switch member {
		case "raiFilterResult":
			var rai raiResult
			if err := decodeMember(name, raw, &rai); err != nil {
				return o, err
			}
			state = rai.filterState
			for _, t := range slices.Sorted(maps.Keys(rai.RaiFilterTypeResults)) {
				if r := rai.RaiFilterTypeResults[t]; r.MatchState == matchFound {
					categories = append(categories, "rai:"+strings.ToLower(t))
				}
			}
			if len(categories) == 0 {
				categories = []string{"rai"}
			}
		case "sdpFilterResult":
			var sdp sdpResult
			if err := decodeMember(name, raw, &sdp); err != nil {
				return o, err
			}
			state, categories, masked = judgeSDP(&sdp)
		default:
			if err := decodeMember(name, raw, &state); err != nil {
				return o, err
			}
			categories = []string{name}
		}
		if state.ExecutionState == executionSkipped {
			o.skipped = true
			for _, m := range state.MessageItems {
				o.messages = append(o.messages, m.Message)
			}
			continue
		}
		if state.MatchState == matchFound {
			o.matched = true
			o.categories = append(o.categories, categories...)
			if masked != nil {
				o.masked = masked
			}
		}
	}
	// A filter with a skipped member and an executed one is judged on what executed.
	if o.matched {
		o.skipped = false
	}
	return o, nil
}

// judgeSDP reads an sdpFilterResult: a de-identification masks with its text, an inspection
// names its findings' info types.
func judgeSDP(sdp *sdpResult) (filterState, []string, *string) {
	var categories []string
	switch {
	case sdp.DeidentifyResult != nil:
		d := sdp.DeidentifyResult
		for _, t := range d.InfoTypes {
			categories = appendNew(categories, "sdp:"+t)
		}
		if len(categories) == 0 {
			categories = []string{"sdp"}
		}
		var text *string
		if d.Data != nil {
			text = d.Data.Text
		}
		return d.filterState, categories, text
	case sdp.InspectResult != nil:
		in := sdp.InspectResult
		for _, f := range in.Findings {
			if f.InfoType != "" {
				categories = appendNew(categories, "sdp:"+f.InfoType)
			}
		}
		if len(categories) == 0 {
			categories = []string{"sdp"}
		}
		return in.filterState, categories, nil
	}
	return filterState{}, nil, nil
}

func decodeMember(filter string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return malformed("the "+filter+" filter's result is not readable: "+err.Error(), err)
	}
	return nil
}

// unavailable is a result the service could not give: its own error message, else the
// skipped filters' messages.
func unavailable(what string, r *sanitizationResult, messages []string) error {
	if m := r.SanitizationMetadata; m != nil && m.ErrorMessage != "" {
		messages = append([]string{m.ErrorMessage}, messages...)
	}
	if len(messages) > 0 {
		what += ": " + strings.Join(messages, "; ")
	}
	return &guardrail.Error{Kind: guardrail.ErrUnavailable, Message: bounded(what)}
}

package bedrock

import (
	"strconv"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
)

// checkConverse refuses, before any network I/O, what Converse cannot take or would reject:
// the planner then skips this route instead of letting Bedrock answer 400. What only
// Anthropic's own wire carries (raw blocks and fields, server tools, a thinking budget) is
// refused with the reason; a Claude model takes it through InvokeModel instead.
func checkConverse(req *llm.Request, model string) *llm.Error {
	if req.Op == llm.OpCompletion {
		return llm.UnsupportedEndpoint(req.Model, displayName)
	}
	// Converse's inferenceConfig has no seed and no penalties, and its messages no names.
	for _, check := range [...]func(*llm.Request, string) *llm.Error{providers.CheckSeed, providers.CheckPenalties, providers.CheckNames} {
		if oe := check(req, displayName+"'s Converse"); oe != nil {
			return oe
		}
	}
	if oe := checkFormat(req, model); oe != nil {
		return oe
	}
	if oneSampler(req, model) && !defaultTopP(req) {
		return llm.Unsupported("top_p", "this Claude model takes temperature or top_p, not both: send one")
	}
	if req.Temperature != nil && *req.Temperature > 1 {
		return llm.Unsupported("temperature", "Amazon Bedrock accepts a temperature from 0 to 1, got "+strconv.FormatFloat(*req.Temperature, 'g', -1, 64))
	}
	if req.ToolChoice != nil && req.ToolChoice.Mode == llm.ToolChoiceNone {
		// Converse has no "none" choice; sending the tools anyway would let the model call them.
		return llm.Unsupported("tool_choice", `Amazon Bedrock has no tool_choice "none": leave out tools (or tool_choice) instead`)
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		if t.Raw != nil {
			return llm.Unsupported("tools["+strconv.Itoa(i)+"]", "the tool "+strconv.Quote(t.Name)+" "+anthropicOnly)
		}
		if s := t.Strict; s != nil && *s {
			return llm.Unsupported("tools["+strconv.Itoa(i)+"].function.strict", "Amazon Bedrock does not enforce strict tool schemas on this route")
		}
		if len(t.Name) > maxToolName {
			return llm.Unsupported("tools["+strconv.Itoa(i)+"].name", longToolName(t.Name))
		}
	}
	if tc := req.ToolChoice; tc != nil && tc.DisableParallel && len(req.Tools) > 0 {
		return llm.Unsupported(tc.Param(), "Amazon Bedrock's Converse cannot hold the model to one tool call per turn")
	}
	if th := req.Thinking; th != nil && th.Type == llm.ThinkingEnabled {
		// Adaptive thinking lets the model decide, which every model honours.
		return llm.Unsupported("thinking", `Amazon Bedrock's Converse takes no thinking budget on this route: use thinking {"type":"adaptive"}`)
	}
	if a := req.Anthropic; a != nil {
		for _, f := range a.Fields {
			if f.Name == "context_management" && providers.OnlyClearsThinking(f.Value) {
				continue // earlier turns' thinking is never sent to Converse
			}
			return llm.Unsupported(f.Name, f.Name+" "+anthropicOnly)
		}
	}
	for i := range req.System {
		if oe := checkPart(&req.System[i], "system["+strconv.Itoa(i)+"]"); oe != nil {
			return oe
		}
	}
	return checkTurns(req)
}

// anthropicOnly ends the refusal of what only Anthropic's wire can carry.
const anthropicOnly = "is supported on Amazon Bedrock only by Claude models, through InvokeModel"

// checkTurns applies Converse's rules for the conversation: system messages only before it,
// a user message first, no blank turn (consecutive messages of one role merge into one
// turn, so a turn made only of blank text is refused instead of sent empty), no final
// assistant message.
func checkTurns(req *llm.Request) *llm.Error {
	msgs := req.Messages
	leading := true
	turnRole, turnStart, turnFilled := "", 0, false
	last := -1 // the last message of the conversation
	for i := range msgs {
		m := &msgs[i]
		p := "messages[" + strconv.Itoa(i) + "]"
		if len(m.Extra) > 0 {
			return llm.Unsupported(p+"."+m.Extra[0].Name, p+"."+m.Extra[0].Name+" "+anthropicOnly)
		}
		switch m.Role {
		case llm.RoleDeveloper:
			return llm.Unsupported(p+".role", "Amazon Bedrock has no developer role: send instructions as a system message at the start")
		case llm.RoleSystem:
			if !leading && req.LateSystem != llm.LateSystemHoist {
				return llm.Unsupported(p+".role", "Amazon Bedrock takes system messages only at the start of the conversation, before any other message")
			}
			for j := range m.Parts {
				if oe := checkPart(&m.Parts[j], p+".content["+strconv.Itoa(j)+"]"); oe != nil {
					return oe
				}
			}
			continue
		}
		role := turnRoleOf(m.Role)
		if leading {
			leading = false
			if role != roleUser {
				return llm.Unsupported(p+".role", "Amazon Bedrock needs the conversation to start with a user message, after any system messages")
			}
		}
		if role != turnRole {
			if turnRole != "" && !turnFilled {
				return blankTurn(turnStart)
			}
			turnRole, turnStart, turnFilled = role, i, false
		}
		last = i
		for j := range m.Parts {
			pt := &m.Parts[j]
			if oe := checkPart(pt, p+".content["+strconv.Itoa(j)+"]"); oe != nil {
				return oe
			}
			switch pt.Kind {
			case llm.PartText:
				turnFilled = turnFilled || !blank(pt.Text)
			case llm.PartImage:
				turnFilled = true
			case llm.PartToolUse:
				tp := p + ".tool_calls[" + strconv.Itoa(m.ToolUsesBefore(j)) + "]"
				if !objectOrEmpty(pt.Input) {
					return llm.BadRequest(tp+".function.arguments", "Amazon Bedrock needs tool call arguments to be a JSON object")
				}
				if len(pt.Name) > maxToolName {
					return llm.Unsupported(tp+".function.name", longToolName(pt.Name))
				}
				turnFilled = true
			case llm.PartToolResult:
				if !resultFilled(pt) {
					// Bedrock rejects blank text anywhere, and there is no faithful stand-in for
					// "the tool returned nothing".
					return llm.Unsupported(p+".content", "Amazon Bedrock refuses an empty tool result: send some text, such as \"(no output)\"")
				}
				turnFilled = true
			}
			// Thinking from earlier turns is not sent (see converseTurns): nothing to check.
		}
	}
	if leading {
		return llm.Unsupported("messages", "Amazon Bedrock needs at least one user message besides system messages")
	}
	if !turnFilled {
		return blankTurn(turnStart)
	}
	if msgs[last].Role == llm.RoleAssistant {
		return llm.Unsupported("messages["+strconv.Itoa(last)+"].role", "Amazon Bedrock does not continue a final assistant message (prefill) on this route: end with a user or tool message")
	}
	return nil
}

// checkPart refuses a block Converse cannot carry: one kept raw for Anthropic-wire routes
// (a document, a server tool's block, a text with citations, a Files API image), an image
// given by URL, or one whose data is not base64; inside a tool result too.
func checkPart(p *llm.Part, path string) *llm.Error {
	if p.Raw != nil {
		what := "this block"
		if p.Kind == llm.PartRaw {
			what = "a " + p.Name + " block"
		}
		return llm.Unsupported(path, path+": "+what+" "+anthropicOnly)
	}
	switch p.Kind {
	case llm.PartImage:
		if p.URL != "" {
			return llm.Unsupported(path, path+": Amazon Bedrock's Converse takes images as base64 data only, not by URL")
		}
		if _, ok := imageFormat(p.MediaType); !ok {
			return llm.Unsupported(path, path+": Amazon Bedrock takes png, jpeg, gif and webp images, not "+strconv.Quote(p.MediaType))
		}
		if p.Data == "" || !providers.ValidBase64(p.Data) {
			return llm.BadRequest(path, path+": the image data is not valid base64")
		}
	case llm.PartToolResult:
		for j := range p.Content {
			if oe := checkPart(&p.Content[j], path+".content["+strconv.Itoa(j)+"]"); oe != nil {
				return oe
			}
		}
	}
	return nil
}

// maxToolName is the longest tool name Converse takes (Anthropic's own limit is 128).
const maxToolName = 64

func longToolName(name string) string {
	return "Amazon Bedrock's Converse takes tool names of at most 64 characters; " + strconv.Quote(name) + " has " + strconv.Itoa(len(name))
}

func blankTurn(i int) *llm.Error {
	return llm.Unsupported("messages["+strconv.Itoa(i)+"].content", "Amazon Bedrock refuses blank messages: messages["+strconv.Itoa(i)+"] has no text")
}

// resultFilled reports whether a tool result has something to send: Bedrock refuses a
// result without content and blank text.
func resultFilled(p *llm.Part) bool {
	if p.Content == nil {
		return !blank(p.Text)
	}
	for i := range p.Content {
		c := &p.Content[i]
		if c.Kind == llm.PartImage || c.Kind == llm.PartText && !blank(c.Text) {
			return true
		}
	}
	return false
}

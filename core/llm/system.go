package llm

import "strconv"

// SplitSystem splits req for a backend that takes system instructions once, before the
// conversation (Anthropic, Gemini, Bedrock): system is req.System followed by the parts of
// the system and developer messages that open req.Messages, conversation what follows.
//
// A system or developer message after the conversation began (with a user or assistant
// message) follows req.LateSystem: refused with a 400 naming messages (the Chat Completions
// door, where hoisting would change what the model was told and when), or appended to system
// (the Messages door). Messages with no conversation at all are refused.
//
// each, when not nil, checks every conversation message in order, given its index in
// req.Messages, so that a request's first fault is the one reported; its refusal is returned
// as is.
func SplitSystem(req *Request, provider string, each func(i int, m *Message) *Error) (system []Part, conversation []Message, oe *Error) {
	msgs := req.Messages
	n := 0
	for n < len(msgs) && isSystem(msgs[n].Role) {
		n++
	}
	late := false
	for i := n; i < len(msgs); i++ {
		m := &msgs[i]
		if isSystem(m.Role) {
			if req.LateSystem != LateSystemHoist {
				p := "messages[" + strconv.Itoa(i) + "]"
				return nil, nil, Unsupported("messages", p+" is a "+m.Role+" message after the conversation began; "+
					provider+" takes system instructions only before the first user or assistant message")
			}
			late = true
			continue
		}
		if each != nil {
			if oe := each(i, m); oe != nil {
				return nil, nil, oe
			}
		}
	}
	if n == len(msgs) || (late && !hasTurn(msgs[n:])) {
		return nil, nil, BadRequest("messages", "messages must hold a user or assistant message besides the system instructions")
	}
	system = append(system, req.System...)
	for i := 0; i < n; i++ {
		system = append(system, msgs[i].Parts...)
	}
	if !late {
		return system, msgs[n:], nil
	}
	conversation = make([]Message, 0, len(msgs)-n)
	for i := n; i < len(msgs); i++ {
		if isSystem(msgs[i].Role) {
			system = append(system, msgs[i].Parts...)
			continue
		}
		conversation = append(conversation, msgs[i])
	}
	return system, conversation, nil
}

func isSystem(role string) bool { return role == RoleSystem || role == RoleDeveloper }

func hasTurn(msgs []Message) bool {
	for i := range msgs {
		if !isSystem(msgs[i].Role) {
			return true
		}
	}
	return false
}

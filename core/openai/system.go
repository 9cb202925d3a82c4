package openai

import "strconv"

// SplitSystem splits msgs for a provider that takes system instructions once, before the
// conversation (Anthropic, Gemini): system is the system and developer messages that open
// msgs, conversation what follows. A system or developer message after the conversation began
// (with a user, assistant or tool message) is refused with a 400 naming messages: hoisting it
// would change what the model was told and when. Messages with no conversation at all are
// refused too. each, when not nil, checks every other message in order, given its index in
// msgs, so that a request's first fault is the one reported; its refusal is returned as is.
func SplitSystem(msgs []Message, provider string, each func(i int, m *Message) *Error) (system, conversation []Message, oe *Error) {
	began := false
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case RoleSystem, RoleDeveloper:
			if began {
				p := "messages[" + strconv.Itoa(i) + "]"
				return nil, nil, Unsupported("messages", p+" is a "+m.Role+" message after the conversation began; "+
					provider+" takes system instructions only before the first user or assistant message")
			}
			continue
		case RoleUser, RoleAssistant, RoleTool:
			began = true
		}
		if each != nil {
			if oe := each(i, m); oe != nil {
				return nil, nil, oe
			}
		}
	}
	if !began {
		return nil, nil, BadRequest("messages", "messages must hold a user or assistant message besides the system instructions")
	}
	n := 0
	for n < len(msgs) && (msgs[n].Role == RoleSystem || msgs[n].Role == RoleDeveloper) {
		n++
	}
	return msgs[:n], msgs[n:], nil
}

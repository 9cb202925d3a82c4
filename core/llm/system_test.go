package llm

import (
	"strconv"
	"testing"
)

func msg(role string) Message {
	return Message{Role: role, Parts: []Part{{Kind: PartText, Text: role}}}
}

func TestSplitSystem(t *testing.T) {
	sys, dev, user, asst := msg(RoleSystem), msg(RoleDeveloper), msg(RoleUser), msg(RoleAssistant)
	for i, tc := range []struct {
		msgs    []Message
		late    LateSystem
		given   []Part // Request.System
		system  int    // parts of the system prompt
		turns   int    // conversation messages
		param   string // "" = accepted
		message string
	}{
		{msgs: []Message{sys, dev, user, asst, user}, system: 2, turns: 3},
		{msgs: []Message{user}, system: 0, turns: 1},
		{msgs: []Message{user}, given: []Part{{Kind: PartText, Text: "up front"}}, system: 1, turns: 1},
		{msgs: []Message{sys, user, dev}, param: "messages",
			message: "messages[2] is a developer message after the conversation began; X takes system instructions only before the first user or assistant message"},
		{msgs: []Message{sys, user, dev, asst}, late: LateSystemHoist, system: 2, turns: 2},
		{msgs: []Message{sys, dev}, param: "messages", message: "messages must hold a user or assistant message besides the system instructions"},
		{msgs: nil, param: "messages", message: "messages must hold a user or assistant message besides the system instructions"},
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			req := &Request{Messages: tc.msgs, System: tc.given, LateSystem: tc.late}
			system, conversation, oe := SplitSystem(req, "X", nil)
			if tc.param != "" {
				if oe == nil || oe.Status != 400 || oe.Param != tc.param || oe.Message != tc.message {
					t.Fatalf("got %+v, want a 400 on %s: %s", oe, tc.param, tc.message)
				}
				return
			}
			if oe != nil || len(system) != tc.system || len(conversation) != tc.turns {
				t.Fatalf("split %d + %d (%v), want %d + %d", len(system), len(conversation), oe, tc.system, tc.turns)
			}
			for _, m := range conversation {
				if m.Role == RoleSystem || m.Role == RoleDeveloper {
					t.Errorf("a %s message left in the conversation", m.Role)
				}
			}
		})
	}
}

// The per-message check sees the conversation in order, and its refusal wins over a later
// system message, so a request's first fault is the one reported.
func TestSplitSystemChecksInOrder(t *testing.T) {
	req := &Request{Messages: []Message{msg(RoleSystem), msg(RoleUser), msg(RoleAssistant), msg(RoleSystem)}}
	var seen []int
	_, _, oe := SplitSystem(req, "X", func(i int, m *Message) *Error {
		seen = append(seen, i)
		if m.Role == RoleAssistant {
			return BadRequest("messages[2]", "no")
		}
		return nil
	})
	if oe == nil || oe.Param != "messages[2]" || len(seen) != 2 || seen[0] != 1 || seen[1] != 2 {
		t.Fatalf("refusal %v after checking %v", oe, seen)
	}
}

package openai

import (
	"strconv"
	"testing"
)

func TestSplitSystem(t *testing.T) {
	msg := func(role string) Message { s := role; return Message{Role: role, Content: &s} }
	sys, dev, user, asst, tool := msg(RoleSystem), msg(RoleDeveloper), msg(RoleUser), msg(RoleAssistant), msg(RoleTool)
	for i, tc := range []struct {
		msgs    []Message
		system  int    // leading messages split off
		param   string // "" = accepted
		message string
	}{
		{msgs: []Message{sys, dev, user, asst, tool}, system: 2},
		{msgs: []Message{user}, system: 0},
		{msgs: []Message{sys, user, dev}, param: "messages",
			message: "messages[2] is a developer message after the conversation began; X takes system instructions only before the first user or assistant message"},
		{msgs: []Message{sys, dev}, param: "messages", message: "messages must hold a user or assistant message besides the system instructions"},
		{msgs: nil, param: "messages", message: "messages must hold a user or assistant message besides the system instructions"},
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			system, conversation, oe := SplitSystem(tc.msgs, "X", nil)
			if tc.param != "" {
				if oe == nil || oe.Status != 400 || oe.Param != tc.param || oe.Message != tc.message {
					t.Fatalf("got %+v, want a 400 on %s: %s", oe, tc.param, tc.message)
				}
				return
			}
			if oe != nil || len(system) != tc.system || len(conversation) != len(tc.msgs)-tc.system {
				t.Fatalf("split %d + %d (%v), want %d system messages", len(system), len(conversation), oe, tc.system)
			}
		})
	}
}

// The per-message check sees the conversation in order, and its refusal wins over a later
// system message, so a request's first fault is the one reported.
func TestSplitSystemChecksInOrder(t *testing.T) {
	s := "x"
	msgs := []Message{{Role: RoleSystem, Content: &s}, {Role: RoleUser, Content: &s}, {Role: RoleAssistant, Content: &s}, {Role: RoleSystem, Content: &s}}
	var seen []int
	_, _, oe := SplitSystem(msgs, "X", func(i int, m *Message) *Error {
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

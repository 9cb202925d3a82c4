package local

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail/local/builtin"
)

// FuzzMask holds the masker to what the gateway relies on for any text: no panic, valid
// UTF-8 stays valid, masking is idempotent (a second pass finds nothing), and the output
// grows only by the placeholders written.
func FuzzMask(f *testing.F) {
	for _, seed := range []string{
		"", "@", "+", "(", "-----BEGIN ", "[EMAIL]", "[", "]",
		"jane.doe@example.com", "see...john@example.com", "git@github.com:a/b.git",
		"+44 (0)20 7946 0958", "(555) 123-4567", "1-800-555-0199", "+1 (", "+1 (555",
		"4111 1111 1111 1111 2026", "4111111111111111@example.com", "a@b.co+14155552671",
		"DE89 3704 0044 0532 0130 00", "MT84MALT011000012345MTLCAST001S",
		openAIKey, anthropicKey, awsKeyID, githubPAT, slackToken, googleKey, jwtToken, pemKey,
		pemKey[:40], "T-1 EMP-123456 [TICKET]", "é@é.é", "\xff@\xfe.com", "连接admin@example.cn请",
		"[EMAIL]+14155552671", "x@example.com(555) 123-4567", "]+14155552671",
	} {
		f.Add(seed)
	}
	builtins := allBuiltins(f)
	withPatterns, err := New(&config.Guardrail{Kind: "local", Name: "fuzz", Mask: config.LocalPII,
		MaskPatterns: map[string]string{"ticket": `T-\d+`, "employee_id": `\bEMP-\d{6}\b`}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, c := range []*Checker{builtins, withPatterns} {
			out, kinds := c.Mask(in)
			if (out == in) != (kinds == nil) {
				t.Errorf("Mask(%q) = %q with kinds %v", in, out, kinds)
			}
			if utf8.ValidString(in) && !utf8.ValidString(out) {
				t.Errorf("Mask(%q) = %q: not valid UTF-8", in, out)
			}
			if again, kinds2 := c.Mask(out); again != out || kinds2 != nil {
				t.Errorf("not idempotent: Mask(%q) = %q, Mask of that = %q (%v)", in, out, again, kinds2)
			}
			added := 0
			for _, p := range c.placeholders {
				added += strings.Count(out, p) - strings.Count(in, p)
			}
			if limit := len(in) + max(0, added)*builtin.MaxPlaceholder; len(out) > limit {
				t.Errorf("Mask(%q) = %q: %d bytes, more than %d", in, out, len(out), limit)
			}
		}
	})
}

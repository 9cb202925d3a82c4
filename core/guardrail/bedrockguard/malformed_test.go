package bedrockguard

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/internal/bedrockfake"
)

// Whatever a broken or hostile endpoint answers with a 200, the checker fails with
// malformed and does not panic: garbage, wrong types, a body past the bound, an intervention
// that says nothing, outputs that are not text.
func TestMalformedAnswers(t *testing.T) {
	fake := bedrockfake.NewGuardrails(t)
	c := newChecker(t, fake, nil)
	huge := `{"action":"NONE","outputs":[{"text":"` + strings.Repeat("x", 5<<20) + `"}],"assessments":[],"usage":{}}`
	for name, body := range map[string]string{
		"garbage":          "\x00\xffnot json",
		"html":             "<html><body>hello</body></html>",
		"truncated":        `{"action":"NONE","assessments":[{"topicPolicy":`,
		"array":            `[1,2,3]`,
		"action number":    `{"action":5,"assessments":[],"outputs":[]}`,
		"no action":        `{"assessments":[],"outputs":[]}`,
		"unknown action":   `{"action":"MAYBE","assessments":[],"outputs":[]}`,
		"usage string":     `{"action":"NONE","usage":{"contentPolicyUnits":"many"}}`,
		"assessments obj":  `{"action":"GUARDRAIL_INTERVENED","assessments":{"a":1}}`,
		"topics wrong":     `{"action":"GUARDRAIL_INTERVENED","assessments":[{"topicPolicy":{"topics":"x"}}]}`,
		"says nothing":     `{"action":"GUARDRAIL_INTERVENED","assessments":[{}],"outputs":[{"text":"Sorry"}]}`,
		"anonymized blank": `{"action":"GUARDRAIL_INTERVENED","assessments":[{"sensitiveInformationPolicy":{"piiEntities":[{"match":"","type":"EMAIL","action":"ANONYMIZED"}],"regexes":[]}}],"outputs":[{"text":"a"},{"text":"b"}]}`,
		"huge":             huge,
	} {
		t.Run(name, func(t *testing.T) {
			fake.Force(bedrockfake.GuardrailReply{Status: 200, Header: map[string]string{"Content-Type": "application/json"}, Body: []byte(body)})
			v, err := c.Check(context.Background(), guardrail.Input, []string{"hello"})
			if err == nil {
				t.Fatalf("got %+v, want malformed", v)
			}
			if e := asError(t, err); e.Kind != guardrail.ErrMalformed || len(e.Message) > maxMessage+3 {
				t.Errorf("got %s %q, want malformed with a bounded message", e.Kind, e.Message)
			}
		})
	}
}

// Random mutations of the recorded shapes never panic and always give a verdict or a
// *guardrail.Error.
func TestMutatedShapesNeverPanic(t *testing.T) {
	fake := bedrockfake.NewGuardrails(t)
	c := newChecker(t, fake, nil)
	r := rand.New(rand.NewPCG(1, 2))
	shapes := []string{bedrockfake.ShapePass, bedrockfake.ShapeBlockPromptAttack, bedrockfake.ShapeBlockTopic, bedrockfake.ShapeAnonymize}
	for i := range 300 {
		reply := bedrockfake.Recorded(shapes[i%len(shapes)])
		b := []byte(string(reply.Body))
		for range 1 + r.IntN(4) {
			switch j := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b[j] = byte(r.IntN(256))
			case 1:
				b = b[:j]
			default:
				b = append(b[:j:j], append([]byte(`"x":[null,{}],`), b[j:]...)...)
			}
			if len(b) == 0 {
				b = []byte("{")
			}
		}
		reply.Body = b
		fake.Force(reply)
		v, err := c.Check(context.Background(), guardrail.Output, []string{"a@b.co", "", "hi"})
		if err != nil {
			asError(t, err)
		} else if v.Action == guardrail.Mask && len(v.Masked) != 3 {
			t.Fatalf("mutation %d: masked %q, want one per text", i, v.Masked)
		}
	}
}

package openaicompat

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
)

// An upstream's impossible counts read as unreported; what is possible stays as reported.
func TestImpossibleUsageFromTheWireIsDropped(t *testing.T) {
	cases := []struct {
		name, usage string
		want        string // the usage left, as the chat door renders it
		dropped     []llm.ImpossibleCount
	}{
		{"plausible", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":10},"completion_tokens_details":{"reasoning_tokens":3}}`,
			`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":10},"completion_tokens_details":{"reasoning_tokens":3}}`, nil},
		{"zeros", `{"prompt_tokens":0,"completion_tokens":0}`, `{"prompt_tokens":0,"completion_tokens":0}`, nil},
		{"at the bound", `{"prompt_tokens":2147483647}`, `{"prompt_tokens":2147483647}`, nil},
		{"negative prompt", `{"prompt_tokens":-5,"completion_tokens":4,"total_tokens":-1}`, `{"completion_tokens":4}`,
			[]llm.ImpossibleCount{{Field: "prompt_tokens", Value: -5}, {Field: "total_tokens", Value: -1}}},
		{"beyond 2^31-1", `{"prompt_tokens":3,"completion_tokens":2147483648}`, `{"prompt_tokens":3}`,
			[]llm.ImpossibleCount{{Field: "completion_tokens", Value: 2147483648}}},
		{"more cached than prompt", `{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":11}}`, `{"prompt_tokens":10,"completion_tokens":5}`,
			[]llm.ImpossibleCount{{Field: "prompt_tokens_details.cached_tokens", Value: 11}}},
		{"negative cached", `{"prompt_tokens_details":{"cached_tokens":-1}}`, `{}`,
			[]llm.ImpossibleCount{{Field: "prompt_tokens_details.cached_tokens", Value: -1}}},
		{"cached without a prompt count", `{"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":7}}`, `{"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":7}}`, nil},
		// xAI counts reasoning apart from completion_tokens.
		{"more reasoning than completion", `{"completion_tokens":26,"completion_tokens_details":{"reasoning_tokens":196}}`, `{"completion_tokens":26,"completion_tokens_details":{"reasoning_tokens":196}}`, nil},
		{"negative reasoning", `{"completion_tokens":26,"completion_tokens_details":{"reasoning_tokens":-196}}`, `{"completion_tokens":26}`,
			[]llm.ImpossibleCount{{Field: "completion_tokens_details.reasoning_tokens", Value: -196}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w wireUsage
			if err := json.Unmarshal([]byte(tc.usage), &w); err != nil {
				t.Fatal(err)
			}
			u := w.llm()
			dropped := u.DropImpossible()
			if got := string(openai.AppendUsage(nil, u)); got != tc.want {
				t.Errorf("left %s, want %s", got, tc.want)
			}
			if !reflect.DeepEqual(dropped, tc.dropped) {
				t.Errorf("dropped %v, want %v", dropped, tc.dropped)
			}
		})
	}
}

package schemafill

import "testing"

func TestJSON(t *testing.T) {
	cases := []struct{ name, schema, want string }{
		{"empty schema", `{}`, `{"text":"hi"}`},
		{"unreadable", `[`, `{"text":"hi"}`},
		{"flat object", `{"type":"object","properties":{"b":{"type":"boolean"},"n":{"type":"number"},"s":{"type":"string"},"i":{"type":"integer"},"a":{"type":"array","items":{"type":"string"}}}}`,
			`{"a":[],"b":true,"i":1,"n":1,"s":"hi"}`},
		{"zod nested, enum, nullable, bounds", `{"type":"object","properties":{"who":{"type":"object","properties":{"email":{"type":"string","format":"email"}},"required":["email"],"additionalProperties":false},"kind":{"type":"string","enum":["x","y"]},"maybe":{"anyOf":[{"type":"null"},{"type":"number","minimum":5}]},"tags":{"type":"array","items":{"type":"integer","maximum":0},"minItems":2},"short":{"type":"string","maxLength":1}},"required":["who","kind","maybe","tags","short"],"additionalProperties":false}`,
			`{"kind":"x","maybe":5,"short":"h","tags":[0,0],"who":{"email":"user@example.com"}}`},
		{"ref and const", `{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"c":{"const":"k"},"t":{"type":["null","string"],"minLength":4}}}}}`,
			`{"c":"k","t":"hixx"}`},
		{"recursive schema ends", `{"$ref":"#/definitions/N","definitions":{"N":{"type":"object","properties":{"next":{"$ref":"#/definitions/N"}}}}}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := JSON([]byte(tc.schema), "hi")
			if tc.want != "" && got != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
			if got == "" {
				t.Error("empty")
			}
		})
	}
}

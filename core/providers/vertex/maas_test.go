package vertex

import (
	"encoding/json"
	"testing"

	"github.com/fngate/fngate/core/providers"
)

// TestMaaSBody: the OpenAI body the endpoint gets: the route's model, developer as system,
// the output maximum (the client's, else the model's ceiling) as max_tokens, tools without
// strict, usage asked for on streams, and never the client's log labels.
func TestMaaSBody(t *testing.T) {
	req := chat(t, `{"model":"gw/llama","user":"alice","metadata":{"team":"x"},"temperature":0.5,"messages":[
		{"role":"developer","content":"Be brief."},{"role":"user","content":"weather?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"tool_choice":"required"}`)
	var body map[string]any
	if err := json.Unmarshal(maasBody(req, providers.Target{Model: "meta/llama-4-maas", MaxOutputTokens: 512}, true), &body); err != nil {
		t.Fatal(err)
	}
	want := `{"max_tokens":512,"messages":[{"content":"Be brief.","role":"system"},{"content":"weather?","role":"user"},` +
		`{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Rome\"}","name":"get_weather"},"id":"call_1","type":"function"}]},` +
		`{"content":"sunny","role":"tool","tool_call_id":"call_1"}],"model":"meta/llama-4-maas","stream":true,"stream_options":{"include_usage":true},` +
		`"temperature":0.5,"tool_choice":"required","tools":[{"function":{"name":"get_weather","parameters":{"type":"object"}},"type":"function"}]}`
	if got := mustMarshal(body); got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
	req.MaxTokens = new(int)
	*req.MaxTokens = 64
	if err := json.Unmarshal(maasBody(req, providers.Target{Model: "m", MaxOutputTokens: 512}, false), &body); err != nil || body["max_tokens"] != 64.0 {
		t.Errorf("the client's maximum: %v", body["max_tokens"])
	}
}

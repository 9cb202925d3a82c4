package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

var extended = Profile{Extended: true}

func msgs(m string) string {
	if m == "" {
		m = `{"role":"user","content":"hi"}`
	}
	return `"model":"m","messages":[` + m + `]`
}

// TestProfilesRefuseOrAccept: each field of the extended profile is a 400 naming it under
// strict (the words the strict profile always said) and accepted under extended.
func TestProfilesRefuseOrAccept(t *testing.T) {
	cases := []struct {
		name, body  string
		strictParam string // the param strict names
		strictMsg   string // a piece of its message
	}{
		{"max_tokens", `{` + msgs("") + `,"max_tokens":5}`, "max_tokens", "use max_completion_tokens"},
		{"top_p", `{` + msgs("") + `,"top_p":1}`, "top_p", "not supported by this gateway"},
		{"stop string", `{` + msgs("") + `,"stop":"END"}`, "stop", "not supported"},
		{"stop list", `{` + msgs("") + `,"stop":["a","b","c","d"]}`, "stop", "not supported"},
		{"seed", `{` + msgs("") + `,"seed":42}`, "seed", "not supported"},
		{"presence_penalty", `{` + msgs("") + `,"presence_penalty":-2}`, "presence_penalty", "not supported"},
		{"frequency_penalty", `{` + msgs("") + `,"frequency_penalty":2}`, "frequency_penalty", "not supported"},
		{"response_format text", `{` + msgs("") + `,"response_format":{"type":"text"}}`, "response_format", "not supported"},
		{"response_format json_object", `{` + msgs("") + `,"response_format":{"type":"json_object"}}`, "response_format", "not supported"},
		{"response_format json_schema", `{` + msgs("") + `,"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"},"strict":true}}}`, "response_format", "not supported"},
		{"parallel_tool_calls", `{` + msgs("") + `,"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`, "parallel_tool_calls", "not supported"},
		{"names", `{` + msgs(`{"role":"system","content":"s","name":"boss"},{"role":"user","content":"hi","name":"ann"}`) + `}`, "messages[0].name", "not supported"},
		{"text parts", `{` + msgs(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`) + `}`, "messages[0].content", "content-part arrays"},
		{"image parts", `{` + msgs(`{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}},{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}`) + `}`, "messages[0].content", "content-part arrays"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, e := DecodeChatProfile([]byte(tc.body), llm.Limits{}, Profile{})
			if e == nil || e.Status != 400 || e.Param != tc.strictParam || !strings.Contains(e.Message, tc.strictMsg) {
				t.Errorf("strict: got %+v, want a 400 naming %s", e, tc.strictParam)
			}
			if _, _, e := DecodeChatProfile([]byte(tc.body), llm.Limits{}, extended); e != nil {
				t.Errorf("extended refused it: %v", e)
			}
		})
	}
}

// TestExtendedRefusals: what the extended profile still refuses, each naming its field.
func TestExtendedRefusals(t *testing.T) {
	tool := `,"tools":[{"type":"function","function":{"name":"f"}}]`
	cases := []struct{ name, body, param string }{
		{"both output maxima", `{` + msgs("") + `,"max_tokens":5,"max_completion_tokens":5}`, "max_tokens"},
		{"max_tokens 0", `{` + msgs("") + `,"max_tokens":0}`, "max_tokens"},
		{"top_p above 1", `{` + msgs("") + `,"top_p":1.5}`, "top_p"},
		{"five stops", `{` + msgs("") + `,"stop":["a","b","c","d","e"]}`, "stop"},
		{"empty stop", `{` + msgs("") + `,"stop":[""]}`, "stop"},
		{"stop number", `{` + msgs("") + `,"stop":3}`, "stop"},
		{"seed fraction", `{` + msgs("") + `,"seed":1.5}`, "seed"},
		{"penalty range", `{` + msgs("") + `,"presence_penalty":2.5}`, "presence_penalty"},
		{"format type", `{` + msgs("") + `,"response_format":{"type":"xml"}}`, "response_format.type"},
		{"schema without json_schema", `{` + msgs("") + `,"response_format":{"type":"json_schema"}}`, "response_format.json_schema"},
		{"schema name", `{` + msgs("") + `,"response_format":{"type":"json_schema","json_schema":{"name":"a b","schema":{}}}}`, "response_format.json_schema.name"},
		{"schema missing", `{` + msgs("") + `,"response_format":{"type":"json_schema","json_schema":{"name":"a"}}}`, "response_format.json_schema.schema"},
		{"format unknown key", `{` + msgs("") + `,"response_format":{"type":"json_object","extra":1}}`, "response_format.extra"},
		{"format key case", `{` + msgs("") + `,"response_format":{"TYPE":"json_object"}}`, "response_format.TYPE"},
		{"name with space", `{` + msgs(`{"role":"user","content":"hi","name":"a b"}`) + `}`, "messages[0].name"},
		{"audio part", `{` + msgs(`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}`) + `}`, "messages[0].content[0].type"},
		{"file part", `{` + msgs(`{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}`) + `}`, "messages[0].content[0].type"},
		{"image in system", `{` + msgs(`{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},{"role":"user","content":"hi"}`) + `}`, "messages[0].content[0].type"},
		{"http image", `{` + msgs(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/y.png"}}]}`) + `}`, "messages[0].content[0].image_url.url"},
		{"bmp image", `{` + msgs(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/bmp;base64,Qk0="}}]}`) + `}`, "messages[0].content[0].image_url.url"},
		{"detail high", `{` + msgs(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"high"}}]}`) + `}`, "messages[0].content[0].image_url.detail"},
		{"part key case", `{` + msgs(`{"role":"user","content":[{"Type":"text","text":"a"}]}`) + `}`, "messages[0].content[0].Type"},
		{"part unknown key", `{` + msgs(`{"role":"user","content":[{"type":"text","text":"a","cache_control":{}}]}`) + `}`, "messages[0].content[0].cache_control"},
		{"part mixed members", `{` + msgs(`{"role":"user","content":[{"type":"text","text":"a","image_url":{"url":"https://x"}}]}`) + `}`, "messages[0].content[0].image_url"},
		{"empty parts", `{` + msgs(`{"role":"user","content":[]}`) + `}`, "messages[0].content"},
		{"content number", `{` + msgs(`{"role":"user","content":1}`) + `}`, "messages[0].content"},
		{"still refused: logprobs", `{` + msgs("") + `,"logprobs":true}`, "logprobs"},
		{"tool_choice without tools", `{` + msgs("") + `,"tool_choice":"auto"}`, "tool_choice"},
		{"strict checks still run", `{"model":"m","messages":[{"role":"tool","content":"x"}]` + tool + `}`, "messages[0].tool_call_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, e := DecodeChatProfile([]byte(tc.body), llm.Limits{}, extended)
			if e == nil || e.Status != 400 || e.Param != tc.param {
				t.Errorf("got %+v, want a 400 naming %s", e, tc.param)
			}
		})
	}
}

// TestExtendedRequest: what each field becomes in the gateway's request.
func TestExtendedRequest(t *testing.T) {
	body := `{"model":"m","messages":[
	  {"role":"system","content":[{"type":"text","text":"be "},{"type":"text","text":"brief"}],"name":"rules"},
	  {"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}],"name":"ann"},
	  {"role":"assistant","content":null,"name":"bot","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
	  {"role":"tool","tool_call_id":"c1","name":"f","content":[{"type":"text","text":"4"},{"type":"text","text":"2"}]}],
	 "max_tokens":7,"top_p":0.5,"stop":"END","seed":-9,"presence_penalty":0.5,"frequency_penalty":-0.5,
	 "response_format":{"type":"json_schema","json_schema":{"name":"r","description":"d","schema":{"type":"object"},"strict":true}},
	 "tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false,"stream":true,"stream_options":{"include_usage":true}}`
	req, usage, e := DecodeChatProfile([]byte(body), llm.Limits{}, Profile{Extended: true, NamesOptional: true})
	if e != nil {
		t.Fatal(e)
	}
	if !usage || *req.MaxTokens != 7 || req.MaxTokensParam != "max_tokens" || *req.TopP != 0.5 || len(req.Stop) != 1 || req.Stop[0] != "END" ||
		*req.Seed != -9 || *req.PresencePenalty != 0.5 || *req.FrequencyPenalty != -0.5 || !req.NamesOptional {
		t.Errorf("sampling: %+v", req)
	}
	f := req.ResponseFormat
	if f == nil || f.Type != llm.FormatJSONSchema || f.Name != "r" || f.Description != "d" || string(f.Schema) != `{"type":"object"}` || !*f.Strict {
		t.Errorf("response_format: %+v", f)
	}
	if tc := req.ToolChoice; tc == nil || tc.Mode != llm.ToolChoiceAuto || !tc.DisableParallel {
		t.Errorf("tool_choice: %+v", tc)
	}
	want := []llm.Message{
		{Role: "system", Name: "rules", Parts: []llm.Part{{Kind: llm.PartText, Text: "be "}, {Kind: llm.PartText, Text: "brief"}}},
		{Role: "user", Name: "ann", Parts: []llm.Part{{Kind: llm.PartText, Text: "see"},
			{Kind: llm.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="}, {Kind: llm.PartImage, URL: "https://example.com/cat.png"}}},
		{Role: "assistant", Name: "bot", Parts: []llm.Part{{Kind: llm.PartToolUse, ID: "c1", Name: "f", Input: "{}"}}},
		// the tool message's name is implied by its tool_call_id
		{Role: "user", Parts: []llm.Part{{Kind: llm.PartToolResult, Text: "42", ToolUseID: "c1"}}},
	}
	if !reflect.DeepEqual(req.Messages, want) {
		t.Errorf("messages:\n got %+v\nwant %+v", req.Messages, want)
	}
}

// TestExtendedMatchesStrict: a request the strict profile accepts means the same under the
// extended one.
func TestExtendedMatchesStrict(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","max_completion_tokens":3,"temperature":0.5,"user":"u","metadata":{"a":"b"}}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"n":1}`,
	} {
		s, su, e1 := DecodeChatProfile([]byte(body), llm.Limits{}, Profile{})
		x, xu, e2 := DecodeChatProfile([]byte(body), llm.Limits{}, extended)
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(x)
		if string(a) != string(b) || su != xu {
			t.Errorf("strict  %s\nextended %s", a, b)
		}
	}
}

func TestExtendedCompletion(t *testing.T) {
	body := `{"model":"m","prompt":"p","max_tokens":3,"top_p":0.5,"stop":["x"],"seed":1,"presence_penalty":1,"frequency_penalty":1}`
	if _, _, e := DecodeCompletionProfile([]byte(body), Profile{}); e == nil || e.Param != "frequency_penalty" && e.Param != "presence_penalty" && e.Param != "seed" && e.Param != "stop" && e.Param != "top_p" {
		t.Errorf("strict: %v", e)
	}
	req, _, e := DecodeCompletionProfile([]byte(body), extended)
	if e != nil {
		t.Fatal(e)
	}
	if *req.TopP != 0.5 || req.Stop[0] != "x" || *req.Seed != 1 || *req.PresencePenalty != 1 || *req.FrequencyPenalty != 1 || req.Prompt != "p" {
		t.Errorf("%+v", req)
	}
	for _, bad := range []string{`{"model":"m","prompt":"p","top_p":2}`, `{"model":"m","prompt":["a"]}`, `{"model":"m","prompt":"p","echo":true}`} {
		if _, _, e := DecodeCompletionProfile([]byte(bad), extended); e == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

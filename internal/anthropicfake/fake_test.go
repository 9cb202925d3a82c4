package anthropicfake

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const goodBody = `{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`

func post(t *testing.T, s *Server, header http.Header, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	return resp, string(b)
}

func goodHeaders() http.Header {
	return http.Header{"X-Api-Key": {APIKey}, "Anthropic-Version": {"2023-06-01"}}
}

// TestValidation: each rule of the real API that the fake enforces refuses a request that
// breaks it with Anthropic's error shape, and the same request with the rule respected
// passes (the "ok" variants), so no rule refuses everything.
func TestValidation(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		body   string
		status int
		typ    string
		msg    string // part of the message
	}{
		{"no api key", http.Header{"Anthropic-Version": {"2023-06-01"}}, goodBody, 401, "authentication_error", "x-api-key header is required"},
		{"wrong api key", http.Header{"X-Api-Key": {"sk-other"}, "Anthropic-Version": {"2023-06-01"}}, goodBody, 401, "authentication_error", "invalid x-api-key"},
		{"bearer instead of x-api-key", http.Header{"Authorization": {"Bearer " + APIKey}, "Anthropic-Version": {"2023-06-01"}}, goodBody, 401, "authentication_error", "x-api-key"},
		{"no version", http.Header{"X-Api-Key": {APIKey}}, goodBody, 400, "invalid_request_error", "anthropic-version: header is required"},
		{"unknown version", http.Header{"X-Api-Key": {APIKey}, "Anthropic-Version": {"2099-01-01"}}, goodBody, 400, "invalid_request_error", "anthropic-version"},
		{"ok: the TypeScript SDK 1.x's version", http.Header{"X-Api-Key": {APIKey}, "Anthropic-Version": {"2026-10-21"}}, goodBody, 200, "", ""},
		{"no max_tokens", nil, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens: Field required"},
		{"no model", nil, `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "model: Field required"},
		// The API takes system instructions inside messages too (Claude Code sends them so),
		// as text only.
		{"ok: system role in messages", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"system","content":"s"}]}`, 200, "", ""},
		{"system message with a tool block", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"system","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`, 400, "invalid_request_error", "system.0.type"},
		{"tool role", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"tool","content":"s"}]}`, 400, "invalid_request_error", "Input should be 'user', 'assistant' or 'system'"},
		{"temperature above 1", nil, `{"model":"m","max_tokens":5,"temperature":1.5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "temperature"},
		{"unknown field", nil, `{"model":"m","max_tokens":5,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "stream_options: Extra inputs are not permitted"},
		{"empty text", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, 400, "invalid_request_error", "non-empty"},
		{"text before tool_result", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"here"},{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}]}`, 400, "invalid_request_error", "Did not find 1 `tool_result` block(s) at the beginning"},
		{"tool_result missing", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"assistant","content":"x"}]}`, 400, "invalid_request_error", "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"results split over two messages", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"b"}]}]}`, 400, "invalid_request_error", "Did not find 2"},
		{"orphan tool_result", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"r"}]}]}`, 400, "invalid_request_error", "unexpected `tool_use_id`"},
		{"tool id with a dot", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"call.1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call.1"}]}]}`, 400, "invalid_request_error", "String should match pattern"},
		{"tool input not an object", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"x"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`, 400, "invalid_request_error", "valid dictionary"},
		{"tool schema without type", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "input_schema.type: Field required"},
		{"OpenAI tool shape", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"f","parameters":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "Extra inputs"},
		{"tool_choice without tools", nil, `{"model":"m","max_tokens":5,"tool_choice":{"type":"none"},"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "tool_choice"},
		{"OpenAI tool_choice string", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":"required","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "tool_choice"},

		{"ok: minimal", nil, goodBody, 200, "", ""},
		{"ok: temperature 1, system blocks", nil, `{"model":"m","max_tokens":5,"temperature":1,"system":[{"type":"text","text":"a"}],"messages":[{"role":"user","content":"hi"}]}`, 200, "", ""},
		{"ok: tool results first, then text", nil, `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"},"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b-2_x","name":"f","input":{"q":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"b-2_x","content":"r"},{"type":"tool_result","tool_use_id":"a"},{"type":"text","text":"and?"}]}]}`, 200, "", ""},
		{"ok: empty final assistant prefill", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":""}]}`, 200, "", ""},
	}
	s := New()
	defer s.Close()
	s.SetDefault(Reply{Answer: &Answer{Blocks: []Block{Text("fine")}}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.header
			if h == nil {
				h = goodHeaders()
			}
			resp, body := post(t, s, h, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == 200 {
				if s.Last().Rejected != nil {
					t.Errorf("recorded as rejected: %v", s.Last().Rejected)
				}
				return
			}
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatal(err)
			}
			if e.Type != "error" || e.Error.Type != tt.typ || !strings.Contains(e.Error.Message, tt.msg) || e.RequestID == "" {
				t.Errorf("body %s, want type %s with %q", body, tt.typ, tt.msg)
			}
			if s.Last().Rejected == nil {
				t.Error("not recorded as rejected")
			}
		})
	}
}

func TestVertexDialect(t *testing.T) {
	body := `{"anthropic_version":"vertex-2023-10-16","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	if e := ValidateBody([]byte(body), Vertex); e != nil {
		t.Errorf("Vertex body refused: %v", e)
	}
	if e := ValidateBody([]byte(body), Direct); e == nil {
		t.Error("anthropic_version accepted by the direct API")
	}
	if e := ValidateBody([]byte(`{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), Vertex); e == nil {
		t.Error("Vertex body without anthropic_version accepted")
	}
}

func TestNothingScripted(t *testing.T) {
	s := New()
	defer s.Close()
	resp, body := post(t, s, goodHeaders(), goodBody)
	if resp.StatusCode != 500 || !strings.Contains(body, "no reply scripted") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// TestEvents checks the scripted stream looks like the API's: ping between events, usage
// at the start and the end, tool input cut inside tokens and inside escapes, and the
// fragments joining back into the input.
func TestEvents(t *testing.T) {
	input := `{"city":"Paris","note":"say \"hi\" caf\u00e9 ñ"}`
	a := &Answer{Blocks: []Block{Text("Checking the weather now."), ToolUse("toolu_1", "get_weather", input), ToolUse("toolu_2", "get_time", `{}`)},
		StopReason: "tool_use", Usage: Usage{Input: 10, Output: 30, CacheRead: 4}}
	ev := a.Events("claude-x")
	names := make([]string, len(ev))
	for i, e := range ev {
		names[i] = e.Name
		if !json.Valid([]byte(e.Data)) {
			t.Fatalf("event %d data is not JSON: %s", i, e.Data)
		}
	}
	joined := strings.Join(names, " ")
	if !strings.HasPrefix(joined, "message_start ping content_block_start content_block_delta ping") ||
		!strings.HasSuffix(joined, "content_block_stop message_delta message_stop") {
		t.Errorf("event order: %s", joined)
	}
	if !strings.Contains(ev[0].Data, `"input_tokens":10`) || !strings.Contains(ev[0].Data, `"cache_read_input_tokens":4`) {
		t.Errorf("message_start usage: %s", ev[0].Data)
	}
	if md := ev[len(ev)-2].Data; !strings.Contains(md, `"output_tokens":30`) || !strings.Contains(md, `"stop_reason":"tool_use"`) || strings.Contains(md, "input_tokens") {
		t.Errorf("message_delta: %s", md)
	}
	var frags []string
	midEscape := false
	for _, e := range ev {
		var d struct {
			Index int `json:"index"`
			Delta struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		_ = json.Unmarshal([]byte(e.Data), &d)
		if d.Delta.Type == "input_json_delta" && d.Index == 1 {
			frags = append(frags, d.Delta.PartialJSON)
			if strings.HasSuffix(d.Delta.PartialJSON, `\`) {
				midEscape = true
			}
		}
	}
	if len(frags) < 5 || frags[0] != "" || !midEscape {
		t.Errorf("fragments %q: want an empty first one, several, one ending inside an escape", frags)
	}
	if strings.Join(frags, "") != input {
		t.Errorf("fragments join to %q", strings.Join(frags, ""))
	}
	for _, f := range frags[1:] {
		if json.Valid([]byte(f)) && f == input {
			t.Error("input sent whole")
		}
	}
}

func TestStreamDelivery(t *testing.T) {
	s := New()
	defer s.Close()
	a := &Answer{Blocks: []Block{Text("one two three")}, Usage: Usage{Input: 1, Output: 3}}
	whole := SSE(a.Events("claude-x"))
	s.Enqueue(Reply{Answer: a, ChunkSize: 5, Delay: time.Millisecond},
		Reply{Events: Join(Truncate(a.Events("claude-x"), 1), []Event{ErrorEvent("overloaded_error", "Overloaded")})},
		Reply{Events: Truncate(a.Events("claude-x"), 1), Cut: true},
		Overloaded())
	stream := strings.Replace(goodBody, `"max_tokens"`, `"stream":true,"max_tokens"`, 1)

	resp, body := post(t, s, goodHeaders(), stream)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" || body != whole {
		t.Errorf("chunked stream: %d %q", resp.StatusCode, body)
	}
	_, body = post(t, s, goodHeaders(), stream)
	if !strings.HasSuffix(body, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n") || !strings.Contains(body, "text_delta") || strings.Contains(body, "message_stop") {
		t.Errorf("error after content: %s", body)
	}

	req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/messages", strings.NewReader(stream))
	req.Header = goodHeaders()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(string(b), "text_delta") {
		t.Errorf("cut stream: read %q, err %v; want content then an unexpected EOF", b, err)
	}

	resp, body = post(t, s, goodHeaders(), stream)
	if resp.StatusCode != 529 || resp.Header.Get("Retry-After") != "" || !strings.Contains(body, "overloaded_error") {
		t.Errorf("overloaded: %d %s", resp.StatusCode, body)
	}
	if s.Pending() != 0 || len(s.Requests()) != 4 {
		t.Errorf("pending %d, requests %d", s.Pending(), len(s.Requests()))
	}
}

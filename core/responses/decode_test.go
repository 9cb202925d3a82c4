package responses_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/responses"
	"github.com/fngate/fngate/internal/gatewaytest"
	"github.com/fngate/fngate/internal/golden"
)

// decodeAll decodes a body and builds its conversation without a continued response.
func decodeAll(t *testing.T, body []byte) (*responses.Request, *llm.Error) {
	t.Helper()
	r, e := responses.Decode(body, llm.Limits{})
	if e != nil {
		return nil, e
	}
	if e := r.Continue(nil); e != nil {
		return nil, e
	}
	return r, nil
}

// view is what a golden file shows of a decoded request: the gateway's request and the
// door's own fields, zero values left out so each file shows what the case sets.
func view(t *testing.T, r *responses.Request) []byte {
	t.Helper()
	req := *r.LLM
	rs := *req.Responses
	req.Responses = nil
	fields := map[string]json.RawMessage{}
	for _, f := range rs.Fields {
		fields[f.Name] = f.Value
	}
	var only []map[string]string
	for _, e := range rs.Only {
		only = append(only, map[string]string{"param": e.Param, "message": e.Message})
	}
	v := map[string]any{
		"llm": req, "store": r.Store, "previous_response_id": r.PreviousResponseID, "include_encrypted": r.IncludeEncrypted,
		"summary": r.Summary, "responses": map[string]any{"effort": rs.Effort, "only": only, "fields": sortedKeys(fields), "input_items": itemCount(rs.Input)},
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(prune(generic))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedKeys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func itemCount(raw json.RawMessage) int {
	var items []json.RawMessage
	_ = json.Unmarshal(raw, &items)
	return len(items)
}

// prune drops zero values (null, "", 0, false, empty arrays and objects), but inside the
// schemas kept byte for byte, and names part kinds.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, el := range x {
			switch k {
			case "Parameters", "Schema":
				continue
			case "Kind":
				x[k] = partKinds[int(el.(float64))]
				continue
			}
			el = prune(el)
			if isZero(el) {
				delete(x, k)
			} else {
				x[k] = el
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = prune(x[i])
		}
		return x
	}
	return v
}

var partKinds = []string{"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", "raw"}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// TestDecodeGolden decodes each request in testdata/decode and compares the gateway's
// request with its golden file.
func TestDecodeGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "decode", ".json") {
		t.Run(name, func(t *testing.T) {
			r, e := decodeAll(t, golden.Read(t, filepath.Join("decode", name+".json")))
			if e != nil {
				t.Fatalf("refused: %v", e)
			}
			golden.CheckIndented(t, filepath.Join("testdata", "decode", name+".golden.json"), view(t, r))
		})
	}
}

// TestDecodeRefuses: what OpenAI would refuse is a 400 naming the field in OpenAI's notation,
// with its code.
func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, body  string
		param, code string
		message     string // a part of it
	}{
		{"empty", ``, "", "", "empty"},
		{"not JSON", `{"model":`, "", "", "could not parse"},
		{"array body", `[]`, "", "", "JSON object"},
		{"unknown", `{"model":"m","input":"x","seed":1}`, "seed", "unknown_parameter", "Unknown parameter: 'seed'."},
		{"case", `{"model":"m","Input":"x"}`, "Input", "unknown_parameter", "did you mean 'input'"},
		{"duplicate", `{"model":"m","input":"x","input":"y"}`, "input", "duplicate_parameter", "more than once"},
		{"duplicate deep", `{"model":"m","input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object","type":"x"}}]}`, "tools[0].parameters.type", "duplicate_parameter", ""},
		{"no model", `{"input":"x"}`, "model", "missing_required_parameter", ""},
		{"empty model", `{"model":"","input":"x"}`, "model", "invalid_value", ""},
		{"no input", `{"model":"m"}`, "input", "missing_required_parameter", ""},
		{"input type", `{"model":"m","input":5}`, "input", "invalid_type", "expected a string or an array of input items, but got a number instead"},
		{"item type", `{"model":"m","input":[{"content":"x"}]}`, "input[0].type", "missing_required_parameter", ""},
		{"role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role", "invalid_value", "Supported values are: 'user', 'assistant', 'system', and 'developer'."},
		{"part in user", `{"model":"m","input":[{"role":"user","content":[{"type":"output_text","text":"x"}]}]}`, "input[0].content[0].type", "invalid_value", ""},
		{"part key", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"x","bold":true}]}]}`, "input[0].content[0].bold", "unknown_parameter", ""},
		{"text type", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":1}]}]}`, "input[0].content[0].text", "invalid_type", ""},
		{"image url", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"ftp://x"}]}]}`, "input[0].content[0].image_url", "invalid_value", ""},
		{"call without name", `{"model":"m","input":[{"type":"function_call","call_id":"c","arguments":"{}"}]}`, "input[0].name", "missing_required_parameter", ""},
		{"orphan output", `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"x"}]}`, "input[0].call_id", "invalid_value", "No tool call found for function call output with call_id c."},
		{"unanswered call", `{"model":"m","input":[{"role":"user","content":"x"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`, "input[1]", "invalid_value", "No tool output found for function call c."},
		{"duplicate call", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`, "input[1].call_id", "invalid_value", ""},
		{"only instructions", `{"model":"m","input":[{"role":"developer","content":"x"}]}`, "input", "invalid_value", ""},
		{"temperature", `{"model":"m","input":"x","temperature":2.5}`, "temperature", "decimal_above_max_value", "Expected a value <= 2, but got 2.5 instead."},
		{"top_p type", `{"model":"m","input":"x","top_p":"high"}`, "top_p", "invalid_type", ""},
		{"max_output_tokens", `{"model":"m","input":"x","max_output_tokens":8}`, "max_output_tokens", "integer_below_min_value", ""},
		{"tool type", `{"model":"m","input":"x","tools":[{"name":"f"}]}`, "tools[0].type", "missing_required_parameter", ""},
		{"tool name", `{"model":"m","input":"x","tools":[{"type":"function","name":"a b"}]}`, "tools[0].name", "invalid_value", ""},
		{"tool key", `{"model":"m","input":"x","tools":[{"type":"function","name":"f","Parameters":{}}]}`, "tools[0].Parameters", "unknown_parameter", "did you mean 'parameters'"},
		{"duplicate tool", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"},{"type":"function","name":"f"}]}`, "tools[1].name", "invalid_value", ""},
		{"namespace without a name", `{"model":"m","input":"x","tools":[{"type":"namespace","tools":[]}]}`, "tools[0].name", "missing_required_parameter", ""},
		{"namespace without tools", `{"model":"m","input":"x","tools":[{"type":"namespace","name":"mcp__gh"}]}`, "tools[0].tools", "missing_required_parameter", ""},
		{"namespace tools type", `{"model":"m","input":"x","tools":[{"type":"namespace","name":"mcp__gh","tools":{}}]}`, "tools[0].tools", "invalid_type", ""},
		{"namespace function name", `{"model":"m","input":"x","tools":[{"type":"namespace","name":"mcp__gh","tools":[{"type":"function","name":"a b"}]}]}`, "tools[0].tools[0].name", "invalid_value", ""},
		{"namespace function key", `{"model":"m","input":"x","tools":[{"type":"namespace","name":"mcp__gh","tools":[{"type":"function","name":"f","Parameters":{}}]}]}`, "tools[0].tools[0].Parameters", "unknown_parameter", ""},
		{"call namespace type", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","namespace":1,"arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"x"}]}`, "input[0].namespace", "invalid_type", ""},
		{"tool_choice value", `{"model":"m","input":"x","tool_choice":"any"}`, "tool_choice", "invalid_value", ""},
		{"tool_choice name", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`, "tool_choice", "invalid_value", ""},
		{"effort", `{"model":"m","input":"x","reasoning":{"effort":"max"}}`, "reasoning.effort", "invalid_value", ""},
		{"format", `{"model":"m","input":"x","text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name", "missing_required_parameter", ""},
		{"include", `{"model":"m","input":"x","include":["everything"]}`, "include[0]", "invalid_value", ""},
		{"metadata value", `{"model":"m","input":"x","metadata":{"a":1}}`, "metadata.a", "invalid_type", ""},
		{"metadata pairs", `{"model":"m","input":"x","metadata":{"1":"","2":"","3":"","4":"","5":"","6":"","7":"","8":"","9":"","10":"","11":"","12":"","13":"","14":"","15":"","16":"","17":""}}`, "metadata", "object_above_max_properties", ""},
		{"background", `{"model":"m","input":"x","background":true}`, "background", "unsupported_parameter", ""},
		{"stream type", `{"model":"m","input":"x","stream":"yes"}`, "stream", "invalid_type", ""},
		{"call without type", `{"model":"m","input":[{"id":"fc_1","call_id":"c","name":"f","arguments":"{}"}]}`, "input[0].type", "missing_required_parameter", ""},
		{"reference without id", `{"model":"m","input":[{"type":"item_reference"}]}`, "input[0].id", "missing_required_parameter", ""},
		{"reference id type", `{"model":"m","input":[{"type":"item_reference","id":7}]}`, "input[0].id", "invalid_type", ""},
		{"reference key", `{"model":"m","input":[{"type":"item_reference","id":"msg_1","role":"user"}]}`, "input[0].role", "unknown_parameter", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := decodeAll(t, []byte(tc.body))
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Status != http.StatusBadRequest || e.Param != tc.param || e.Code != tc.code || !strings.Contains(e.Message, tc.message) {
				t.Errorf("got %d %q %q: %s", e.Status, e.Param, e.Code, e.Message)
			}
		})
	}
}

// A continued response's items come first, and a function call it ended with is answered by
// the request's own output.
func TestContinueJoinsTheHistory(t *testing.T) {
	r, e := responses.Decode([]byte(`{"model":"m","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c1","output":"42"}]}`), llm.Limits{})
	if e != nil {
		t.Fatal(e)
	}
	history := []json.RawMessage{
		json.RawMessage(`{"type":"message","role":"user","content":[{"type":"input_text","text":"find it"}]}`),
		json.RawMessage(`{"id":"fc_1","type":"function_call","status":"completed","arguments":"{}","call_id":"c1","name":"lookup"}`),
	}
	if e := r.Continue(history); e != nil {
		t.Fatal(e)
	}
	m := r.LLM.Messages
	if len(m) != 3 || m[1].Parts[0].Kind != llm.PartToolUse || m[2].Parts[0].ToolUseID != "c1" || itemCount(r.LLM.Responses.Input) != 3 {
		t.Errorf("messages %+v\ninput %s", m, r.LLM.Responses.Input)
	}
	if len(r.Items) != 1 {
		t.Errorf("own items %d, want 1 (the store keeps the history apart)", len(r.Items))
	}
	// Without the history, the output answers nothing.
	r, _ = responses.Decode([]byte(`{"model":"m","input":[{"type":"function_call_output","call_id":"c1","output":"42"}]}`), llm.Limits{})
	if e := r.Continue(nil); e == nil || e.Param != "input[0].call_id" {
		t.Errorf("an orphan output: %v", e)
	}
}

// TestDecodeAcceptsEverythingCodexSends replays every request of the Codex recordings: each
// is accepted, and only the hosted web_search tool Codex sends by default (unless its config
// turns it off) is the native route's. Its other default, the multi_agent_v1 namespace, every
// route is offered, its functions under flattened names.
func TestDecodeAcceptsEverythingCodexSends(t *testing.T) {
	for _, rec := range gatewaytest.AgentRecordings(t, "codex-*.jsonl") {
		name := rec.File + ":" + strconv.Itoa(rec.Line)
		if rec.Method != http.MethodPost || rec.URL != "/v1/responses" {
			t.Errorf("%s: %s %s, want only POST /v1/responses", name, rec.Method, rec.URL)
			continue
		}
		r, e := decodeAll(t, rec.Body)
		if e != nil {
			t.Errorf("%s: refused: %v", name, e)
			continue
		}
		if !r.LLM.Stream || len(r.LLM.Messages) == 0 || len(r.LLM.Tools) < 7 || r.Store || !r.IncludeEncrypted || r.LLM.Session == "" {
			t.Errorf("%s: decoded stream %v, %d messages, %d tools, store %v, encrypted %v, session %q", name, r.LLM.Stream,
				len(r.LLM.Messages), len(r.LLM.Tools), r.Store, r.IncludeEncrypted, r.LLM.Session)
		}
		var params []string
		for _, o := range r.LLM.Responses.Only {
			params = append(params, o.Param)
		}
		defaultTools := strings.Contains(rec.File, "default-tools") || strings.Contains(rec.File, "not-hardened")
		flattened := false
		for _, tool := range r.LLM.Tools {
			flattened = flattened || strings.HasPrefix(tool.Name, "multi_agent_v1__")
		}
		switch {
		case defaultTools && strings.Join(params, " ") != "tools[8]":
			t.Errorf("%s: native-only %v, want the web_search tool", name, params)
		case defaultTools && !strings.Contains(r.LLM.Responses.Refusal().Message, "web search"):
			t.Errorf("%s: refusal %v", name, r.LLM.Responses.Refusal())
		case defaultTools && !flattened:
			t.Errorf("%s: the multi_agent_v1 namespace's functions are not among the tools", name)
		case !defaultTools && len(params) > 0:
			t.Errorf("%s: native-only %v; with the default tools off every route can serve it", name, params)
		}
	}
}

// BenchmarkDecodeCodexRequest decodes Codex's first request of a session (30 KB: its
// instructions and seven function tools), as every turn resends them.
func BenchmarkDecodeCodexRequest(b *testing.B) {
	recs := gatewaytest.AgentRecordings(b, "codex-exec.jsonl")
	body := []byte(recs[0].Body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, e := responses.Decode(body, llm.Limits{})
		if e == nil {
			e = r.Continue(nil)
		}
		if e != nil {
			b.Fatal(e)
		}
	}
}

package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The stubs stand in for the gateway's /v1/messages and /v1/responses doors, which do not
// exist yet: just enough of each wire, in its documented shape, for a client to finish a turn.
// The requests they answer are the ones recorded in ../shared/captures/agent-clients.

// request is one request a stub received, kept for the test's assertions.
type request struct {
	Method string
	URL    string // path and query, as sent
	Header http.Header
	Body   map[string]any // the JSON body; nil when there was none
}

// recorder is the part both stubs share: a loopback server that keeps each request.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []request
}

// newRecorder serves h on 127.0.0.1 (httptest listens on loopback only), recording first.
func newRecorder(t *testing.T, h func(w http.ResponseWriter, r *http.Request, body map[string]any)) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Errorf("%s %s: body is not JSON: %v", r.Method, r.URL, err)
			}
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, request{Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
		rec.mu.Unlock()
		h(w, r, body)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) requests() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]request(nil), rec.reqs...)
}

// sse writes one server-sent event and flushes it, as a streaming API does.
func sse(w http.ResponseWriter, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	w.(http.Flusher).Flush()
}

// anthropicTurn is what the Messages stub answers one request with: a text block, a tool_use
// block when ToolName is set, or an error when ErrorStatus is.
type anthropicTurn struct {
	Text      string
	ToolName  string
	ToolInput map[string]any
	// ErrorStatus and ErrorType make the answer Anthropic's error JSON with that status.
	ErrorStatus int
	ErrorType   string
}

// anthropicStub answers Claude Code as api.anthropic.com does, in the documented Messages
// streaming shape (https://docs.anthropic.com/en/api/messages-streaming): each POST
// /v1/messages gets the turn that answer picks for its body. HEAD / and HEAD /api/hello are
// Claude Code's reachability probes (not sent while nonessential traffic is off); GET
// /v1/models is gateway model discovery. Anything else is a 404 in Anthropic's error shape,
// recorded like the rest so the test sees it.
func anthropicStub(t *testing.T, answer func(body map[string]any) anthropicTurn) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		w.Header().Set("request-id", "req_stub")
		switch {
		case r.Method == http.MethodHead && (r.URL.Path == "/" || r.URL.Path == "/api/hello"):
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"data": []any{map[string]any{"type": "model", "id": "claude-stub",
					"display_name": "Claude Stub", "created_at": "2026-01-01T00:00:00Z"}},
				"has_more": false, "first_id": "claude-stub", "last_id": "claude-stub",
			})
		case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
			turn := answer(body)
			if turn.ErrorStatus != 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(turn.ErrorStatus)
				json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{
					"type": turn.ErrorType, "message": "stub: " + turn.ErrorType}})
				return
			}
			streamMessage(w, body, turn)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{
				"type": "not_found_error", "message": "stub: no route for " + r.Method + " " + r.URL.Path}})
		}
	})
}

// streamMessage writes one assistant message as Messages SSE. Claude Code always streams
// (every recorded request has stream: true), so there is no JSON branch.
func streamMessage(w http.ResponseWriter, body map[string]any, turn anthropicTurn) {
	model, _ := body["model"].(string)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_stub", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 12, "output_tokens": 1,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	stop := "end_turn"
	if turn.ToolName != "" {
		stop = "tool_use"
		input, _ := json.Marshal(turn.ToolInput)
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_stub", "name": turn.ToolName, "input": map[string]any{}}})
		// The API streams tool input as partial JSON; two pieces make the client assemble it.
		half := len(input) / 2
		for _, piece := range []string{string(input[:half]), string(input[half:])} {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "ping", map[string]any{"type": "ping"})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": turn.Text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 3}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// toolResult returns the text of the tool_result block in the request's last message, if any.
func toolResult(body map[string]any) (string, bool) {
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return "", false
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	blocks, _ := last["content"].([]any)
	for _, b := range blocks {
		block, _ := b.(map[string]any)
		if block["type"] != "tool_result" {
			continue
		}
		switch c := block["content"].(type) {
		case string:
			return c, true
		case []any: // the API also allows a list of text blocks
			var sb strings.Builder
			for _, p := range c {
				if part, ok := p.(map[string]any); ok {
					s, _ := part["text"].(string)
					sb.WriteString(s)
				}
			}
			return sb.String(), true
		}
		return "", true
	}
	return "", false
}

// responsesTurn is what the Responses stub answers one request with: a text message, or a
// function_call item when Function is set.
type responsesTurn struct {
	Text      string
	Function  string // the function tool to call
	Arguments string // its arguments, a JSON text as the API sends them
	// SkipItemDone leaves out response.output_item.done, which Codex needs (see
	// TestCodexIgnoresTextWithoutOutputItemDone).
	SkipItemDone bool
	// ErrorStatus makes the answer OpenAI's error JSON with that status.
	ErrorStatus int
}

// responsesStub answers Codex as api.openai.com does, in the documented Responses streaming
// shape (https://platform.openai.com/docs/api-reference/responses-streaming): each POST
// /v1/responses gets the turn answer picks for its body, every event carrying its
// sequence_number. Anything else is a 404 in OpenAI's error shape, recorded like the rest.
func responsesStub(t *testing.T, answer func(body map[string]any) responsesTurn) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": "stub: no route for " + r.Method + " " + r.URL.Path,
				"type":    "invalid_request_error", "param": nil, "code": "not_found"}})
			return
		}
		turn := answer(body)
		if turn.ErrorStatus != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(turn.ErrorStatus)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": fmt.Sprintf("stub: status %d", turn.ErrorStatus),
				"type":    "invalid_request_error", "param": nil, "code": nil}})
			return
		}
		streamResponse(w, body, turn)
	})
}

// streamResponse writes one response as Responses SSE. Codex always streams.
func streamResponse(w http.ResponseWriter, body map[string]any, turn responsesTurn) {
	model, _ := body["model"].(string)
	response := func(status string, output []any, usage any) map[string]any {
		return map[string]any{
			"id": "resp_stub", "object": "response", "created_at": 1764547200,
			"status": status, "model": model, "output": output, "usage": usage,
			"error": nil, "incomplete_details": nil, "parallel_tool_calls": true,
			"tool_choice": "auto", "tools": []any{}, "store": false,
		}
	}
	var added, done map[string]any
	if turn.Function != "" {
		fc := func(status, args string) map[string]any {
			return map[string]any{"id": "fc_stub", "type": "function_call", "status": status,
				"call_id": "call_stub", "name": turn.Function, "arguments": args}
		}
		added, done = fc("in_progress", ""), fc("completed", turn.Arguments)
	} else {
		msg := func(status string, content []any) map[string]any {
			return map[string]any{"id": "msg_stub", "type": "message", "status": status,
				"role": "assistant", "content": content}
		}
		added = msg("in_progress", []any{})
		done = msg("completed", []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}})
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	seq := 0
	emit := func(event string, data map[string]any) {
		data["type"], data["sequence_number"] = event, seq
		seq++
		sse(w, event, data)
	}
	emit("response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
	emit("response.output_item.added", map[string]any{"output_index": 0, "item": added})
	if turn.Function != "" {
		emit("response.function_call_arguments.delta", map[string]any{"item_id": "fc_stub", "output_index": 0, "delta": turn.Arguments})
		emit("response.function_call_arguments.done", map[string]any{"item_id": "fc_stub", "output_index": 0, "arguments": turn.Arguments})
	} else {
		emit("response.output_text.delta", map[string]any{"item_id": "msg_stub", "output_index": 0,
			"content_index": 0, "delta": turn.Text, "logprobs": []any{}})
	}
	if !turn.SkipItemDone {
		emit("response.output_item.done", map[string]any{"output_index": 0, "item": done})
	}
	emit("response.completed", map[string]any{"response": response("completed", []any{done},
		map[string]any{"input_tokens": 12, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 3, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 15})})
}

// functionOutput returns the output of the function_call_output item ending the input, if any.
func functionOutput(body map[string]any) (string, bool) {
	input, _ := body["input"].([]any)
	if len(input) == 0 {
		return "", false
	}
	last, _ := input[len(input)-1].(map[string]any)
	if last["type"] != "function_call_output" {
		return "", false
	}
	out, _ := last["output"].(string)
	return out, true
}

package openaifake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The Responses API (POST /v1/responses), as OpenAI serves it: the response object, and its
// event stream with sequence numbers, output items opened and closed with their parts, and
// response.completed (or response.incomplete) at the end. A Reply's Text, ToolCalls,
// Reasoning (a reasoning item with a summary) and WebSearch (a web_search_call item before
// the answer) make the output; FinishReason "length" makes it incomplete; the stream faults
// strike as on Chat Completions, ErrorEventAfter sending OpenAI's error event and
// response.failed.

// responsesFields are the request fields OpenAI's Responses API accepts; any other is
// refused as OpenAI refuses it.
var responsesFields = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"max_output_tokens": true, "temperature": true, "top_p": true, "stream": true, "stream_options": true, "metadata": true,
	"user": true, "store": true, "previous_response_id": true, "reasoning": true, "text": true, "include": true,
	"prompt_cache_key": true, "prompt_cache_retention": true, "client_metadata": true, "safety_identifier": true,
	"truncation": true, "service_tier": true, "background": true, "conversation": true, "prompt": true,
	"max_tool_calls": true, "top_logprobs": true, "context_management": true,
}

// checkResponses answers 400 for a request OpenAI would refuse; it reports whether it did.
func checkResponses(w http.ResponseWriter, body map[string]any) bool {
	for k := range body {
		if !responsesFields[k] {
			writeParamError(w, 400, "Unknown parameter: '"+k+"'.", k, "unknown_parameter")
			return true
		}
	}
	if model, _ := body["model"].(string); model == "" {
		writeParamError(w, 400, "Missing required parameter: 'model'.", "model", "missing_required_parameter")
		return true
	}
	if id, ok := body["previous_response_id"].(string); ok && id != "" {
		// The gateway keeps the chain itself: an id of its own would be unknown here.
		writeParamError(w, 400, "Previous response with id '"+id+"' not found.", "previous_response_id", "previous_response_not_found")
		return true
	}
	switch in := body["input"].(type) {
	case string:
	case []any:
		for i, x := range in {
			it, _ := x.(map[string]any)
			if it == nil || it["type"] == nil && it["role"] == nil {
				p := "input[" + strconv.Itoa(i) + "]"
				writeParamError(w, 400, "Missing required parameter: '"+p+".type'.", p+".type", "missing_required_parameter")
				return true
			}
		}
	default:
		writeParamError(w, 400, "Missing required parameter: 'input'.", "input", "missing_required_parameter")
		return true
	}
	if tools, ok := body["tools"].([]any); ok {
		for i, x := range tools {
			if t, _ := x.(map[string]any); t == nil || t["type"] == nil {
				p := "tools[" + strconv.Itoa(i) + "].type"
				writeParamError(w, 400, "Missing required parameter: '"+p+"'.", p, "missing_required_parameter")
				return true
			}
		}
	}
	return false
}

func writeParamError(w http.ResponseWriter, status int, msg, param, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": code}})
	_, _ = w.Write(b)
}

// responseItems are the output items of a reply, whole.
func (r *Reply) responseItems() []map[string]any {
	var out []map[string]any
	if r.WebSearch {
		out = append(out, map[string]any{"id": "ws_fake", "type": "web_search_call", "status": "completed",
			"action": map[string]any{"type": "search", "query": "fake query"}})
	}
	if r.Reasoning != "" {
		out = append(out, map[string]any{"id": "rs_fake", "type": "reasoning",
			"summary": []any{map[string]any{"type": "summary_text", "text": r.Reasoning}}})
	}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		out = append(out, map[string]any{"id": "msg_fake", "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}, "logprobs": []any{}}}})
	}
	for i, tc := range r.ToolCalls {
		out = append(out, map[string]any{"id": "fc_fake_" + strconv.Itoa(i), "type": "function_call", "status": "completed",
			"call_id": tc.ID, "name": tc.Name, "arguments": tc.Arguments})
	}
	return out
}

func (r *Reply) responsesUsage() any {
	if r.NoUsage {
		return nil
	}
	if r.RawUsage != nil {
		return r.RawUsage
	}
	return map[string]any{
		"input_tokens": r.PromptTokens, "input_tokens_details": map[string]any{"cached_tokens": max(r.CachedTokens, 0)},
		"output_tokens": r.CompletionTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": r.PromptTokens + r.CompletionTokens,
	}
}

// responseObject is the response object of a reply, with the given status and output.
func responseObject(body map[string]any, status string, output []map[string]any, usage any) map[string]any {
	store, ok := body["store"].(bool)
	if !ok {
		store = true
	}
	o := map[string]any{
		"id": "resp_fake", "object": "response", "created_at": 1700000000, "status": status, "background": false,
		"error": nil, "incomplete_details": nil, "instructions": body["instructions"], "max_output_tokens": body["max_output_tokens"],
		"model": modelOf(body), "output": output, "parallel_tool_calls": true, "previous_response_id": nil,
		"reasoning": map[string]any{"effort": nil, "summary": nil}, "store": store, "temperature": 1.0,
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "tool_choice": "auto", "tools": []any{},
		"top_p": 1.0, "truncation": "disabled", "usage": usage, "metadata": map[string]any{},
	}
	if output == nil {
		o["output"] = []any{}
	}
	if status == "completed" {
		o["completed_at"] = 1700000001
	}
	if status == "incomplete" {
		o["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	if md, ok := body["metadata"]; ok {
		o["metadata"] = md
	}
	return o
}

func (r *Reply) responseStatus() string {
	if r.FinishReason == "length" {
		return "incomplete"
	}
	return "completed"
}

func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request, rep *Reply, body map[string]any) {
	if stream, _ := body["stream"].(bool); stream {
		s.streamResponses(w, r, rep, body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Body != nil {
		_, _ = w.Write(rep.Body)
		return
	}
	b, _ := json.Marshal(responseObject(body, rep.responseStatus(), rep.responseItems(), rep.responsesUsage()))
	_, _ = w.Write(b)
}

// streamResponses writes the reply's events. Faults count content-bearing events (text and
// argument deltas), as on Chat Completions.
func (s *Server) streamResponses(w http.ResponseWriter, r *http.Request, rep *Reply, body map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	seq := 0
	send := func(typ string, data map[string]any) bool {
		if rep.ChunkDelay > 0 {
			select {
			case <-time.After(rep.ChunkDelay):
			case <-r.Context().Done():
				s.canceled.Add(1)
				return false
			}
		}
		data["type"], data["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(data)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b); err != nil {
			return false
		}
		fl.Flush()
		return r.Context().Err() == nil
	}
	var done []map[string]any
	inProgress := func() map[string]any { return responseObject(body, "in_progress", nil, nil) }
	if !send("response.created", map[string]any{"response": inProgress()}) ||
		!send("response.in_progress", map[string]any{"response": inProgress()}) {
		return
	}
	content := 0 // content-bearing events sent
	fault := func() bool {
		content++
		switch {
		case rep.CutAfter > 0 && content > rep.CutAfter:
			cut(w)
			return true
		case rep.ErrorEventAfter > 0 && content > rep.ErrorEventAfter:
			msg := rep.ErrorEventMessage
			if msg == "" {
				msg = "scripted error event"
			}
			send("error", map[string]any{"code": "server_error", "message": msg, "param": nil})
			failed := responseObject(body, "failed", done, nil)
			failed["error"] = map[string]any{"code": "server_error", "message": msg}
			send("response.failed", map[string]any{"response": failed})
			return true
		}
		return false
	}
	items := rep.responseItems()
	for i, it := range items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		switch it["type"] {
		case "message":
			added["status"], added["content"] = "in_progress", []any{}
		case "function_call":
			added["status"], added["arguments"] = "in_progress", ""
		case "reasoning":
			added["summary"] = []any{}
		case "web_search_call":
			added["status"] = "in_progress"
		}
		if !send("response.output_item.added", map[string]any{"output_index": i, "item": added}) {
			return
		}
		ref := func(m map[string]any) map[string]any {
			m["item_id"], m["output_index"] = it["id"], i
			return m
		}
		switch it["type"] {
		case "web_search_call":
			for _, ev := range []string{"response.web_search_call.in_progress", "response.web_search_call.searching", "response.web_search_call.completed"} {
				if !send(ev, ref(map[string]any{})) {
					return
				}
			}
		case "reasoning":
			part := map[string]any{"type": "summary_text", "text": ""}
			if !send("response.reasoning_summary_part.added", ref(map[string]any{"summary_index": 0, "part": part})) {
				return
			}
			for _, word := range splitWords(rep.Reasoning) {
				if !send("response.reasoning_summary_text.delta", ref(map[string]any{"summary_index": 0, "delta": word})) {
					return
				}
			}
			if !send("response.reasoning_summary_text.done", ref(map[string]any{"summary_index": 0, "text": rep.Reasoning})) ||
				!send("response.reasoning_summary_part.done", ref(map[string]any{"summary_index": 0,
					"part": map[string]any{"type": "summary_text", "text": rep.Reasoning}})) {
				return
			}
		case "message":
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}, "logprobs": []any{}}
			if !send("response.content_part.added", ref(map[string]any{"content_index": 0, "part": part})) {
				return
			}
			for _, word := range splitWords(rep.Text) {
				if fault() {
					return
				}
				if !send("response.output_text.delta", ref(map[string]any{"content_index": 0, "delta": word, "logprobs": []any{}})) {
					return
				}
			}
			full := it["content"].([]any)[0]
			if !send("response.output_text.done", ref(map[string]any{"content_index": 0, "text": rep.Text, "logprobs": []any{}})) ||
				!send("response.content_part.done", ref(map[string]any{"content_index": 0, "part": full})) {
				return
			}
		case "function_call":
			args, _ := it["arguments"].(string)
			for _, piece := range thirds(args) {
				if fault() {
					return
				}
				if !send("response.function_call_arguments.delta", ref(map[string]any{"delta": piece})) {
					return
				}
			}
			if !send("response.function_call_arguments.done", ref(map[string]any{"arguments": args})) {
				return
			}
		}
		if !send("response.output_item.done", map[string]any{"output_index": i, "item": it}) {
			return
		}
		done = append(done, it)
	}
	if rep.NoDone {
		return // an upstream that stops without its terminal event
	}
	status := rep.responseStatus()
	name := "response.completed"
	if status == "incomplete" {
		name = "response.incomplete"
	}
	send(name, map[string]any{"response": responseObject(body, status, done, rep.responsesUsage())})
}

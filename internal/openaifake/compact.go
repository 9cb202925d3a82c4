package openaifake

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
)

// POST /v1/responses/compact, as OpenAI serves it: every user message of the input, then one
// compaction item whose encrypted_content only OpenAI can read (here an opaque token that
// counts the items it stands for, in the shape of OpenAI's: no fngate prefix). A Reply's
// usage counts are the answer's; its faults strike before the answer, as elsewhere.

// CompactToken is what the fake's compaction items hold: "gAAAAAB" and the base64 of the
// number of input items they compacted.
const CompactToken = "gAAAAAB"

// compactFields are the request fields OpenAI's compact endpoint accepts.
var compactFields = map[string]bool{
	"model": true, "input": true, "instructions": true, "previous_response_id": true, "prompt_cache_key": true,
	"prompt_cache_retention": true, "prompt_cache_options": true, "service_tier": true, "image": true,
}

// checkCompact answers 400 for a compact request OpenAI would refuse; it reports whether it
// did.
func checkCompact(w http.ResponseWriter, body map[string]any) bool {
	for k := range body {
		if !compactFields[k] {
			writeParamError(w, 400, "Unknown parameter: '"+k+"'.", k, "unknown_parameter")
			return true
		}
	}
	if id, ok := body["previous_response_id"].(string); ok && id != "" {
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
	return false
}

func (s *Server) serveCompact(w http.ResponseWriter, rep *Reply, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	if rep.Body != nil {
		_, _ = w.Write(rep.Body)
		return
	}
	var output []any
	n := 1
	switch in := body["input"].(type) {
	case string:
		output = append(output, userMessage([]any{map[string]any{"type": "input_text", "text": in}}))
	case []any:
		n = len(in)
		for _, x := range in {
			it, _ := x.(map[string]any)
			if it["role"] != "user" || (it["type"] != nil && it["type"] != "message") {
				continue
			}
			content := it["content"]
			if text, ok := content.(string); ok {
				content = []any{map[string]any{"type": "input_text", "text": text}}
			}
			output = append(output, userMessage(content))
		}
	}
	output = append(output, map[string]any{"id": "cmp_fake", "type": "compaction",
		"encrypted_content": CompactToken + base64.StdEncoding.EncodeToString([]byte(strconv.Itoa(n)))})
	b, _ := json.Marshal(map[string]any{"id": "resp_fake_compact", "object": "response.compaction", "created_at": 1700000000,
		"output": output, "usage": rep.responsesUsage()})
	_, _ = w.Write(b)
}

func userMessage(content any) map[string]any {
	return map[string]any{"id": "msg_fake", "type": "message", "status": "completed", "role": "user", "content": content}
}

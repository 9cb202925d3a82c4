package responses

import (
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// The one-pass copy of plain events writes what the general path writes, and declines every
// event it cannot copy exactly.
func TestPlainRawMatchesGeneral(t *testing.T) {
	for _, tc := range []struct {
		name, event, data string
		plain             bool
	}{
		{"a text delta", "response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}`, true},
		{"spaces between members", "response.output_text.delta", `{ "type" : "response.output_text.delta", "sequence_number" : 7 , "delta":"a b" }`, true},
		{"no sequence number", "response.output_text.delta", `{"type":"response.output_text.delta","delta":"x"}`, true},
		{"an empty object", "x", `{}`, true},
		{"nested values kept", "response.output_item.added", `{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"type":"message","id":"m","content":[]}}`, true},
		{"a response object", "response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_up","model":"up","store":true}}`, false},
		{"an escaped key", "x", `{"typ\u0065":"x","sequence_number":1}`, false},
		{"a repeated key", "x", `{"delta":"a","delta":"b","sequence_number":1}`, false},
		{"no event name", "", `{"type":"response.output_text.delta","sequence_number":1}`, false},
		{"not an object", "x", `[1,2]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := &llm.RawEvent{Wire: llm.WireResponses, Name: tc.event, Data: []byte(tc.data)}
			general := (&StreamEncoder{seq: 41}).appendRawGeneral([]byte("head:"), ev)
			fast := &StreamEncoder{seq: 41}
			got, ok := fast.appendPlainRaw([]byte("head:"), ev)
			if ok != tc.plain {
				t.Fatalf("copied as plain: %v, want %v", ok, tc.plain)
			}
			if ok && (string(got) != string(general) || fast.seq != 42) {
				t.Errorf("plain copy (next sequence number %d):\n%s\ngeneral path:\n%s", fast.seq, got, general)
			}
			if all := (&StreamEncoder{seq: 41}).appendRaw([]byte("head:"), ev); string(all) != string(general) {
				t.Errorf("appendRaw:\n%s\ngeneral path:\n%s", all, general)
			}
		})
	}
}

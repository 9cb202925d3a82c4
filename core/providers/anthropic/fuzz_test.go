package anthropic

import (
	"context"
	"io"
	"strings"
	"testing"
)

// FuzzStream feeds arbitrary bytes to the Messages stream translator as an upstream would.
// Nothing may panic; tool indexes are dense from 0 (the gateway makes up the id of a call
// that has none); and it ends with io.EOF only after message_stop.
func FuzzStream(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	f.Add("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
	f.Add("event: ping\ndata: {}\n\n: comment\n\ndata: {\"type\":\"message_stop\"}")
	f.Fuzz(func(t *testing.T, in string) {
		st := NewStream(context.Background(), io.NopCloser(strings.NewReader(in)), "Anthropic", false)
		defer st.Close()
		seen := map[int]bool{}
		for range 10000 {
			d, err := st.Next()
			if err == io.EOF {
				if !strings.Contains(in, "message_stop") {
					t.Fatalf("success without message_stop: %q", in)
				}
				return
			}
			if err != nil {
				return
			}
			for _, c := range d.ToolCalls {
				if !seen[c.Index] {
					if c.Index != len(seen) {
						t.Fatalf("call %+v breaks dense indexing (%d seen)", c, len(seen))
					}
					seen[c.Index] = true
				}
			}
		}
		t.Fatalf("the stream did not end on %q", in)
	})
}

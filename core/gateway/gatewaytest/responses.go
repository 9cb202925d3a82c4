package gatewaytest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// Streamed is a Responses stream read to its end by openai-go.
type Streamed struct {
	Types []string           // the event types, in order
	Final responses.Response // the terminal event's response
	Text  string             // the output_text deltas, joined
}

// StreamResponse runs a streaming Responses request, checking what every such stream must
// hold: sequence numbers from 0 without a gap, and an end the SDK reads without error.
func StreamResponse(t testing.TB, c oai.Client, params responses.ResponseNewParams) Streamed {
	t.Helper()
	stream := c.Responses.NewStreaming(context.Background(), params)
	var out Streamed
	var text strings.Builder
	for stream.Next() {
		ev := stream.Current()
		if int(ev.SequenceNumber) != len(out.Types) {
			t.Errorf("event %d (%s) has sequence_number %d", len(out.Types), ev.Type, ev.SequenceNumber)
		}
		out.Types = append(out.Types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed", "response.incomplete", "response.failed":
			out.Final = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v (events %v)", err, out.Types)
	}
	out.Text = text.String()
	return out
}

// ComparableResponse decodes a response object without what differs between two answers to
// one request (the response's and items' ids, its times), so a streamed response can be
// compared with a whole one.
func ComparableResponse(t testing.TB, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, raw)
	}
	delete(m, "id")
	delete(m, "created_at")
	delete(m, "completed_at")
	out, _ := m["output"].([]any)
	for _, it := range out {
		if item, ok := it.(map[string]any); ok {
			delete(item, "id")
		}
	}
	return m
}

package gatewaytest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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

// Recorded is one request an agent client made, as ../shared/captures/agent-clients records
// it.
type Recorded struct {
	File    string // the recording's file name
	Line    int
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// AgentRecordings reads the requests of the recordings matching glob (codex-*.jsonl) in
// ../shared/captures/agent-clients beside the module root; the test skips when the clone has
// none (the recordings are kept beside the repository, not in it) and fails when the glob
// matches nothing.
func AgentRecordings(t testing.TB, glob string) []Recorded {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	captures := filepath.Join(filepath.Dir(dir), "shared", "captures", "agent-clients")
	if _, err := os.Stat(captures); err != nil {
		t.Skip("../shared/captures/agent-clients is not beside the module: recorded client traffic is not replayed")
	}
	files, _ := filepath.Glob(filepath.Join(captures, glob))
	if len(files) == 0 {
		t.Fatalf("no recordings match %s in %s", glob, captures)
	}
	var out []Recorded
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var r Recorded
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			r.File, r.Line = filepath.Base(f), i+1
			out = append(out, r)
		}
	}
	return out
}

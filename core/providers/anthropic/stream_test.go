package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/internal/golden"
)

// collect reads a stream to its end and renders each delta as a JSON line, then the way it
// ended: "EOF" for a proper end, or the error's class and message.
func collect(t *testing.T, s llm.Stream) []byte {
	t.Helper()
	defer s.Close()
	var out bytes.Buffer
	var held *llm.Usage // usage on deltas the chat door does not show, which it still counts
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("the stream does not end")
		}
		d, err := s.Next()
		if err == io.EOF {
			out.WriteString("EOF\n")
			break
		}
		if err != nil {
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Next returned %T %v, not a *providers.Error", err, err)
			}
			out.WriteString("error " + string(pe.Class) + " code=" + pe.Code + ": " + pe.Message + "\n")
			break
		}
		if !d.Content() {
			t.Errorf("delta %d carries nothing: %+v", i, d)
		}
		if !openai.Visible(&d) {
			if d.Usage != nil {
				held = d.Usage
			}
			continue // reasoning: TestStreamThinking covers it
		}
		if d.Usage == nil {
			d.Usage, held = held, nil
		}
		b, _ := json.Marshal(chatView(&d))
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// chatDelta is a delta as the chat door sees it, in the field names the golden files were
// first written with, so they show the translation did not change.
type chatDelta struct {
	Content      string
	Refusal      string
	ToolCalls    []llm.ToolCallDelta
	FinishReason string
	Usage        *chatUsage
}

type chatUsage struct {
	PromptTokens        *int `json:"prompt_tokens,omitempty"`
	CompletionTokens    *int `json:"completion_tokens,omitempty"`
	TotalTokens         *int `json:"total_tokens,omitempty"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens,omitempty"`
	} `json:"prompt_tokens_details,omitempty"`
}

func chatView(d *llm.Delta) chatDelta {
	c := chatDelta{Content: d.Text, Refusal: d.Refusal, ToolCalls: d.ToolCalls}
	if d.Stop != "" {
		c.FinishReason = openai.FinishReason(d.Stop)
	}
	if u := d.Usage; u != nil {
		c.Usage = &chatUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
		if u.CacheReadTokens != nil {
			c.Usage.PromptTokensDetails = &struct {
				CachedTokens *int `json:"cached_tokens,omitempty"`
			}{u.CacheReadTokens}
		}
	}
	return c
}

// TestStreamGolden translates each recorded event stream in testdata/stream into deltas and
// compares them with the golden file.
func TestStreamGolden(t *testing.T) {
	for _, name := range golden.Cases(t, "stream", ".sse") {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "stream", name+".sse"))
			if err != nil {
				t.Fatal(err)
			}
			got := collect(t, NewStream(context.Background(), io.NopCloser(bytes.NewReader(raw)), "Anthropic", false))
			golden.CheckIndented(t, filepath.Join("testdata", "stream", name+".golden.txt"), got)
		})
	}
}

// TestStreamAnyChunking feeds every recorded stream in pieces of every size from 1 to 64
// bytes (Vertex AI's StreamRawPredict cuts the bytes anywhere) and expects the same deltas.
func TestStreamAnyChunking(t *testing.T) {
	for _, name := range golden.Cases(t, "stream", ".sse") {
		raw, err := os.ReadFile(filepath.Join("testdata", "stream", name+".sse"))
		if err != nil {
			t.Fatal(err)
		}
		want := collect(t, NewStream(context.Background(), io.NopCloser(bytes.NewReader(raw)), "Anthropic", false))
		for size := 1; size <= 64; size++ {
			r := &chunkReader{data: raw, size: size}
			got := collect(t, NewStream(context.Background(), io.NopCloser(r), "Anthropic", false))
			if !bytes.Equal(got, want) {
				t.Fatalf("%s in %d-byte chunks:\n%s\nwant\n%s", name, size, got, want)
			}
		}
		got := collect(t, NewStream(context.Background(), io.NopCloser(iotest.OneByteReader(bytes.NewReader(raw))), "Anthropic", false))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s one byte at a time differs", name)
		}
	}
}

type chunkReader struct {
	data []byte
	size int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.size)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestStreamToolCallsAssemble checks what a client does with the deltas: concatenating
// the argument fragments by index gives valid JSON with the escapes intact, and the dense
// indexes follow the tool_use blocks, not the content block numbering.
func TestStreamToolCallsAssemble(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "stream", "parallel_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStream(context.Background(), io.NopCloser(bytes.NewReader(raw)), "Anthropic", false)
	defer s.Close()
	args := map[int]*strings.Builder{}
	ids := map[int]string{}
	var text strings.Builder
	var last llm.Delta
	for {
		d, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(d.Text)
		for _, tc := range d.ToolCalls {
			if tc.ID != "" {
				ids[tc.Index] = tc.ID
				args[tc.Index] = &strings.Builder{}
			}
			args[tc.Index].WriteString(tc.Arguments)
		}
		last = d
	}
	if text.String() != "Okay, checking both." {
		t.Errorf("content %q", text.String())
	}
	if len(ids) != 2 || ids[0] != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" || ids[1] != "toolu_02" {
		t.Errorf("tool call ids by index: %v", ids)
	}
	var first struct{ City, Note string }
	if err := json.Unmarshal([]byte(args[0].String()), &first); err != nil {
		t.Fatalf("arguments of call 0 %q: %v", args[0], err)
	}
	if first.City != "Paris" || first.Note != `say "hi" é` {
		t.Errorf("arguments of call 0 decode to %+v", first)
	}
	if args[1].String() != `{"tz":"CET"}` {
		t.Errorf("arguments of call 1: %q", args[1])
	}
	if last.Stop != llm.StopToolUse || last.Usage == nil {
		t.Fatalf("last delta %+v", last)
	}
	u := last.Usage
	if *u.InputTokens != 472+10+1024 || *u.CacheReadTokens != 1024 || *u.OutputTokens != 89 {
		t.Errorf("usage %s", openai.AppendUsage(nil, u))
	}
}

// TestStreamUsage checks the usage arithmetic and merging rules on the delta stream.
func TestStreamUsage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "stream", "delta_repeats_input.sse"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStream(context.Background(), io.NopCloser(bytes.NewReader(raw)), "Anthropic", false)
	var merged llm.Usage
	var deltas []llm.Delta
	for {
		d, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		merged.Merge(d.Usage)
		deltas = append(deltas, d)
	}
	// The first visible delta already carries the prompt from message_start, so a stream
	// broken after it is still charged for its input.
	if u := deltas[0].Usage; u == nil || u.InputTokens == nil || *u.InputTokens != 9 || u.OutputTokens != nil {
		t.Errorf("first delta usage %+v, want the prompt only", u)
	}
	// message_delta repeats (and here corrects) the input and cache counts.
	if got := string(openai.AppendUsage(nil, &merged)); got != `{"prompt_tokens":512,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":500}}` {
		t.Errorf("merged usage %s", got)
	}
}

// TestStreamCancelledByGateway: when the gateway cancels the attempt (its idle timer), the
// read error is reported with that cause, a timeout, not as a broken stream.
func TestStreamCancelledByGateway(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancelCause(context.Background())
	s := NewStream(ctx, pr, "Anthropic", false)
	defer s.Close()
	go func() {
		_, _ = io.WriteString(pw, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n")
	}()
	if d, err := s.Next(); err != nil || d.Text != "Hi" {
		t.Fatalf("first delta %+v %v", d, err)
	}
	go func() {
		cancel(providers.ErrIdleTimeout)
		pw.CloseWithError(context.Canceled) // what the transport does when its context ends
	}()
	_, err := s.Next()
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Class != providers.Timeout || pe.Provider != "Anthropic" {
		t.Fatalf("got %v, want a timeout from Anthropic", err)
	}
	if _, again := s.Next(); again != err {
		t.Errorf("a second Next returned %v after the failure", again)
	}
}

// TestStreamErrorIsSticky: after an error event, Next keeps failing; it never reports a
// proper end.
func TestStreamErrorIsSticky(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "stream", "error_after_content.sse"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewStream(context.Background(), io.NopCloser(bytes.NewReader(raw)), "Anthropic", false)
	var first error
	for i := 0; i < 10; i++ {
		_, err := s.Next()
		if err == io.EOF {
			t.Fatal("io.EOF after an error event")
		}
		if err != nil && first == nil {
			first = err
		}
		if first != nil && err != first {
			t.Fatalf("error changed from %v to %v", first, err)
		}
	}
	var pe *providers.Error
	if !errors.As(first, &pe) || pe.Class != providers.Overloaded || !pe.Failover() {
		t.Errorf("error %v: want overloaded, which fails over", first)
	}
	if pe.ClientError().Status != 503 {
		t.Errorf("client status %d, want 503", pe.ClientError().Status)
	}
}

// TestFastDeltaMatchesDecoder: the hand-written reader of delta events agrees with the
// general JSON decoder on every delta event of the recorded streams and on awkward strings,
// and declines (leaving them to the decoder) whatever it does not fully recognise.
func TestFastDeltaMatchesDecoder(t *testing.T) {
	var events []string
	for _, name := range golden.Cases(t, "stream", ".sse") {
		raw, err := os.ReadFile(filepath.Join("testdata", "stream", name+".sse"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), "data: "); ok && strings.Contains(d, "content_block_delta") {
				events = append(events, d)
			}
		}
	}
	const text = `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":`
	for _, s := range []string{`"a\"}}"`, `"ends in a backslash \\"`, `"caf\u00e9 \ud83d\ude00"`, `"é✨ raw"`, `"line\nbreak\ttab"`, `"\/slash"`, `""`, "\"bad utf8 \xff\""} {
		events = append(events, text+s+`}}`)
	}
	declined := []string{
		text + `"a","extra":1}}`,
		text + `"unterminated}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
		`{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "spaced"}}`,
		`{"type":"content_block_delta","index":12345678,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}`,
	}
	fast := 0
	for _, ev := range append(events, declined...) {
		index, kind, got, ok := fastDelta([]byte(ev))
		var e wireEvent
		err := json.Unmarshal([]byte(ev), &e)
		// Anthropic's own spacing-free text and tool input deltas must take the fast path.
		canonical := err == nil && e.Delta != nil && (e.Delta.Type == "text_delta" || e.Delta.Type == "input_json_delta") &&
			strings.HasPrefix(ev, `{"type":"content_block_delta","index":`) && !slicesContains(declined, ev)
		if ok != canonical {
			t.Errorf("fast path ok=%v for %s", ok, ev)
			continue
		}
		if !ok {
			continue
		}
		fast++
		want := e.Delta.Text
		if e.Delta.Type == "input_json_delta" {
			want = e.Delta.PartialJSON
		}
		if index != e.Index || kind != e.Delta.Type || got != want {
			t.Errorf("%s: fast (%d %s %q), decoder (%d %s %q)", ev, index, kind, got, e.Index, e.Delta.Type, want)
		}
	}
	if fast < 20 {
		t.Errorf("only %d events took the fast path", fast)
	}
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

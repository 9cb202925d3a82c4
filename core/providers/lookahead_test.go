package providers

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

// words is a Stepper over SSE data: "skip" yields nothing, "end" ends the stream, anything
// else is a delta with that text.
type words struct{ sse *SSEReader }

func (w *words) Step() (llm.Delta, bool, error) {
	ev, err := w.sse.Next()
	switch {
	case err != nil:
		return llm.Delta{}, false, err
	case string(ev.Data) == "end":
		return llm.Delta{}, false, io.EOF
	case string(ev.Data) == "skip":
		return llm.Delta{}, false, nil
	}
	return llm.Delta{Text: string(ev.Data)}, true, nil
}

// Pending decodes buffered events until one yields a delta and holds it for Next; events
// that yield nothing are no reason to say more is in hand, and Pending never reads on.
func TestLookahead(t *testing.T) {
	for _, tc := range []struct {
		name, rest string
		pending    bool
		next       string // what Next returns after Pending: a text, "EOF", or "read on"
	}{
		{"nothing buffered", "", false, "read on"},
		{"a delta buffered", "data: b\n\n", true, "b"},
		{"events that yield nothing, then a delta", "data: skip\n\ndata: skip\n\ndata: b\n\n", true, "b"},
		{"events that yield nothing alone", "data: skip\n\ndata: skip\n\n", false, "read on"},
		{"events that yield nothing, then half a delta", "data: skip\n\ndata: b", false, "read on"},
		{"the end buffered", "data: skip\n\ndata: end\n\n", true, "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &words{sse: NewSSEReader(&once{b: []byte("data: a\n\n" + tc.rest)})}
			var l Lookahead
			if d, err := l.Next(w); err != nil || d.Text != "a" {
				t.Fatalf("first delta %+v, %v", d, err)
			}
			if got := l.Pending(w, w.sse); got != tc.pending {
				t.Errorf("Pending %v, want %v", got, tc.pending)
			}
			if again := l.Pending(w, w.sse); again != tc.pending {
				t.Errorf("Pending asked again: %v", again)
			}
			d, err := l.Next(w)
			var got string
			switch {
			case errors.Is(err, errWouldBlock):
				got = "read on"
			case err == io.EOF:
				got = "EOF"
			case err != nil:
				got = err.Error()
			default:
				got = d.Text
			}
			if got != tc.next {
				t.Errorf("Next after Pending: %q, want %q", got, tc.next)
			}
		})
	}
}

// Over a stream read in pieces of every size, the deltas are those of plain Next calls
// whatever Pending is asked between them.
func TestLookaheadKeepsTheDeltas(t *testing.T) {
	in := "data: a\n\ndata: skip\n\n: c\n\ndata: b\n\nevent: x\ndata: skip\n\ndata: c\n\ndata: end\n\n"
	for size := 1; size <= len(in); size++ {
		w := &words{sse: NewSSEReader(&chunked{s: in, size: size})}
		var l Lookahead
		var got []string
		for {
			l.Pending(w, w.sse)
			d, err := l.Next(w)
			if err != nil {
				if err != io.EOF {
					t.Fatalf("size %d: %v", size, err)
				}
				break
			}
			got = append(got, d.Text)
		}
		if strings.Join(got, " ") != "a b c" {
			t.Errorf("size %d: %v", size, got)
		}
	}
}

// chunked delivers s in reads of size bytes.
type chunked struct {
	s    string
	size int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.s)
	c.s = c.s[n:]
	return n, nil
}

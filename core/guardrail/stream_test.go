package guardrail_test

import (
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/llm"
)

// deltas is an upstream stream of fixed deltas.
type deltas struct {
	list   []llm.Delta
	err    error // returned after the list, instead of io.EOF
	closed bool
}

func (d *deltas) Next() (llm.Delta, error) {
	if len(d.list) == 0 {
		if d.err != nil {
			return llm.Delta{}, d.err
		}
		return llm.Delta{}, io.EOF
	}
	x := d.list[0]
	d.list = d.list[1:]
	return x, nil
}

func (d *deltas) Close() error { d.closed = true; return nil }

var email = regexp.MustCompile(`[a-z]+@[a-z]+\.[a-z]+`)

// emailMasker masks emails and blocks "FORBIDDEN"; it records what each call saw.
type emailMasker struct{ calls [][]string }

func (m *emailMasker) check(texts []string) ([]string, bool, error) {
	m.calls = append(m.calls, append([]string(nil), texts...))
	out := make([]string, len(texts))
	for i, t := range texts {
		if strings.Contains(t, "FORBIDDEN") {
			return nil, true, nil
		}
		out[i] = email.ReplaceAllString(t, "[EMAIL]")
	}
	return out, false, nil
}

func words(text string, size int) []llm.Delta {
	var out []llm.Delta
	for len(text) > 0 {
		n := min(size, len(text))
		out = append(out, llm.Delta{Text: text[:n]})
		text = text[n:]
	}
	return out
}

func drain(t *testing.T, s *guardrail.Stream) (text string, stop llm.StopReason, args map[int]string, err error) {
	t.Helper()
	var b strings.Builder
	args = map[int]string{}
	for range 10000 {
		d, err := s.Next()
		if err == io.EOF {
			return b.String(), stop, args, nil
		}
		if err != nil {
			return b.String(), stop, args, err
		}
		b.WriteString(d.Text)
		for _, tc := range d.ToolCalls {
			args[tc.Index] += tc.Arguments
		}
		if d.Stop != "" {
			stop = d.Stop
		}
	}
	t.Fatal("the stream never ended")
	return
}

func TestStreamWindows(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 40) // 480 characters
	for _, tc := range []struct {
		name      string
		in        []llm.Delta
		window    int
		overlap   int
		want      string
		wantStop  llm.StopReason
		minChecks int
	}{
		{"an email split across two windows is masked", append(words(long+"write to alice@example.com today", 7), llm.Delta{Stop: llm.StopEnd}),
			100, 40, long + "write to [EMAIL] today", llm.StopEnd, 5},
		{"a short answer is checked once, at the end", []llm.Delta{{Text: "hi bob@x.io"}, {Stop: llm.StopEnd}}, 100, 40, "hi [EMAIL]", llm.StopEnd, 1},
		{"a block withholds what was held and ends as a content filter", append(words(long+"FORBIDDEN words follow", 5), llm.Delta{Stop: llm.StopEnd}),
			100, 40, "", llm.StopContentFilter, 1},
		{"the stop and usage come after the last checked text", []llm.Delta{{Text: "a"}, {Stop: llm.StopEnd, Usage: &llm.Usage{}}, {Text: ""}}, 100, 40, "a", llm.StopEnd, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &emailMasker{}
			up := &deltas{list: tc.in}
			s := guardrail.NewStream(up, tc.window, tc.overlap, m.check)
			got, stop, _, err := drain(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantStop == llm.StopContentFilter {
				// What was released before the block stays; the blocked window does not.
				if strings.Contains(got, "FORBIDDEN") || !strings.HasPrefix(long, got) || !up.closed || !s.Blocked() || s.Withheld() == 0 {
					t.Fatalf("blocked stream sent %q (closed %v, blocked %v, withheld %d)", got, up.closed, s.Blocked(), s.Withheld())
				}
			} else if got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
			if stop != tc.wantStop || len(m.calls) < tc.minChecks {
				t.Fatalf("stop %q (want %q), %d checks (want >= %d)", stop, tc.wantStop, len(m.calls), tc.minChecks)
			}
			for _, c := range m.calls {
				for _, text := range c {
					if len(text) > tc.window+tc.overlap+7 {
						t.Fatalf("a window of %d characters was checked; the bound is window+one delta", len(text))
					}
				}
			}
		})
	}
}

// TestStreamHoldsAtMostOneWindow: the client is never more than a window behind the
// upstream.
func TestStreamHoldsAtMostOneWindow(t *testing.T) {
	m := &emailMasker{}
	up := &deltas{list: words(strings.Repeat("abcdefghij", 100), 10)}
	s := guardrail.NewStream(up, 200, 50, m.check)
	read := 0
	for {
		d, err := s.Next()
		if err == io.EOF {
			break
		}
		read += len(d.Text)
		sentByUpstream := 1000 - 10*len(up.list)
		if sentByUpstream-read > 200 {
			t.Fatalf("the client has %d characters while the upstream sent %d", read, sentByUpstream)
		}
	}
	if read != 1000 {
		t.Fatalf("read %d characters, want 1000", read)
	}
}

func TestStreamToolCallsAndChannels(t *testing.T) {
	m := &emailMasker{}
	up := &deltas{list: []llm.Delta{
		{Thinking: "think of carl@y.org"},
		{Text: "calling"},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "call_1", Name: "send"}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, Arguments: `{"to":"dan@`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, Arguments: `z.net"}`}}},
		{Stop: llm.StopToolUse},
	}}
	s := guardrail.NewStream(up, 1000, 100, m.check)
	var thinking string
	var ids []string
	var args string
	for {
		d, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		thinking += d.Thinking
		for _, tc := range d.ToolCalls {
			if tc.ID != "" {
				ids = append(ids, tc.ID)
			}
			args += tc.Arguments
		}
	}
	if thinking != "think of [EMAIL]" || args != `{"to":"[EMAIL]"}` || len(ids) != 1 {
		t.Fatalf("thinking %q, args %q, ids %v", thinking, args, ids)
	}
}

func TestStreamFailures(t *testing.T) {
	upErr := errors.New("upstream broke")
	s := guardrail.NewStream(&deltas{list: words("abc", 1), err: upErr}, 100, 10, (&emailMasker{}).check)
	if _, _, _, err := drain(t, s); err != upErr {
		t.Fatalf("err %v, want the upstream's", err)
	}
	guardErr := errors.New("guardrail down")
	s = guardrail.NewStream(&deltas{list: words("abc", 1)}, 100, 10, func([]string) ([]string, bool, error) { return nil, false, guardErr })
	got, _, _, err := drain(t, s)
	if err != guardErr || got != "" {
		t.Fatalf("sent %q, err %v: nothing unchecked may go out", got, err)
	}
}

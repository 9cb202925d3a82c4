package guardrail_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fngate/fngate/core/guardrail"
	"github.com/fngate/fngate/core/llm"
)

// deltas is an upstream stream of fixed deltas.
type deltas struct {
	list   []llm.Delta
	err    error // returned after the list, instead of io.EOF
	closed atomic.Bool
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

func (d *deltas) Close() error { d.closed.Store(true); return nil }

// closedSoon waits for the upstream's Close, which a read-ahead makes as its goroutine ends.
func (d *deltas) closedSoon() bool {
	for range 200 {
		if d.closed.Load() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// readAheads are the ways a stream is read in the tests: in the caller's goroutine, and
// ahead of it, holding at most that many characters.
var readAheads = []int{0, 150}

func newStream(up llm.Stream, window, overlap, ahead int, check guardrail.CheckFunc) *guardrail.Stream {
	s := guardrail.NewStream(up, window, overlap, check)
	if ahead > 0 {
		s.ReadAhead(ahead)
	}
	return s
}

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
		for _, ahead := range readAheads {
			t.Run(fmt.Sprintf("%s/read-ahead %d", tc.name, ahead), func(t *testing.T) {
				m := &emailMasker{}
				up := &deltas{list: tc.in}
				s := newStream(up, tc.window, tc.overlap, ahead, m.check)
				got, stop, _, err := drain(t, s)
				if err != nil {
					t.Fatal(err)
				}
				if tc.wantStop == llm.StopContentFilter {
					// What was released before the block stays; the blocked window does not.
					if strings.Contains(got, "FORBIDDEN") || !strings.HasPrefix(long, got) || !up.closedSoon() || !s.Blocked() || s.Withheld() == 0 {
						t.Fatalf("blocked stream sent %q (closed %v, blocked %v, withheld %d)", got, up.closed.Load(), s.Blocked(), s.Withheld())
					}
				} else if got != tc.want {
					t.Fatalf("got %q\nwant %q", got, tc.want)
				}
				if ahead > 0 {
					tc.minChecks = 1 // what came during a check joins the next
				}
				if stop != tc.wantStop || len(m.calls) < tc.minChecks {
					t.Fatalf("stop %q (want %q), %d checks (want >= %d)", stop, tc.wantStop, len(m.calls), tc.minChecks)
				}
				for _, c := range m.calls {
					for _, text := range c {
						if len(text) > tc.window+tc.overlap+len("alice@example.com")+ahead+7 {
							t.Fatalf("a window of %d characters was checked; the bound is window+overlap+an entity+read-ahead+one delta", len(text))
						}
					}
				}
			})
		}
	}
}

// TestStreamEntityCutByTheWindow: a window that ends inside an entity ("alice@example.c")
// is masked there by the guardrail; the cut moves back to where the mask starts, so the
// entity is checked again whole and its remainder never goes out in the clear. An API key
// leaked its tail this way.
func TestStreamEntityCutByTheWindow(t *testing.T) {
	key := regexp.MustCompile(`sk-[A-Za-z0-9]+`)
	keyMasker := func(texts []string) ([]string, bool, error) {
		out := make([]string, len(texts))
		for i, t := range texts {
			out[i] = key.ReplaceAllString(t, "[API_KEY]")
		}
		return out, false, nil
	}
	for _, tc := range []struct {
		name  string
		first string
		rest  string
		check guardrail.CheckFunc
		want  string
	}{
		{"email", "please write to alice@example.c", "om today", (&emailMasker{}).check, "please write to [EMAIL] today"},
		{"api key", "the key is sk-abcdefgh", "ijklmnop, keep it", keyMasker, "the key is [API_KEY], keep it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := &deltas{list: []llm.Delta{{Text: tc.first}, {Text: tc.rest}, {Stop: llm.StopEnd}}}
			got, _, _, err := drain(t, guardrail.NewStream(up, len(tc.first), 10, tc.check))
			if err != nil || got != tc.want {
				t.Fatalf("got %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// TestStreamMasksAsTheWholeText: however the upstream splits its text and whatever the
// window, read-ahead and timing, the client gets what masking the whole answer gives, for
// entities shorter than the overlap.
func TestStreamMasksAsTheWholeText(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	names := []string{"alice", "bob", "carol", "dave"}
	for i := range 400 {
		var b strings.Builder
		for b.Len() < 600 {
			if r.IntN(4) == 0 {
				fmt.Fprintf(&b, "%s@%s.com ", names[r.IntN(4)], names[r.IntN(4)])
			} else {
				b.WriteString([]string{"lorem ", "ipsum ", "dolor ", "sit ", "amet, ", "\n"}[r.IntN(6)])
			}
		}
		whole := b.String()
		want := email.ReplaceAllString(whole, "[EMAIL]")
		window, overlap := 30+r.IntN(90), 20+r.IntN(10)
		ahead := []int{0, 0, 50, 400}[r.IntN(4)]
		up := &deltas{list: append(words(whole, 1+r.IntN(12)), llm.Delta{Stop: llm.StopEnd})}
		got, _, _, err := drain(t, newStream(up, window, overlap, ahead, (&emailMasker{}).check))
		if err != nil || got != want {
			t.Fatalf("case %d (window %d, overlap %d, read-ahead %d): %v\ngot  %q\nwant %q", i, window, overlap, ahead, err, got, want)
		}
	}
}

// stallingUpstream is deltas, then a wait until the attempt ends (cancel), as an upstream
// that has nothing more to say yet; it counts its closes, and fails a Next made after one.
type stallingUpstream struct {
	deltas
	stall     chan struct{}
	closes    atomic.Int32
	afterDone atomic.Bool
}

func (u *stallingUpstream) Next() (llm.Delta, error) {
	if u.closes.Load() > 0 {
		u.afterDone.Store(true)
	}
	if len(u.list) == 0 {
		<-u.stall
		return llm.Delta{}, errors.New("context canceled")
	}
	return u.deltas.Next()
}

func (u *stallingUpstream) cancel() { close(u.stall) }

func (u *stallingUpstream) Close() error {
	u.closes.Add(1)
	return u.deltas.Close()
}

// TestStreamReadAheadChecksOncePerRoundTrip: an upstream faster than the guardrail is read
// while a window is checked, so what came meanwhile is one check, not one per window; the
// client gets the same checked text.
func TestStreamReadAheadChecksOncePerRoundTrip(t *testing.T) {
	text := strings.Repeat("abcdefghij", 150) + " mail eve@example.com"
	checks := map[int]int{}
	for _, ahead := range []int{0, 4000} {
		m := &emailMasker{}
		slow := func(texts []string) ([]string, bool, error) {
			time.Sleep(20 * time.Millisecond)
			return m.check(texts)
		}
		up := &deltas{list: append(words(text, 10), llm.Delta{Stop: llm.StopEnd})}
		got, stop, _, err := drain(t, newStream(up, 200, 50, ahead, slow))
		if err != nil || stop != llm.StopEnd || got != strings.Repeat("abcdefghij", 150)+" mail [EMAIL]" {
			t.Fatalf("read-ahead %d: %q %q %v", ahead, got, stop, err)
		}
		checks[ahead] = len(m.calls)
	}
	t.Logf("checks without read-ahead %d, with %d", checks[0], checks[4000])
	if checks[4000]*2 > checks[0] {
		t.Errorf("checks without read-ahead %d, with %d: the read-ahead did not join what came during a check", checks[0], checks[4000])
	}
}

// TestStreamReadAheadCloses: a blocked stream's upstream is closed once, and never while
// the read-ahead is in its Next: a reader waiting on the upstream closes it as the attempt's
// end releases it. An upstream that fails ends the stream with its error.
func TestStreamReadAheadCloses(t *testing.T) {
	up := &stallingUpstream{deltas: deltas{list: words("FORBIDDEN "+strings.Repeat("x", 300), 10)}, stall: make(chan struct{})}
	s := newStream(up, 100, 20, 1000, (&emailMasker{}).check)
	_, stop, _, err := drain(t, s)
	if err != nil || stop != llm.StopContentFilter {
		t.Fatalf("stop %q err %v", stop, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if up.closes.Load() != 0 {
		t.Fatal("the upstream was closed while the read-ahead waited in its Next")
	}
	up.cancel()
	if !up.closedSoon() || up.closes.Load() != 1 || up.afterDone.Load() {
		t.Fatalf("upstream closed %v, %d times, read after its close %v", up.closed.Load(), up.closes.Load(), up.afterDone.Load())
	}
	upErr := errors.New("upstream broke")
	s = newStream(&deltas{list: words("abc", 1), err: upErr}, 100, 10, 1000, (&emailMasker{}).check)
	if _, _, _, err := drain(t, s); err != upErr {
		t.Fatalf("err %v, want the upstream's", err)
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

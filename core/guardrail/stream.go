package guardrail

import (
	"io"
	"unicode/utf8"

	"github.com/fngate/fngate/core/llm"
)

// CheckFunc checks the texts of one window (each a run of one kind of output: text,
// reasoning, a refusal, one tool call's arguments) and returns them as they may go on,
// whether they are blocked, or the failure that must end the stream.
type CheckFunc func(texts []string) (out []string, blocked bool, err error)

// Stream checks a streamed answer before its deltas go on. Deltas are held until a window
// of characters has come (or the stream ends), then the window is checked and released, but
// for its last overlap characters: those are held as the upstream sent them and checked again
// with the next window, so what is split across two windows (an email, a card number shorter
// than the overlap) is seen whole before any of it is sent; where the guardrail changed text
// across that cut, the cut moves back to the change's start (alignCut). The client is held back by at most one window. A
// block ends the stream there, as a content filter does (llm.StopContentFilter); what was
// released stays with the client, what was held is withheld.
//
// Deltas come out with their text possibly regrouped (a masked window goes out as one
// delta) and never with the upstream's raw events (llm.Delta.Raw): the client's door encodes
// what was checked, not what the upstream sent.
type Stream struct {
	up      llm.Stream
	check   CheckFunc
	window  int
	overlap int
	// OnUpstream is called once, when the upstream yields its first delta: the stream's own
	// holding back must not read as an upstream slow to start.
	OnUpstream func()

	held      []piece
	heldChars int
	ready     []llm.Delta
	usage     llm.Usage // the usage of held deltas, for a block's end
	started   bool
	done      bool
	err       error
	withheld  int // characters the client was never sent (a blocked window)
	blocked   bool

	aheadLimit int
	ahead      *readAhead
	batch      []llm.Delta
}

// piece is what one delta contributes: text of one kind (channel), or a marker carrying the
// delta's other fields (a tool call's start, a signature, the stop, usage).
type piece struct {
	ch     int // chText, chThinking, chRefusal, or chArgs+index
	text   string
	marker *llm.Delta
}

const (
	chText = iota
	chThinking
	chRefusal
	chArgs
)

// NewStream checks up in windows of window characters, holding overlap of each back.
func NewStream(up llm.Stream, window, overlap int, check CheckFunc) *Stream {
	return &Stream{up: up, check: check, window: window, overlap: overlap}
}

// ReadAhead makes the stream read its upstream while a window is checked, holding at most
// limit characters (readAhead): for a guardrail with a round trip. Call it before Next.
func (s *Stream) ReadAhead(limit int) { s.aheadLimit = limit }

// Next returns the next checked delta.
func (s *Stream) Next() (llm.Delta, error) {
	for len(s.ready) == 0 {
		if s.done {
			if s.err != nil {
				return llm.Delta{}, s.err
			}
			return llm.Delta{}, io.EOF
		}
		if s.aheadLimit > 0 {
			s.nextBatch()
			continue
		}
		d, err := s.up.Next()
		s.upstreamStarted()
		if err != nil {
			s.end(err)
			continue
		}
		s.add(&d)
		if s.heldChars >= s.window {
			s.release(false)
		}
	}
	d := s.ready[0]
	s.ready = s.ready[1:]
	return d, nil
}

// nextBatch takes what the read-ahead has brought since the last batch, all of it one
// window's part.
func (s *Stream) nextBatch() {
	if s.ahead == nil {
		s.ahead = newReadAhead(s.up, s.aheadLimit)
	}
	var err error
	s.batch, err = s.ahead.take(s.batch[:0])
	s.upstreamStarted()
	for i := range s.batch {
		s.add(&s.batch[i])
	}
	clear(s.batch)
	if err != nil {
		s.end(err)
		return
	}
	if s.heldChars >= s.window {
		s.release(false)
	}
}

func (s *Stream) upstreamStarted() {
	if !s.started {
		s.started = true
		if s.OnUpstream != nil {
			s.OnUpstream()
		}
	}
}

// end ends the stream at the upstream's end (io.EOF: what is held is checked and released)
// or failure (what is held was never checked: it is dropped with the stream).
func (s *Stream) end(err error) {
	if err == io.EOF {
		s.release(true)
		s.done = true
		return
	}
	s.done, s.err, s.held = true, err, nil
}

// Pending reports whether a checked delta is in hand: a read may wait on the upstream and
// on a guardrail.
func (s *Stream) Pending() bool { return len(s.ready) > 0 || s.done }

// Close closes the upstream.
func (s *Stream) Close() error {
	if s.ahead != nil {
		return s.ahead.Close()
	}
	return s.up.Close()
}

// ResponseModel passes the upstream's on.
func (s *Stream) ResponseModel() string {
	if mr, ok := s.up.(llm.ModelReporter); ok {
		return mr.ResponseModel()
	}
	return ""
}

// Blocked reports whether a guardrail ended the stream; Withheld is how many characters the
// upstream sent that the client was not (for the estimate of an answer's output tokens).
func (s *Stream) Blocked() bool { return s.blocked }
func (s *Stream) Withheld() int { return s.withheld }

func (s *Stream) add(d *llm.Delta) {
	s.usage.Merge(d.Usage)
	text := func(ch int, t string) {
		if t != "" {
			s.held = append(s.held, piece{ch: ch, text: t})
			s.heldChars += len(t)
		}
	}
	mark := func(m llm.Delta) { s.held = append(s.held, piece{ch: -1, marker: &m}) }
	text(chThinking, d.Thinking)
	if d.Signature != "" || d.RedactedThinking != "" {
		mark(llm.Delta{Signature: d.Signature, RedactedThinking: d.RedactedThinking})
	}
	text(chText, d.Text)
	text(chRefusal, d.Refusal)
	for _, tc := range d.ToolCalls {
		if tc.ID != "" || tc.Name != "" {
			mark(llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: tc.Index, ID: tc.ID, Name: tc.Name}}})
		}
		text(chArgs+tc.Index, tc.Arguments)
	}
	if d.Stop != "" || d.Usage != nil {
		mark(llm.Delta{Stop: d.Stop, StopSequence: d.StopSequence, Usage: d.Usage})
	}
}

// run is a stretch of held pieces of one channel, [from, to).
type run struct{ from, to int }

// release checks what is held and moves it to ready: all of it at the end, else all but the
// overlap of the last run when the stream may still add to it.
func (s *Stream) release(final bool) {
	var runs []run
	for i := 0; i < len(s.held); {
		if s.held[i].marker != nil {
			i++
			continue
		}
		j := i + 1
		for j < len(s.held) && s.held[j].marker == nil && s.held[j].ch == s.held[i].ch {
			j++
		}
		runs = append(runs, run{i, j})
		i = j
	}
	if len(runs) == 0 {
		s.flush(len(s.held), piece{})
		return
	}
	texts := make([]string, len(runs))
	for k, r := range runs {
		texts[k] = s.joined(r)
	}
	out, blocked, err := s.check(texts)
	switch {
	case err != nil:
		s.done, s.err, s.held = true, err, nil
		return
	case blocked:
		s.withheld += s.heldChars
		s.blocked, s.done, s.held = true, true, nil
		end := llm.Delta{Stop: llm.StopContentFilter}
		if s.usage.Reported() {
			u := s.usage
			end.Usage = &u
		}
		s.ready = append(s.ready, end)
		s.Close()
		return
	}
	// While the stream goes on, the last run's overlap is held as the upstream sent it, to be
	// checked again with what follows (alignCut).
	var tail piece
	if last := runs[len(runs)-1]; !final && last.to == len(s.held) {
		k := len(runs) - 1
		want := max(0, len(texts[k])-s.overlap)
		for want > 0 && !utf8.RuneStart(texts[k][want]) {
			want--
		}
		cut, outCut := alignCut(texts[k], out[k], want)
		tail = piece{ch: s.held[last.from].ch, text: texts[k][cut:]}
		out[k] = out[k][:outCut]
	}
	// Each run becomes one piece of its text as it may go on.
	rebuilt := make([]piece, 0, len(s.held))
	next := 0
	for k, r := range runs {
		rebuilt = append(rebuilt, s.held[next:r.from]...)
		rebuilt = append(rebuilt, piece{ch: s.held[r.from].ch, text: out[k]})
		next = r.to
	}
	rebuilt = append(rebuilt, s.held[next:]...)
	s.held = rebuilt
	s.flush(len(s.held), tail)
}

// flush moves the first n held pieces to ready as deltas, and keeps what remains, with tail
// (the overlap of the last run, when it has text) before it.
func (s *Stream) flush(n int, tail piece) {
	for _, p := range s.held[:n] {
		if d, ok := p.delta(); ok {
			s.ready = append(s.ready, d)
		}
	}
	rest := append([]piece(nil), s.held[n:]...)
	s.held, s.heldChars, s.usage = nil, 0, llm.Usage{}
	if tail.text != "" {
		s.held = append(s.held, tail)
		s.heldChars = len(tail.text)
	}
	for _, p := range rest {
		s.held = append(s.held, p)
		s.heldChars += len(p.text)
		if p.marker != nil {
			s.usage.Merge(p.marker.Usage)
		}
	}
}

func (s *Stream) joined(r run) string {
	if r.to-r.from == 1 {
		return s.held[r.from].text
	}
	n := 0
	for _, p := range s.held[r.from:r.to] {
		n += len(p.text)
	}
	b := make([]byte, 0, n)
	for _, p := range s.held[r.from:r.to] {
		b = append(b, p.text...)
	}
	return string(b)
}

func (p *piece) delta() (llm.Delta, bool) {
	switch {
	case p.marker != nil:
		return *p.marker, true
	case p.text == "":
		return llm.Delta{}, false
	case p.ch == chText:
		return llm.Delta{Text: p.text}, true
	case p.ch == chThinking:
		return llm.Delta{Thinking: p.text}, true
	case p.ch == chRefusal:
		return llm.Delta{Refusal: p.text}, true
	}
	return llm.Delta{ToolCalls: []llm.ToolCallDelta{{Index: p.ch - chArgs, Arguments: p.text}}}, true
}

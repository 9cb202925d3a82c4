package gateway

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/record"
)

// errNoContent is a stream that ended properly but said nothing at all.
var errNoContent = &providers.Error{Class: providers.StreamBroken, Message: "the stream ended before any content"}

// stream serves a streaming request. Each attempt is read until its first delta the door's
// client sees (preambles, pings and usage-only events are held back by the door's encoder);
// until then a failure moves to the next route and the client has seen nothing, and the
// failed attempt's encoder, with whatever it held, is dropped. That first delta commits the
// stream: the 200 and the SSE headers go out, and from then on a failure ends the stream with
// the door's error event and no proper end.
func (q *request) stream(routes []*route) {
	d := q.wire.(door)
	q.failover(routes, false, func(a *attempt) *providers.Error {
		s := &streaming{attempt: a, enc: d.encoder(&q.rc)}
		a.usage = &s.usage
		st, err := a.rt.provider.Stream(a.ctx, q.req, a.rt.target)
		if err == nil {
			st = q.recordStream(q.guardStream(a, st))
			err = q.firstVisible(s, st)
		}
		waited := a.arrived()
		q.rc.upstream += waited
		if gf, ok := err.(*guardFailure); ok {
			st.Close()
			a.rec.Latency = waited
			a.finishError(gf.oe)
			q.fail(a.rt, gf.oe)
			return nil
		}
		if err == nil {
			a.rec.TTFT = waited
			q.rc.ttft = time.Since(q.rc.start)
			s.st = st
			q.committed(s)
			return nil
		}
		if st != nil {
			st.Close()
		}
		a.rec.Latency = waited
		return a.failure(err)
	})
}

// firstVisible reads st until the first delta the door's client sees, which becomes s.first;
// the deltas before it (preambles, pings, usage) are held by the encoder.
func (q *request) firstVisible(s *streaming, st llm.Stream) error {
	d := q.wire.(door)
	for {
		dl, err := st.Next()
		if err == io.EOF {
			return errNoContent
		}
		if err != nil {
			return err
		}
		s.usage.Merge(dl.Usage)
		if d.visible(&dl) {
			s.first = dl
			return nil
		}
		s.enc.hold(&dl)
	}
}

// streaming is a streamed attempt once it has its first visible delta: the door's encoder of
// its events, the upstream stream, and the usage reported so far.
type streaming struct {
	*attempt
	enc   encoder
	st    llm.Stream
	first llm.Delta
	usage llm.Usage
	// next is the delta relay has in hand after the first.
	next llm.Delta
	// calls renumbers the stream's tool calls and holds back those without a name yet.
	calls toolCalls
	// guardFailed is the client's error when an output guardrail failed closed mid-stream.
	guardFailed *llm.Error
}

// committed sends the stream of a committed attempt to its end.
//
// It is cut in three (commit, relay, endStream) to keep the stack small: the goroutine holds
// its stack for the whole stream, and the first flush, deep in net/http (chunkWriter.writeHeader
// alone takes 2.8 KB), is the deepest the stream goes. With one function here, with its
// deltas and timers in one frame, that flush took the goroutine past 8 KB, and it held 16 KB
// for the rest of the stream: 8 MB more for 1,000 open streams.
func (q *request) committed(s *streaming) {
	defer s.st.Close()
	a := s.attempt
	committed := time.Now()
	sw, werr := q.commit(s)
	var failed *providers.Error
	if werr == nil {
		werr, failed = q.relay(s, sw)
	}
	a.rec.Latency = a.rec.TTFT + time.Since(committed)
	a.streamed(s.st)
	q.endStream(s, sw, werr, failed)
}

// commit sets the stream's headers and writes (without flushing) the first delta's events.
func (q *request) commit(s *streaming) (*sseWriter, error) {
	a, w := s.attempt, &q.w
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	q.g.setRouteHeaders(w, &q.rc, a.rt)
	w.events = s.enc
	w.WriteHeader(http.StatusOK)

	sw := newSSEWriter(w, a.deadline.Add(lastEventsGrace))
	s.calls.delta(&s.first)
	a.sent(&s.first)
	a.outChars += outputChars(&s.first)
	sw.buf = s.enc.start(sw.buf[:0], &s.first)
	return sw, sw.write(s.enc.delta(sw.buf, &s.first))
}

// relay writes the stream's deltas until its end, the client's write failing, or the
// upstream's failure.
func (q *request) relay(s *streaming, sw *sseWriter) (werr error, failed *providers.Error) {
	a, d, dl := s.attempt, q.wire.(door), &s.next
	pending, _ := s.st.(llm.Pending)
	idleAfter := q.m.timeouts.Idle.D()
	idle := time.AfterFunc(idleAfter, func() { a.cancel(providers.ErrIdleTimeout) })
	idle.Stop()
	defer idle.Stop()

	for {
		var err error
		if pending != nil && pending.Pending() {
			// The next delta is in hand: Next does not wait, so neither the flush nor the
			// clocks are needed.
			err = s.read()
		} else {
			// Next may wait on the upstream: what the client was sent leaves first. The idle
			// clock runs only while waiting on the upstream, so a slow client is never blamed
			// on the provider.
			if werr = sw.flush(); werr != nil {
				return werr, nil
			}
			idle.Reset(idleAfter)
			tn := time.Now()
			err = s.read()
			q.rc.upstream += time.Since(tn)
			idle.Stop()
		}
		if err == io.EOF {
			return releaseHeld(s, sw), nil
		}
		if gf, ok := err.(*guardFailure); ok {
			s.guardFailed = gf.oe
			return nil, nil
		}
		if err != nil {
			return nil, a.failure(err)
		}
		s.usage.Merge(dl.Usage)
		if d.visible(dl) || dl.Raw != nil {
			s.calls.delta(dl)
			a.sent(dl)
			a.outChars += outputChars(dl)
			if werr = sw.write(s.enc.delta(sw.buf[:0], dl)); werr != nil {
				return werr, nil
			}
		}
	}
}

// read reads the stream's next delta into s.next. It is not inlined so that the copies of the
// delta that Next returns are in its frame, not in relay's, which is on the stack at every
// flush (see committed).
//
//go:noinline
func (s *streaming) read() (err error) {
	s.next, err = s.st.Next()
	return err
}

// releaseHeld writes the tool calls still held for their names at the stream's end: an
// upstream that ends without a stop (OpenRouter's Novita at a tool call) still gets them out.
func releaseHeld(s *streaming, sw *sseWriter) error {
	rest := s.calls.release(nil)
	if len(rest) == 0 {
		return nil
	}
	dl := llm.Delta{ToolCalls: rest}
	return sw.write(s.enc.delta(sw.buf[:0], &dl))
}

// endStream ends a committed stream: the door's proper end when the upstream's came, its
// error event when the upstream failed or the time limit came, nothing more for a client that
// left; then the attempt and the request.
func (q *request) endStream(s *streaming, sw *sseWriter, werr error, failed *providers.Error) {
	a, rt := s.attempt, s.rt
	a.outChars += q.withheld()
	a.charge()
	switch {
	case q.timeUp():
		_ = sw.send(s.enc.fail(sw.buf[:0], errFunctionTimeout))
		a.finishError(errFunctionTimeout)
		q.done(http.StatusOK, rt.id, errFunctionTimeout)
	case werr != nil || q.clientGone():
		a.clientLeft()
	case s.guardFailed != nil:
		oe := s.guardFailed
		_ = sw.send(s.enc.fail(sw.buf[:0], oe))
		a.finishError(oe)
		q.done(http.StatusOK, rt.id, oe)
	case failed != nil:
		oe := failed.ClientError()
		_ = sw.send(s.enc.fail(sw.buf[:0], oe))
		a.finish(record.OutcomeError, failed)
		q.done(http.StatusOK, rt.id, oe)
	default:
		outcome := record.OutcomeOK
		if sw.send(s.enc.end(sw.buf[:0], &s.usage)) != nil {
			outcome = record.OutcomeClientClosed
		}
		a.finish(outcome, nil)
		q.done(http.StatusOK, rt.id, nil)
		if outcome == record.OutcomeOK {
			q.cacheStream(s.st)
		}
	}
}

// lastEventsGrace is how long past its total a stream's writes may take: enough to send what
// was in hand when total came and the event that ends the stream, so a client learns that
// total (or a guardrail's check that ran up to it) ended its stream rather than seeing the
// connection cut. An output guardrail can hold a whole short answer until total, and with
// on_error: open that answer is sent after it.
const lastEventsGrace = time.Second

// sseWriter writes and flushes events: neither the gateway nor the platform holds tokens
// back. Writes are flushed before the gateway waits on the upstream (see committed), so a
// burst of events the upstream had in hand costs one flush, not one per event.
//
// Its writes carry the attempt's total deadline, plus lastEventsGrace, where the platform's
// writer takes one (net/http's does; the deadline is absolute, so once covers every write,
// and net/http clears it after the request). A client that stops reading fills its TCP
// window and blocks the write; only a deadline returns it, so the attempt ends at total on
// the client's side as on the upstream's (give or take the grace), and its slot is freed. Lambda's writer takes none; there the function
// timeout ends the invocation.
type sseWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	buf   []byte
	dirty bool // written since the last flush
}

func newSSEWriter(w http.ResponseWriter, deadline time.Time) *sseWriter {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(deadline) // http.ErrNotSupported: see above
	return &sseWriter{w: w, rc: rc, buf: make([]byte, 0, 512)}
}

// write writes b (the events of one delta) without flushing it.
func (s *sseWriter) write(b []byte) error {
	s.buf = b
	if len(b) == 0 {
		return nil
	}
	s.dirty = true
	_, err := s.w.Write(b)
	return err
}

// flush sends what was written since the last flush.
func (s *sseWriter) flush() error {
	if !s.dirty {
		return nil
	}
	s.dirty = false
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// send writes b and flushes: the last events of a stream.
func (s *sseWriter) send(b []byte) error {
	if err := s.write(b); err != nil {
		return err
	}
	return s.flush()
}

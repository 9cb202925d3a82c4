package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/fngate/fngate/core/openai"
	"github.com/fngate/fngate/core/providers"
)

// errNoContent is a stream that ended properly but said nothing at all.
var errNoContent = &providers.Error{Class: providers.StreamBroken, Message: "the stream ended before any content"}

// runStream serves a streaming request. Each attempt is read until its first visible delta
// (role preambles, pings and usage-only events are held back); until then a failure moves to
// the next route and the client has seen nothing. The first visible delta commits the stream:
// the 200 and the SSE headers go out, and from then on a failure ends the stream with an
// error event and no [DONE].
func (g *Gateway) runStream(w *trackingWriter, r *http.Request, rc *requestCtx, m *model, c call, routes []*route) {
	for i, rt := range routes {
		rc.attempts++
		a := g.newAttempt(rc, rt, i)
		// first_byte runs until the first visible delta, not just the response headers: a
		// stream's headers say nothing about whether content will follow.
		ctx, clock := startAttempt(r.Context(), m.timeouts)

		t0 := time.Now()
		var usage openai.Usage
		var first openai.Delta
		st, err := c.open(ctx, rt)
		for err == nil {
			var d openai.Delta
			if d, err = st.Next(); err != nil {
				if err == io.EOF {
					err = errNoContent
				}
				break
			}
			usage.Merge(d.Usage)
			if d.Visible() {
				first = d
				break
			}
		}
		clock.began()
		waited := time.Since(t0)
		rc.upstream += waited

		if err == nil {
			a.TTFT = waited
			g.streamCommitted(ctx, clock, w, r, rc, m, c, rt, a, st, &first, &usage)
			return
		}

		if st != nil {
			st.Close()
		}
		pe := g.upstreamError(ctx, err, rt)
		clock.stop()
		a.Latency = waited
		a.setUsage(&usage, m.cfg.Price, rc)
		if !g.failedBeforeOutput(w, r, rc, rt, a, pe, i+1 < len(routes)) {
			return
		}
	}
}

// streamCommitted sends the stream of a committed attempt to its end.
func (g *Gateway) streamCommitted(ctx context.Context, clock *attemptClock,
	w *trackingWriter, r *http.Request, rc *requestCtx, m *model, c call, rt *route, a *AttemptRecord,
	st providers.Stream, first *openai.Delta, usage *openai.Usage) {
	defer clock.stop()
	defer st.Close()
	committed := time.Now()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	g.setRouteHeaders(w, rc, rt)
	w.sse = true
	w.WriteHeader(http.StatusOK)

	sw := newSSEWriter(w, c.chunkEncoder(c.idPrefix()+randomID(24), g.now().Unix(), rc.model), clock.deadline)
	pending, _ := st.(providers.Pending)
	werr := sw.delta(first, true, pending)

	idleAfter := m.timeouts.Idle.D()
	idle := time.AfterFunc(idleAfter, func() { clock.cancel(providers.ErrIdleTimeout) })
	idle.Stop()
	defer idle.Stop()

	var failed *providers.Error
	for werr == nil {
		// The idle clock runs only while waiting on the upstream, so a slow client is never
		// blamed on the provider.
		idle.Reset(idleAfter)
		tn := time.Now()
		d, err := st.Next()
		rc.upstream += time.Since(tn)
		idle.Stop()
		if err == io.EOF {
			break
		}
		if err != nil {
			failed = g.upstreamError(ctx, err, rt)
			break
		}
		usage.Merge(d.Usage)
		if d.Visible() {
			werr = sw.delta(&d, false, pending)
		}
	}
	a.Latency = a.TTFT + time.Since(committed)
	a.setUsage(usage, m.cfg.Price, rc)

	switch {
	case werr != nil || clientGone(r.Context()):
		a.Outcome = OutcomeClientClosed
		g.logAttempt(a)
		g.logRequest(rc, statusClientClosed, rt.id, nil)
	case failed != nil:
		oe := failed.ClientError()
		sw.fail(oe)
		a.setError(failed)
		a.Outcome = OutcomeError
		g.logAttempt(a)
		g.logRequest(rc, http.StatusOK, rt.id, oe)
	default:
		werr = sw.finish()
		if werr == nil && c.includeUsage() && usage.Reported() {
			werr = sw.usage(usage.WithTotal())
		}
		if werr == nil {
			werr = sw.done()
		}
		a.Outcome = OutcomeOK
		if werr != nil {
			a.Outcome = OutcomeClientClosed
		}
		g.logAttempt(a)
		g.logRequest(rc, http.StatusOK, rt.id, nil)
	}
}

// sseWriter writes and flushes one event at a time: neither the gateway nor the platform
// holds tokens back.
//
// Its writes carry the attempt's total deadline where the platform's writer takes one
// (net/http's does; the deadline is absolute, so once covers every write, and net/http clears
// it after the request). A client that stops reading fills its TCP window and blocks the
// write; only a deadline returns it, so the attempt ends at total on the client's side as on
// the upstream's, and its slot is freed. Lambda's writer takes none; there the function
// timeout ends the invocation.
type sseWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	enc      *openai.ChunkEncoder
	calls    toolCalls
	finished bool // a finish reason went out
	buf      []byte
}

func newSSEWriter(w http.ResponseWriter, enc *openai.ChunkEncoder, deadline time.Time) *sseWriter {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(deadline) // http.ErrNotSupported: see above
	return &sseWriter{w: w, rc: rc, enc: enc, buf: make([]byte, 0, 512)}
}

// delta writes one chunk; it flushes unless the upstream already has the next event in hand.
func (s *sseWriter) delta(d *openai.Delta, first bool, p providers.Pending) error {
	s.calls.delta(d)
	s.finished = s.finished || d.FinishReason != ""
	s.buf = s.enc.AppendDelta(s.buf[:0], d, first)
	if p != nil && p.Pending() {
		_, err := s.w.Write(s.buf)
		return err
	}
	return s.send()
}

// finish ends a stream that ended properly without saying why, as OpenRouter's Novita
// provider ends a tool call at [DONE] with no finish_reason: clients deciding whether to run
// tools read it, so the reason is tool_calls when calls went out, else stop.
func (s *sseWriter) finish() error {
	if s.finished {
		return nil
	}
	d := openai.Delta{FinishReason: openai.FinishStop}
	if s.calls.streamed() {
		d.FinishReason = openai.FinishToolCalls
	}
	return s.delta(&d, false, nil)
}

func (s *sseWriter) usage(u *openai.Usage) error {
	s.buf = s.enc.AppendUsage(s.buf[:0], u)
	return s.send()
}

func (s *sseWriter) done() error {
	s.buf = append(s.buf[:0], openai.Done...)
	return s.send()
}

func (s *sseWriter) fail(e *openai.Error) {
	s.buf = openai.AppendErrorEvent(s.buf[:0], e)
	_ = s.send()
}

func (s *sseWriter) send() error {
	if _, err := s.w.Write(s.buf); err != nil {
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

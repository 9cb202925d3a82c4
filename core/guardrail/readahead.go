package guardrail

import (
	"sync"

	"github.com/fngate/fngate/core/llm"
)

// readAhead reads the upstream on a goroutine of its own while a window is checked, so
// that a cloud guardrail's round trip does not stall an upstream faster than the service:
// what came during a check joins the next window instead of waiting for a check of its own.
// A stream that outpaces the service is then checked about once per round trip, not once
// per window. It holds at most limit characters; past that it stops reading, and the
// upstream waits as it would for a slow client.
//
// The goroutine alone calls the upstream's Next; whichever of it and Close comes last closes
// the upstream, so Next and Close never run at once. A reader waiting on a stalled upstream
// ends when the attempt's context does (the gateway cancels it as the attempt ends).
type readAhead struct {
	up    llm.Stream
	limit int
	wake  chan struct{} // cap 1: a delta or the end was queued
	room  chan struct{} // cap 1: the consumer took what was queued
	stop  chan struct{} // closed by Close

	mu      sync.Mutex
	queued  []llm.Delta
	chars   int
	err     error // the upstream's end (io.EOF) or failure, after the queued deltas
	running bool
	stopped bool
}

func newReadAhead(up llm.Stream, limit int) *readAhead {
	r := &readAhead{up: up, limit: limit, wake: make(chan struct{}, 1), room: make(chan struct{}, 1),
		stop: make(chan struct{}), running: true}
	go r.run()
	return r
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (r *readAhead) run() {
	defer r.exit()
	for {
		r.mu.Lock()
		full := r.chars >= r.limit
		r.mu.Unlock()
		if full {
			select {
			case <-r.room:
				continue
			case <-r.stop:
				return
			}
		}
		select {
		case <-r.stop:
			return
		default:
		}
		d, err := r.up.Next()
		r.mu.Lock()
		if err != nil {
			r.err = err
		} else {
			r.queued = append(r.queued, d)
			r.chars += deltaChars(&d)
		}
		r.mu.Unlock()
		signal(r.wake)
		if err != nil {
			return
		}
	}
}

// exit closes the upstream if Close came first.
func (r *readAhead) exit() {
	r.mu.Lock()
	r.running = false
	closeNow := r.stopped
	r.mu.Unlock()
	if closeNow {
		_ = r.up.Close()
	}
}

// take appends what has come since the last take to into, waiting for at least one delta or
// the end; err is the end (io.EOF) or the failure that followed them.
func (r *readAhead) take(into []llm.Delta) ([]llm.Delta, error) {
	for {
		r.mu.Lock()
		if len(r.queued) > 0 || r.err != nil {
			into = append(into, r.queued...)
			clear(r.queued)
			r.queued, r.chars = r.queued[:0], 0
			err := r.err
			r.mu.Unlock()
			signal(r.room)
			return into, err
		}
		r.mu.Unlock()
		<-r.wake
	}
}

// Close stops the reading and closes the upstream, at once if the goroutine has ended, else
// as it ends.
func (r *readAhead) Close() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	closeNow := !r.running
	r.mu.Unlock()
	close(r.stop)
	if closeNow {
		return r.up.Close()
	}
	return nil
}

func deltaChars(d *llm.Delta) int {
	n := len(d.Text) + len(d.Thinking) + len(d.Refusal)
	for i := range d.ToolCalls {
		n += len(d.ToolCalls[i].Arguments)
	}
	return n
}

package providers

import "github.com/fngate/fngate/core/llm"

// Lookahead gives a stream read from server-sent events an exact llm.Pending. The gateway
// flushes its writes to the client only when the upstream has nothing more in hand, so
// Pending must not say "more is coming" for buffered events that yield no delta (a ping, a
// block start, a role-only chunk): the client would then wait for a token the gateway is
// holding. Pending therefore decodes what is already buffered, event by event, until one
// yields a delta (or an error, or the end), and holds that for the next call to Next.
//
// A stream holds a Lookahead and implements Stepper. Its Next and Pending are
// then
//
//	func (s *stream) Next() (llm.Delta, error) { return s.look.Next(s) }
//	func (s *stream) Pending() bool           { return s.look.Pending(s, s.sse) }
//
// Deltas that alias the reader's buffers (llm.Delta.Raw) are valid until the next call to
// Next or Pending, which the llm.Pending contract allows.
type Lookahead struct {
	held  llm.Delta
	err   error
	ready bool // held or err is the next result
}

// Stepper is a stream read one event at a time.
type Stepper interface {
	// Step reads one event and translates it: ok false for an event that carries nothing
	// (the stream reads on), err for a failure or io.EOF for the proper end. It reads from
	// the network only when the event is not buffered.
	Step() (d llm.Delta, ok bool, err error)
}

// Next returns the held delta, or reads on until a step yields one.
func (l *Lookahead) Next(s Stepper) (llm.Delta, error) {
	if l.ready {
		d, err := l.held, l.err
		l.held, l.err, l.ready = llm.Delta{}, nil, false
		return d, err
	}
	for {
		d, ok, err := s.Step()
		if err != nil {
			return llm.Delta{}, err
		}
		if ok {
			return d, nil
		}
	}
}

// Pending reports whether the next delta is in hand: held already, or decoded now from
// events sse has buffered. It never waits on the network.
func (l *Lookahead) Pending(s Stepper, sse *SSEReader) bool {
	for !l.ready {
		if !sse.EventBuffered() {
			return false
		}
		d, ok, err := s.Step()
		if err != nil || ok {
			l.held, l.err, l.ready = d, err, true
		}
	}
	return true
}

package gateway

import (
	"context"
	"sync"
)

// backlog counts the background writes queued and not yet done (usage history, response
// cache), so that a platform that freezes the process between requests (Lambda) can wait
// for them before it may.
type backlog struct {
	mu      sync.Mutex
	pending int
	idle    []chan struct{} // waiters for pending to reach 0
}

func (b *backlog) add(n int) {
	b.mu.Lock()
	b.pending += n
	b.mu.Unlock()
}

// done notes that n writes are done (or dropped), waking the waiters at zero.
func (b *backlog) done(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending -= n
	if b.pending == 0 {
		for _, c := range b.idle {
			close(c)
		}
		b.idle = nil
	}
}

// wait returns once every write queued before it is done, or when ctx ends.
func (b *backlog) wait(ctx context.Context) error {
	b.mu.Lock()
	if b.pending == 0 {
		b.mu.Unlock()
		return nil
	}
	c := make(chan struct{})
	b.idle = append(b.idle, c)
	b.mu.Unlock()
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

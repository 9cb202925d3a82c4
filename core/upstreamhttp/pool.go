package upstreamhttp

import "time"

// idle is one host's connections between requests, the last given back on top: it is the one
// least likely to have been closed by the server, and those below it expire first.
type idle struct {
	conns []*conn
}

// take returns an idle connection to key that is still open, or nil. Connections idle past
// the idle timeout, and those the server closed, are closed on the way.
func (t *Transport) take(key hostKey) *conn {
	now := time.Now()
	for {
		t.mu.Lock()
		h := t.hosts[key]
		if h == nil || len(h.conns) == 0 {
			t.mu.Unlock()
			return nil
		}
		expired := h.expire(now, t.opt.IdleTimeout)
		var c *conn
		if n := len(h.conns); n > 0 {
			c = h.conns[n-1]
			h.conns[n-1] = nil
			h.conns = h.conns[:n-1]
		}
		t.mu.Unlock()
		for _, e := range expired {
			e.close()
		}
		if c == nil {
			return nil
		}
		if c.alive() {
			c.reused = true
			return c
		}
		c.close()
	}
}

// put gives c back to its host's idle connections, or closes it when they are full.
func (t *Transport) put(c *conn) {
	now := time.Now()
	c.idle = now
	t.mu.Lock()
	h := t.hosts[c.key]
	if h == nil {
		h = &idle{}
		t.hosts[c.key] = h
	}
	expired := h.expire(now, t.opt.IdleTimeout)
	full := len(h.conns) >= t.opt.MaxIdlePerHost
	if !full {
		h.conns = append(h.conns, c)
	}
	t.mu.Unlock()
	for _, e := range expired {
		e.close()
	}
	if full {
		c.close()
	}
}

// expire removes the connections idle for longer than timeout (the oldest, at the bottom)
// and returns them, to be closed outside the lock.
func (h *idle) expire(now time.Time, timeout time.Duration) []*conn {
	n := 0
	for n < len(h.conns) && now.Sub(h.conns[n].idle) > timeout {
		n++
	}
	if n == 0 {
		return nil
	}
	expired := append([]*conn(nil), h.conns[:n]...)
	rest := copy(h.conns, h.conns[n:])
	clear(h.conns[rest:])
	h.conns = h.conns[:rest]
	return expired
}

func (h *idle) closeAll() {
	for _, c := range h.conns {
		c.close()
	}
	h.conns = nil
}

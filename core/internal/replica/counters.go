package replica

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/fngate/fngate/core/counters"
)

// Counters is one counters table in a replica per region.
type Counters struct {
	link     *Link
	clock    atomic.Int64 // the writes' order, for last writer wins
	replicas []*CounterReplica
}

// NewCounters returns a table of n replicas joined by link.
func NewCounters(link *Link, n int) *Counters {
	t := &Counters{link: link}
	for range n {
		t.replicas = append(t.replicas, &CounterReplica{t: t, mem: counters.NewMemory(), stamp: map[string]int64{}})
	}
	return t
}

// Replica returns region i's replica, the store its gateway instances use.
func (t *Counters) Replica(i int) *CounterReplica { return t.replicas[i] }

// CounterReplica is one region's replica: a counters.Store whose writes are exact here (one
// region's writes are atomic on its replica, as DynamoDB's conditional writes are) and reach
// the other replicas as whole items, after the link's delay, the later write winning.
type CounterReplica struct {
	t     *Counters
	mu    sync.Mutex
	mem   *counters.Memory
	stamp map[string]int64 // key -> the stamp of the write its item holds
}

func (r *CounterReplica) Take(ctx context.Context, key string, w counters.Windows, amounts []counters.Amount) (counters.Counts, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok, err := r.mem.Take(ctx, key, w, amounts)
	if ok && err == nil {
		r.replicate(ctx, key, c.Windows)
	}
	return c, ok, err
}

func (r *CounterReplica) Add(ctx context.Context, key string, w counters.Windows, amounts []counters.Amount) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.mem.Add(ctx, key, w, amounts); err != nil {
		return err
	}
	r.replicate(ctx, key, w)
	return nil
}

func (r *CounterReplica) Read(ctx context.Context, key string, w counters.Windows) (counters.Counts, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mem.Read(ctx, key, w)
}

// replicate sends the key's item as it now stands here to the other replicas; r.mu is held.
func (r *CounterReplica) replicate(ctx context.Context, key string, w counters.Windows) {
	stamp := r.t.clock.Add(1)
	r.stamp[key] = stamp
	item, _ := r.mem.Read(ctx, key, w)
	for _, o := range r.t.replicas {
		if o != r {
			r.t.link.after(func() { o.overwrite(key, item, stamp) })
		}
	}
}

// overwrite replaces the key's item with a replicated one unless a later write is here.
func (r *CounterReplica) overwrite(key string, item counters.Counts, stamp int64) {
	ctx := context.Background()
	r.mu.Lock()
	defer r.mu.Unlock()
	if stamp < r.stamp[key] {
		return
	}
	r.stamp[key] = stamp
	cur, _ := r.mem.Read(ctx, key, item.Windows)
	var diff []counters.Amount
	for c, v := range item.Values {
		if d := v - cur.Values[c]; d != 0 {
			diff = append(diff, counters.Amount{Counter: c, N: d})
		}
	}
	for c, v := range cur.Values {
		if _, ok := item.Values[c]; !ok && v != 0 {
			diff = append(diff, counters.Amount{Counter: c, N: -v})
		}
	}
	_ = r.mem.Add(ctx, key, item.Windows, diff)
}

var _ counters.Store = (*CounterReplica)(nil)

package counters

import (
	"context"
	"sync"
)

// Memory is a Store in process memory: the counters of one instance, for tests, benchmarks and
// a single local server. On a function platform each instance would count alone, which is no
// limit at all.
type Memory struct {
	mu    sync.Mutex
	items map[string]*item
}

// NewMemory returns an empty store.
func NewMemory() *Memory { return &Memory{items: map[string]*item{}} }

func (m *Memory) item(key string) *item {
	it := m.items[key]
	if it == nil {
		it = &item{}
		m.items[key] = it
	}
	return it
}

func (m *Memory) Take(_ context.Context, key string, w Windows, amounts []Amount) (Counts, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.item(key).take(w, amounts)
	return c, ok, nil
}

func (m *Memory) Add(_ context.Context, key string, w Windows, amounts []Amount) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.item(key).add(w, amounts)
	return nil
}

func (m *Memory) Read(_ context.Context, key string, w Windows) (Counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.item(key).read(w), nil
}

var _ Store = (*Memory)(nil)
